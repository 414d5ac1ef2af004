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

// TestStudiesRunInReplications runs the prediction-error study in two of
// three replications: each condition once per replication, on that
// replication's jobs, with its own prediction MAPE, and the first
// replication's rows those of a run with the study in it alone (its
// units, and so its memo entries, are the same).
func TestStudiesRunInReplications(t *testing.T) {
	files := generateReplications(t, mlpWorkload(1500), 3, 3)
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: files[0], Workloads: files}
	study := func(reps int) []StudyRow {
		cfg := testConfig()
		cfg.Policies = []string{"fifo", "greedy"}
		cfg.Replications = 3
		cfg.Studies = Studies{Jobs: 1000, Replications: reps, PredictionErrors: []float64{0.5}}
		dir := t.TempDir()
		if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[StudyRow](filepath.Join(dir, StudiesFile))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	two, one := study(2), study(1)
	type cond struct {
		policy string
		e      float64
	}
	byRep := map[int32]map[cond]StudyRow{}
	for _, r := range two {
		if byRep[r.Replication] == nil {
			byRep[r.Replication] = map[cond]StudyRow{}
		}
		byRep[r.Replication][cond{r.Policy, r.PredictionError}] = r
	}
	if len(two) != 2*2*2 || len(byRep) != 2 || len(byRep[1]) != 4 || len(byRep[2]) != 4 {
		t.Fatalf("%d rows in replications %v, want 2 policies × 2 conditions in replications 1 and 2", len(two), byRep)
	}
	for _, r := range one {
		if r.Replication != 1 {
			t.Fatalf("one replication of the study wrote a row of replication %d", r.Replication)
		}
		if got := byRep[1][cond{r.Policy, r.PredictionError}]; got != r {
			t.Errorf("replication 1 with a second beside it: %+v, alone: %+v", got, r)
		}
	}
	for c, a := range byRep[1] {
		b := byRep[2][c]
		if a.MeanE2ES == b.MeanE2ES {
			t.Errorf("%+v: replications 1 and 2 ran alike (mean %v): the second did not run its own jobs", c, a.MeanE2ES)
		}
		if c.e > 0 && (a.PredictionMAPE == b.PredictionMAPE || math.Abs(b.PredictionMAPE-c.e/2) > 0.05) {
			t.Errorf("%+v: MAPE %v in replication 1 and %v in 2, want each its own, about %v", c, a.PredictionMAPE, b.PredictionMAPE, c.e/2)
		}
	}
}
