package schedule

import (
	"context"
	"errors"
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
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"

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
	var cpu time.Duration
	var err error
	for b.Loop() {
		peak = memstat.PeakHeap(func() {
			var used time.Duration
			used, err = stageCPU(cfg, in, dir)
			cpu += used
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	total := float64(jobs * len(policies))
	b.ReportMetric(total*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	if cpu > 0 {
		b.ReportMetric(total*float64(b.N)/cpu.Seconds(), "jobs/cpu-s")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/total, "ns/job")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(policyFileBytes(b, dir, policies, TraceFile))/total, "trace-B/job")
	b.ReportMetric(float64(policyFileBytes(b, dir, policies, DevicesFile))/total, "devices-B/job")
}

// stageCPU runs the stage once into dir and returns the CPU time the
// process used meanwhile, every thread's (0 where it cannot be read).
func stageCPU(cfg Config, in Inputs, dir string) (time.Duration, error) {
	before, ok := memstat.CPU()
	err := Run(context.Background(), cfg, 1, in, Output{Dir: dir, Metadata: testMeta})
	after, _ := memstat.CPU()
	if !ok {
		return 0, err
	}
	return after - before, err
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
// in the loop: generate's default eval workload (a replication's 20,000
// jobs, simulated in each of the default twenty replications, so 400,000
// jobs) on the default cluster and load, with the measured default
// profile in stages/train/predictorfit/testdata and the placement network
// the default pipeline trained (testdata/placement.onnx). Each iteration
// runs the whole stage, trace writing included, under each of these in
// turn, so that the ratios are side by side on the same machine at the
// same moment: edf+migrate (the Threshold rule), learned as configured
// by default (the Go forward pass guarded by onnxruntime, the decision
// cache and its audit on), learned with every decision through
// onnxruntime (schedule.learned.evaluator: the same simulation, byte for
// byte), and learned with a batching window of 1 ms (another simulation:
// decisions wait to be batched). It reports each one's jobs/s, the
// learned runs' jobs/s over edf+migrate's (the target is learned
// ≥ 0.8 of edf+migrate), the same ratios of the process's CPU time (user
// and system: steadier than the wall clock on a shared machine), and
// learned's decisions/s. Run it with -benchtime 1x.
func BenchmarkLearnedSimulation(b *testing.B) {
	base, in := learnedBenchConfig(b)
	jobs := float64(generate.DefaultConfig().Eval.Jobs) * float64(base.Replications)
	runs := []struct {
		name string // a metric's prefix
		set  func(*Config)
	}{
		{"edf+migrate", func(c *Config) { c.Policies = []string{"edf+migrate"} }},
		{"learned", func(c *Config) { c.Policies = []string{"learned"} }},
		{"learned-ort", func(c *Config) {
			c.Policies, c.Learned.Evaluator = []string{"learned"}, schedulespec.EvaluatorONNXRuntime
		}},
		{"learned-window", func(c *Config) { c.Policies, c.Learned.Window = []string{"learned"}, time.Millisecond }},
	}
	took, cpu := make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
	var decisions int64
	for b.Loop() {
		for i, r := range runs {
			cfg := base
			r.set(&cfg)
			dir := b.TempDir()
			start, cpu0 := time.Now(), cpuNow(b)
			if err := Run(context.Background(), cfg, 1, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
				b.Fatalf("%s: %v", r.name, err)
			}
			took[i] += time.Since(start)
			cpu[i] += cpuNow(b) - cpu0
			if r.name == "learned" {
				decisions += servedDecisions(b, dir, cfg)
			}
		}
	}
	for i, r := range runs {
		b.ReportMetric(jobs*float64(b.N)/took[i].Seconds(), r.name+"-jobs/s")
		if i > 0 {
			b.ReportMetric(took[0].Seconds()/took[i].Seconds(), r.name+"/edf+migrate")
			b.ReportMetric(cpu[0].Seconds()/cpu[i].Seconds(), r.name+"/edf+migrate-cpu")
		}
	}
	b.ReportMetric(float64(decisions)/took[1].Seconds(), "learned-decisions/s")
}

// cpuNow is memstat.CPU, or a failed benchmark where it cannot be had.
func cpuNow(b *testing.B) time.Duration {
	t, ok := memstat.CPU()
	if !ok {
		b.Fatal("no process CPU time on this platform")
	}
	return t
}

// BenchmarkNetMigrator replays the decisions the learned policy asked in
// the first replication of BenchmarkLearnedSimulation's workload (about
// 5,700 in 4,900 batches) through a fresh migrator each iteration, with
// each evaluator: what serving costs a decision in the simulation's own
// sequence of batches, cache and audit included, without the rest of the
// simulation and its noise. The migrator's loading is not timed.
func BenchmarkNetMigrator(b *testing.B) {
	lib, src := orttest.Library(b)
	if _, err := ort.Init(lib, src); err != nil {
		b.Fatal(err)
	}
	cfg, in := learnedBenchConfig(b)
	batches := askedDecisions(b, cfg, in)
	model, err := os.ReadFile(in.Placement)
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for _, fs := range batches {
		n += len(fs)
	}
	out := make([]bool, cfg.Learned.Batch)
	for _, ev := range schedulespec.Evaluators {
		b.Run(ev, func(b *testing.B) {
			l := cfg.Learned
			l.Evaluator = ev
			for b.Loop() {
				b.StopTimer()
				m, err := newNetMigrator(model, l)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for _, fs := range batches {
					m.MigrateBatch(fs, out[:len(fs)])
				}
				b.StopTimer()
				if err := errors.Join(m.err, m.close()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/decision")
		})
	}
}

// learnedBenchConfig is BenchmarkLearnedSimulation's stage config and
// inputs: generate's default eval workload, the measured default profile
// and the default pipeline's network, one simulation of the policies'
// replications and nothing else.
func learnedBenchConfig(b *testing.B) (Config, Inputs) {
	lib, src := orttest.Library(b)
	gen := generate.DefaultConfig()
	gen.Train.Jobs = 1
	in := Inputs{Models: catalogtest.ZooFile(b), Jobs: generateJobs(b, gen, 1), Samples: "../train/predictorfit/testdata/samples-default.parquet",
		Placement: "testdata/placement.onnx", ORTLib: lib, ORTSource: src}
	cfg := DefaultConfig()
	cfg.Predictor = PredictorTable
	cfg.Sweep.Loads, cfg.Sweep.Tolerance = nil, 0
	cfg.Studies = Studies{} // the policy's replications alone, nothing else
	cfg.Real = Real{}
	cfg.Learned.Ablations = false
	return cfg, in
}

// askedDecisions simulates the first replication of learned on cfg and
// in as the stage does, and returns the batches of decisions it asked,
// each copied with its job.
func askedDecisions(b *testing.B, cfg Config, in Inputs) [][]sim.MigrationFeatures {
	cfg.Policies = []string{"learned"}
	samples, err := parquetio.ReadAll[profilespec.Sample](in.Samples)
	if err != nil {
		b.Fatal(err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Read(in.Models)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := newCluster(cfg, cat, table, in)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	reps, err := replications(context.Background(), cfg, cl, in)
	if err != nil {
		b.Fatal(err)
	}
	u := Unit{Spec: "learned", Replication: 1, Load: reps[0].load, Predictor: cfg.Predictor}
	simSeed, policySeed := u.seeds(1)
	built, err := cl.Build(cluster.Simulation{Spec: u.Spec, SimSeed: simSeed, PolicySeed: policySeed, Predictor: u.Predictor})
	if err != nil {
		b.Fatal(err)
	}
	rec := &askRecorder{BatchMigrator: built.Config.Migration.Decide.(sim.BatchMigrator)}
	built.Config.Migration.Decide = rec
	r, err := cl.OpenJobs(reps[0].jobs, u.Load, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	next := func() (*sim.Job, bool) {
		j, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		return j, j != nil
	}
	if _, err := sim.Run(built.Config, next, func(*sim.Record) error { return nil }); err != nil {
		b.Fatal(err)
	}
	if mig, ok := built.Migrator.(*netMigrator); ok {
		if err := errors.Join(mig.err, mig.close()); err != nil {
			b.Fatal(err)
		}
	}
	return rec.batches
}

// askRecorder keeps a copy of every batch of decisions it passes on.
type askRecorder struct {
	sim.BatchMigrator
	batches [][]sim.MigrationFeatures
}

func (a *askRecorder) MigrateBatch(fs []sim.MigrationFeatures, out []bool) {
	c := slices.Clone(fs)
	for i := range c {
		j := *c[i].Job
		c[i].Job = &j
	}
	a.batches = append(a.batches, c)
	a.BatchMigrator.MigrateBatch(fs, out)
}

// servedDecisions sums the decisions the serving file of cfg's one
// learned policy counts over its replications.
func servedDecisions(b *testing.B, dir string, cfg Config) int64 {
	rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dir, cfg.Policies[0], ServingFile))
	if err != nil {
		b.Fatal(err)
	}
	if len(rows) != cfg.Replications {
		b.Fatalf("%d serving rows, want one for each of %d replications", len(rows), cfg.Replications)
	}
	var n int64
	for _, r := range rows {
		n += r.Decisions
	}
	return n
}
