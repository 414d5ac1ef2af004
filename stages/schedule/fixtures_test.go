package schedule

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

var testMeta = map[string]string{
	parquetio.KeyStage:    "schedule",
	parquetio.KeyVersion:  "test-version",
	parquetio.KeyUpstream: "",
}

const ms = 1e-3

// samples makes one profile row per latency (in milliseconds).
func samples(kind, device, model, precision string, batch, threads, concurrency int, latMS ...float64) []profilespec.Sample {
	out := make([]profilespec.Sample, len(latMS))
	for i, l := range latMS {
		out[i] = profilespec.Sample{Kind: kind, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
			Device: device, Model: model, Precision: precision, Batch: int32(batch), Threads: int32(threads),
			Concurrency: int32(concurrency), Repeat: int32(i), LatencyS: l * ms, Source: profilespec.SourceMeasured}
	}
	return out
}

func inference(device, model, precision string, batch int, latMS ...float64) []profilespec.Sample {
	return samples(profilespec.KindInference, device, model, precision, batch, 1, 1, latMS...)
}

// constantProfile times mlp in fp32 on "cpu" at 10 ms for every run of a
// batch of 1: with one measured size, a batch of b takes b·10 ms, exactly,
// whatever the draw.
func constantProfile() []profilespec.Sample {
	return inference("cpu", "mlp", profilespec.FP32, 1, 10, 10, 10)
}

// writeSamples writes a samples.parquet into a fresh directory.
func writeSamples(t testing.TB, s []profilespec.Sample) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), profilespec.SamplesFile)
	if err := parquetio.WriteFile(path, s, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeJobs writes hand-made jobs as a jobs-eval.parquet, filling in the
// deadline.
func writeJobs(t testing.TB, jobs []generate.Job) string {
	t.Helper()
	for i := range jobs {
		jobs[i].DeadlineS = jobs[i].ArrivalS + jobs[i].SLOS
	}
	path := filepath.Join(t.TempDir(), generatespec.JobsFile(generatespec.WorkloadEval))
	if err := parquetio.WriteFile(path, jobs, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// generateJobs runs the generate stage with cfg and returns its eval file.
func generateJobs(t testing.TB, cfg generate.Config, seed int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := generate.Run(context.Background(), cfg, seed, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadEval))
}

// mlpWorkload is generate's default with only the mlp, whose jobs the
// small profiles here cover, in both precisions.
func mlpWorkload(jobs int64) generate.Config {
	cfg := generate.DefaultConfig()
	cfg.Train.Jobs, cfg.Eval.Jobs = 1, jobs
	cfg.Models = map[string]float64{"mlp": 1}
	return cfg
}

// oneDevice is a config with a single measured cpu device of the given
// lanes and memory.
func oneDevice(lanes int, memoryMiB float64, policies ...string) Config {
	cfg := testConfig()
	cfg.Policies = policies
	cfg.Cluster = []Device{{Name: "cpu", Kind: KindMeasured, ProfileDevice: "cpu", Threads: 1, Lanes: lanes, MemoryMiB: memoryMiB, Speed: 1}}
	return cfg
}

// output holds what one Run wrote.
type output struct {
	dir     string
	cluster []ClusterRow
	bounds  BoundsRow   // the first replication's
	reps    []BoundsRow // every replication's, in order
	traces  map[string][]TraceRow
	batches map[string][]BatchRow
}

func runStage(t testing.TB, cfg Config, seed int64, samplesPath, jobsPath string) output {
	t.Helper()
	dir := t.TempDir()
	if err := Run(context.Background(), cfg, seed, Inputs{Models: catalogtest.ZooFile(t), Samples: samplesPath, Jobs: jobsPath}, Output{Dir: dir, Metadata: testMeta}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return readOutput(t, cfg, dir)
}

// readOutput reads what Run wrote into dir.
func readOutput(t testing.TB, cfg Config, dir string) output {
	t.Helper()
	o := output{dir: dir, traces: map[string][]TraceRow{}, batches: map[string][]BatchRow{}}
	var err error
	if o.cluster, err = parquetio.ReadAll[ClusterRow](filepath.Join(dir, ClusterFile)); err != nil {
		t.Fatal(err)
	}
	b, err := parquetio.ReadAll[BoundsRow](filepath.Join(dir, BoundsFile))
	if err != nil || len(b) != cfg.Replications {
		t.Fatalf("bounds: %d rows for %d replications, %v", len(b), cfg.Replications, err)
	}
	for k, r := range b {
		if r.Replication != int32(k+1) {
			t.Fatalf("bounds row %d is replication %d", k+1, r.Replication)
		}
	}
	o.bounds, o.reps = b[0], b
	for _, p := range cfg.Policies {
		for k := 1; k <= cfg.Replications; k++ {
			key := replicationKey(p, k)
			if o.traces[key], err = parquetio.ReadAll[TraceRow](filepath.Join(dir, ReplicationFile(p, k, TraceFile))); err != nil {
				t.Fatal(err)
			}
			if o.batches[key], err = parquetio.ReadAll[BatchRow](filepath.Join(dir, ReplicationFile(p, k, DevicesFile))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return o
}

// replicationKey names replication k of a policy in output's maps: the
// policy itself for the first.
func replicationKey(policy string, k int) string {
	if k == 1 {
		return policy
	}
	return fmt.Sprintf("%s#%d", policy, k)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(a), math.Abs(b)) }

// noisyProfile times the mlp in both precisions at batches 1 and 8 with
// spread, and its contention at 1 and 2 sessions.
func noisyProfile() []profilespec.Sample {
	var s []profilespec.Sample
	for _, p := range []string{profilespec.FP32, profilespec.FP16} {
		s = append(s, inference("cpu", "mlp", p, 1, 1.0, 1.2, 0.9, 1.5, 1.1)...)
		s = append(s, inference("cpu", "mlp", p, 8, 3, 3.5, 4, 3.2)...)
	}
	s = append(s, samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 1, 1, 1.1, 0.9)...)
	s = append(s, samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 2, 1.3, 1.4, 1.2)...)
	return s
}

// digests returns the raw SHA-256 of every file under dir by relative path.
func digests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		dg, err := digest.File(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = dg.SHA256
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testConfig is DefaultConfig without the sweep, which tests of the sweep
// turn on themselves.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Sweep.Loads, cfg.Sweep.Tolerance = nil, 0
	// One replication of the workload as given, at schedule.load: the
	// tests here check the simulation of known jobs and times.
	cfg.Replications, cfg.Utilization = 1, 0
	// The profile's own means: the tests here check the simulation, and
	// TestLearnedPredictor the learned predictor.
	cfg.Predictor = PredictorTable
	// No learned policy, which needs onnxruntime and a network:
	// TestLearnedPolicy runs it.
	cfg.Policies = slices.DeleteFunc(cfg.Policies, func(p string) bool { return p == "learned" })
	cfg.Studies = Studies{} // TestStudies runs them
	cfg.Real = Real{}       // the command's end-to-end test runs them
	return cfg
}
