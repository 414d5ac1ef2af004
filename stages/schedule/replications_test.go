package schedule

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// generateReplications runs the generate stage with reps eval
// replications and returns each one's jobs file.
func generateReplications(t *testing.T, cfg generate.Config, seed int64, reps int) []string {
	t.Helper()
	dir := t.TempDir()
	if err := generate.Run(context.Background(), cfg, seed, catalog.Zoo(), generate.Output{Dir: dir, EvalReplications: reps}); err != nil {
		t.Fatal(err)
	}
	files := generatespec.EvalReplicationFiles(cfg, reps)
	for i, f := range files {
		files[i] = filepath.Join(dir, f)
	}
	return files
}

// TestReplicationsRunTheirOwnWorkloads runs three replications, each on
// its own eval workload: a replication's trace holds its workload's jobs,
// its bounds are its workload's, and within a replication every policy
// sees the same jobs (common random numbers).
func TestReplicationsRunTheirOwnWorkloads(t *testing.T) {
	files := generateReplications(t, mlpWorkload(1500), 3, 3)
	cfg := testConfig()
	cfg.Policies = []string{"fifo", "greedy"}
	cfg.Replications = 3
	dir := t.TempDir()
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: files[0], Workloads: files}
	if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
		t.Fatal(err)
	}
	o := readOutput(t, cfg, dir)
	cl, err := cluster.Open(cfg, catalog.Zoo(), in.Samples)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		want, err := cl.Bounds(context.Background(), files[k-1], cfg.Load, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.reps[k-1]; got.Jobs != want.Jobs || got.ArrivalLBS != want.ArrivalLBS || got.WorkS != want.WorkS {
			t.Errorf("replication %d: bounds %+v, its workload's %+v", k, got, want)
		}
		lo := int64(k) * generate.MaxJobs
		for _, p := range cfg.Policies {
			tr := o.traces[replicationKey(p, k)]
			if len(tr) != 1500 || tr[0].JobID < lo || tr[0].JobID >= lo+generate.MaxJobs {
				t.Fatalf("%s replication %d: %d rows from job %d, want its workload's 1500 jobs from %d", p, k, len(tr), tr[0].JobID, lo)
			}
		}
		arrivals := func(p string) map[int64]float64 {
			m := map[int64]float64{}
			for _, r := range o.traces[replicationKey(p, k)] {
				m[r.JobID] = r.ArrivalS
			}
			return m
		}
		if a, b := arrivals("fifo"), arrivals("greedy"); !maps.Equal(a, b) {
			t.Errorf("replication %d: fifo and greedy ran other jobs", k)
		}
	}
	if o.reps[0].ArrivalLBS == o.reps[1].ArrivalLBS {
		t.Error("replications 1 and 2 have the same arrivals")
	}
	runs, err := parquetio.ReadAll[RunRow](filepath.Join(dir, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Jobs != o.reps[r.Replication-1].Jobs {
			t.Errorf("runs.parquet: %s replication %d has %d jobs, its bounds %d", r.Policy, r.Replication, r.Jobs, o.reps[r.Replication-1].Jobs)
		}
	}
}

// TestUtilizationOffersAFractionOfCapacity sets the main comparison's load
// as a fraction of the cluster's capacity: two workloads whose arrival
// rates differ fourfold are offered at the same fraction, at loads a
// quarter apart, and bounds.parquet says so.
func TestUtilizationOffersAFractionOfCapacity(t *testing.T) {
	slow := mlpWorkload(2000)
	fast := mlpWorkload(2000)
	fast.Eval.Arrival.Rate *= 4
	prof := writeSamples(t, noisyProfile())
	cfg := testConfig()
	cfg.Policies = []string{"fifo"}
	cfg.Utilization = 0.6
	loads := map[string]float64{}
	for name, gen := range map[string]generate.Config{"slow": slow, "fast": fast} {
		jobs := generateJobs(t, gen, 2)
		o := runStage(t, cfg, 1, prof, jobs)
		b := o.bounds
		if math.Abs(b.OfferedLoad-0.6) > 1e-12 {
			t.Errorf("%s: offered load %v, want 0.6", name, b.OfferedLoad)
		}
		cl, err := cluster.Open(cfg, catalog.Zoo(), prof)
		if err != nil {
			t.Fatal(err)
		}
		perUnit, _, err := cl.Capacity(context.Background(), jobs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b.Load-0.6*perUnit) > 1e-9*b.Load {
			t.Errorf("%s: load %v, want 0.6 × %v", name, b.Load, perUnit)
		}
		loads[name] = b.Load
	}
	if r := loads["slow"] / loads["fast"]; r < 3.5 || r > 4.5 {
		t.Errorf("loads slow %v, fast %v: their ratio %v, want about 4", loads["slow"], loads["fast"], r)
	}
}
