package schedule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/pipeline/memstat"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/spec/profilespec"

	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/policy"
)

// benchProfile is a plausible single-threaded CPU profile of every catalog
// model in both precisions at batches 1, 4 and 16: a fixed overhead plus
// per-sample work (fp16 half again as slow, as on a CPU without fp16
// kernels), five noisy repeats each, and contention at 1, 2 and 4
// sessions.
func benchProfile() []profilespec.Sample {
	perSampleMS := map[string]float64{"mlp": 0.02, "resnet18": 30, "resnet50": 75, "vit": 20}
	var s []profilespec.Sample
	for _, m := range catalog.Zoo().Names() {
		for _, p := range []string{profilespec.FP32, profilespec.FP16} {
			slow := 1.0
			if p == profilespec.FP16 {
				slow = 1.5
			}
			for _, b := range []int{1, 4, 16} {
				mean := (0.05 + float64(b)*perSampleMS[m]) * slow
				s = append(s, inference("cpu", m, p, b, mean*0.9, mean*0.95, mean, mean*1.05, mean*1.1)...)
			}
		}
	}
	s = append(s, samples(profilespec.KindContention, "cpu", "resnet18", profilespec.FP32, 1, 1, 1, 30, 31, 29)...)
	s = append(s, samples(profilespec.KindContention, "cpu", "resnet18", profilespec.FP32, 1, 1, 2, 34, 35, 33)...)
	s = append(s, samples(profilespec.KindContention, "cpu", "resnet18", profilespec.FP32, 1, 1, 4, 62, 60, 64)...)
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
	cfg, in := stageWorkload(b, jobs)
	// Every policy but learned, which BenchmarkLearnedSimulation times
	// with its network.
	names := slices.DeleteFunc(policy.Names(), func(p string) bool { return p == "learned" })
	sets := [][]string{}
	for _, p := range names {
		sets = append(sets, []string{p})
	}
	sets = append(sets, names)
	for _, ps := range sets {
		name := ps[0]
		if len(ps) > 1 {
			name = "all=" + strings.Join(ps, "+")
		}
		b.Run(name, func(b *testing.B) { runStageBench(b, cfg, in, ps, jobs) })
	}
}

// BenchmarkScheduleStageScale shows how the whole stage's cost grows with
// the workload: ns/job should stay flat from 10⁵ to 10⁷ jobs (each at 80%
// load, so queues stay bounded), and so should the peak heap.
func BenchmarkScheduleStageScale(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			cfg, in := stageWorkload(b, n)
			for _, p := range []string{"fifo", "edf"} {
				b.Run(p, func(b *testing.B) { runStageBench(b, cfg, in, []string{p}, n) })
			}
		})
	}
}

// stageWorkload generates n eval jobs of generate's default mix and a
// benchmark profile, and returns the default config with the load that
// offers them at 80% of the default cluster's capacity.
func stageWorkload(b *testing.B, n int) (Config, Inputs) {
	gen := generate.DefaultConfig()
	gen.Train.Jobs, gen.Eval.Jobs = 1, int64(n)
	in := Inputs{Models: catalogtest.ZooFile(b), Jobs: generateJobs(b, gen, 1), Samples: writeSamples(b, benchProfile())}
	cfg := testConfig()
	load, err := loadFor(cfg, in.Samples, in.Jobs, 0.8)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Load = load
	b.Logf("load %.3f puts %d jobs at 80%% of the cluster's capacity", load, n)
	return cfg, in
}

// runStageBench times the stage running the given policies on jobs jobs.
func runStageBench(b *testing.B, cfg Config, in Inputs, policies []string, jobs int) {
	cfg.Policies = policies
	dir := b.TempDir()
	var peak uint64
	var err error
	for b.Loop() {
		peak = memstat.PeakHeap(func() {
			err = Run(context.Background(), cfg, 1, in, Output{Dir: dir, Metadata: testMeta})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	total := float64(jobs * len(policies))
	b.ReportMetric(total*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/total, "ns/job")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(policyFileBytes(b, dir, policies, TraceFile))/total, "trace-B/job")
	b.ReportMetric(float64(policyFileBytes(b, dir, policies, DevicesFile))/total, "devices-B/job")
}

// policyFileBytes sums the sizes of one file of each policy.
func policyFileBytes(b *testing.B, dir string, policies []string, name string) int64 {
	var n int64
	for _, p := range policies {
		st, err := os.Stat(filepath.Join(dir, ReplicationFile(p, 1, name)))
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// loadFor returns the load factor that offers the workload at the given
// fraction of what the cluster can do: the bound's work over the span of
// arrivals.
func loadFor(cfg Config, samplesPath, jobsPath string, utilization float64) (float64, error) {
	cfg.Load = 1
	cl, err := cluster.Open(cfg, catalog.Zoo(), samplesPath)
	if err != nil {
		return 0, err
	}
	bd, err := cl.Bounds(context.Background(), jobsPath, cfg.Load, 0)
	if err != nil {
		return 0, err
	}
	return utilization * bd.ArrivalLBS / bd.WorkLBS, nil
}

// BenchmarkLearnedSimulation is the figure for learned decisions
// in the loop: generate's default eval workload (200,000 jobs) on the
// default cluster and load, with the measured default profile in
// stages/train/predictorfit/testdata and the placement network the default
// pipeline trained (testdata/placement.onnx), simulated under learned
// (every migration decision through onnxruntime, the decision cache and
// its audit on) and, side by side, under edf+migrate (the Threshold rule)
// and learned with a batching window of 1 ms: jobs/s of the whole stage,
// and decisions/s for learned. Run it with -benchtime 1x.
func BenchmarkLearnedSimulation(b *testing.B) {
	lib, src := orttest.Library(b)
	gen := generate.DefaultConfig()
	gen.Train.Jobs = 1
	in := Inputs{Models: catalogtest.ZooFile(b), Jobs: generateJobs(b, gen, 1), Samples: "../train/predictorfit/testdata/samples-default.parquet",
		Placement: "testdata/placement.onnx", ORTLib: lib, ORTSource: src}
	cfg := DefaultConfig()
	cfg.Predictor = PredictorTable
	cfg.Sweep.Loads, cfg.Sweep.Tolerance = nil, 0
	cfg.Studies = Studies{} // one simulation of the whole workload, nothing else
	cfg.Real = Real{}
	for _, p := range []string{"learned", "edf+migrate", "learned window=1ms"} {
		b.Run(p, func(b *testing.B) {
			p, window, _ := strings.Cut(p, " window=")
			cfg.Learned.Window = 0
			if window != "" {
				w, err := time.ParseDuration(window)
				if err != nil {
					b.Fatal(err)
				}
				cfg.Learned.Window = w
			}
			cfg.Policies = []string{p}
			dir := b.TempDir()
			for b.Loop() {
				if err := Run(context.Background(), cfg, 1, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(gen.Eval.Jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			if p == "learned" {
				rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dir, p, ServingFile))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(rows[0].Decisions)*float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
				b.ReportMetric(rows[0].HitRate, "hit-rate")
			}
		})
	}
}
