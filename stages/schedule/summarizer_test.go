package schedule

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// TestSummarizerReadsAsTheFiles: a sweep point's summarizer holds, field
// for field and bit for bit, the Trace and busy times that
// metrics.ReadTrace and metrics.ReadBusy read from the recorder's files of
// the same simulation, for policies that batch, split, migrate, place at
// random and reject (a device too small for the largest batches), so the
// sweep's summaries are what they were when it wrote and read the files.
func TestSummarizerReadsAsTheFiles(t *testing.T) {
	cfg, cl, jobsPath := rejectingFixture(t)
	devices := []string{"small", "fast"}
	for _, spec := range rejectingPolicies {
		t.Run(spec, func(t *testing.T) {
			u := Unit{Spec: spec, Replication: 2, Load: cfg.Load, Predictor: cfg.Predictor}
			dir := filepath.Join(t.TempDir(), spec)
			if err := runUnit(context.Background(), u, cfg, cl, 7, jobsPath, 3000, filesIn(dir, nil), &progress{}, nil); err != nil {
				t.Fatal(err)
			}
			want, err := metrics.ReadTrace(filepath.Join(dir, TraceFile), devices)
			if err != nil {
				t.Fatal(err)
			}
			wantBusy, err := metrics.ReadBusy(filepath.Join(dir, DevicesFile), devices)
			if err != nil {
				t.Fatal(err)
			}
			sm := &summarizer{trace: metrics.NewTrace(spec, devices, 3000), busy: make([]float64, 2)}
			open := func(string, *cluster.Cluster) (sink, error) { return sm, nil }
			if err := runUnit(context.Background(), u, cfg, cl, 7, jobsPath, 3000, unitOutput{open: open}, &progress{}, nil); err != nil {
				t.Fatal(err)
			}
			if err := sm.trace.Finish(); err != nil {
				t.Fatal(err)
			}
			rejected := 0
			for _, r := range want.Rejected {
				if r {
					rejected++
				}
			}
			if rejected == 0 || rejected == want.Len() {
				t.Errorf("%d of %d jobs rejected; the test wants some", rejected, want.Len())
			}
			if !reflect.DeepEqual(sm.trace, want) {
				t.Errorf("the summarizer's trace differs from the file's")
			}
			if !reflect.DeepEqual(sm.busy, wantBusy) {
				t.Errorf("busy %v, the devices file's %v", sm.busy, wantBusy)
			}
		})
	}
}

// rejectingPolicies batch, split, migrate and place at random; on
// rejectingFixture's cluster some of their jobs are rejected.
var rejectingPolicies = []string{"fifo", "random", "edf+batch+split+migrate", "round_robin+migrate"}

// rejectingFixture is a cluster of two devices too small for the largest
// batches of 3000 mlp jobs, with the curves the simulations need resolved.
func rejectingFixture(t *testing.T) (Config, *cluster.Cluster, string) {
	t.Helper()
	cfg := testConfig()
	cfg.Cluster = []Device{
		{Name: "small", Kind: KindMeasured, ProfileDevice: "cpu", Threads: 1, Lanes: 2, MemoryMiB: 100, Speed: 1},
		{Name: "fast", Kind: KindDeclared, ProfileDevice: "cpu", Threads: 1, Lanes: 1, MemoryMiB: 100, Speed: 3},
	}
	cfg.Load = 3
	cfg.Memory.PerSampleMiB = map[string]float64{"mlp": 10} // batches over 9 samples fit nowhere
	jobsPath := generateJobs(t, mlpWorkload(3000), 5)
	cat, err := catalog.Read(catalogtest.ZooFile(t))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := parquetio.ReadAll[profilespec.Sample](writeSamples(t, noisyProfile()))
	if err != nil {
		t.Fatal(err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newCluster(cfg, cat, table, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	// The bounds pass resolves the curves the simulations ask for.
	if _, err := cl.Bounds(context.Background(), jobsPath, cfg.Load, 3000); err != nil {
		t.Fatal(err)
	}
	return cfg, cl, jobsPath
}
