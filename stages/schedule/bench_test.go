package schedule

import (
	"context"
	"github.com/mlsched/mlsched/pipeline/memstat"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/catalog"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/profile"
	"github.com/mlsched/mlsched/stages/schedule/policy"
	"github.com/mlsched/mlsched/stages/schedule/service"
)

// benchProfile is a plausible single-threaded CPU profile of every catalog
// model in both precisions at batches 1, 4 and 16: a fixed overhead plus
// per-sample work (fp16 half again as slow, as on a CPU without fp16
// kernels), five noisy repeats each, and contention at 1, 2 and 4
// sessions.
func benchProfile() []profile.Sample {
	perSampleMS := map[string]float64{"mlp": 0.02, "resnet18": 30, "resnet50": 75, "vit": 20}
	var s []profile.Sample
	for _, m := range catalog.Names() {
		for _, p := range []string{profile.FP32, profile.FP16} {
			slow := 1.0
			if p == profile.FP16 {
				slow = 1.5
			}
			for _, b := range []int{1, 4, 16} {
				mean := (0.05 + float64(b)*perSampleMS[m]) * slow
				s = append(s, inference("cpu", m, p, b, mean*0.9, mean*0.95, mean, mean*1.05, mean*1.1)...)
			}
		}
	}
	s = append(s, samples(profile.KindContention, "cpu", "resnet18", profile.FP32, 1, 1, 1, 30, 31, 29)...)
	s = append(s, samples(profile.KindContention, "cpu", "resnet18", profile.FP32, 1, 1, 2, 34, 35, 33)...)
	s = append(s, samples(profile.KindContention, "cpu", "resnet18", profile.FP32, 1, 1, 4, 62, 60, 64)...)
	return s
}

// BenchmarkScheduleStage runs the whole stage on a million eval jobs of
// generate's default mix on the default cluster, offered at 80% of the
// bound's capacity: each policy alone, then all of them (at most GOMAXPROCS at
// once). Reading the jobs, simulating and writing the traces are all
// timed. jobs/s counts simulated jobs, summed over the policies run;
// peak-heap-MiB is the largest live heap sampled during the last run.
func BenchmarkScheduleStage(b *testing.B) {
	const jobs = 1_000_000
	gen := generate.DefaultConfig()
	gen.Train.Jobs, gen.Eval.Jobs = 1, jobs
	jobsPath := generateJobs(b, gen, 1)
	samplesPath := writeSamples(b, benchProfile())

	cfg := DefaultConfig()
	load, err := loadFor(cfg, samplesPath, jobsPath, 0.8)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Load = load
	b.Logf("load %.3f puts the workload at 80%% of the cluster's capacity", load)

	sets := [][]string{}
	for _, p := range policy.Names() {
		sets = append(sets, []string{p})
	}
	sets = append(sets, policy.Names())
	for _, ps := range sets {
		name := ps[0]
		if len(ps) > 1 {
			name = "all=" + strings.Join(ps, "+")
		}
		b.Run(name, func(b *testing.B) {
			c := cfg
			c.Policies = ps
			dir := b.TempDir()
			var peak uint64
			for b.Loop() {
				peak = memstat.PeakHeap(func() {
					err = Run(context.Background(), c, 1, Inputs{Samples: samplesPath, Jobs: jobsPath}, Output{Dir: dir, Metadata: testMeta})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(jobs*len(ps))*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// loadFor returns the load factor that offers the workload at the given
// fraction of what the cluster can do: the bound's work over the span of
// arrivals.
func loadFor(cfg Config, samplesPath, jobsPath string, utilization float64) (float64, error) {
	s, err := parquetio.ReadAll[profile.Sample](samplesPath)
	if err != nil {
		return 0, err
	}
	tab, err := service.NewTable(s)
	if err != nil {
		return 0, err
	}
	cl, err := newCluster(cfg, tab)
	if err != nil {
		return 0, err
	}
	bd, err := computeBounds(context.Background(), cl, jobsPath, 1)
	if err != nil {
		return 0, err
	}
	return utilization * bd.ArrivalLBS / bd.WorkLBS, nil
}
