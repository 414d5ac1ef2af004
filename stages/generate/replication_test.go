package generate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// TestEvalReplications checks the eval workload's replications: each is a
// workload of its own (other arrivals, other jobs, ids of its own), drawn
// as the first is (the same mix and rate), the first unchanged by the
// others, and the train workload untouched.
func TestEvalReplications(t *testing.T) {
	cfg := smallConfig(3000, 20_000)
	one := run(t, cfg, 7)
	dir := t.TempDir()
	if err := Run(context.Background(), cfg, 7, catalog.Zoo(), Output{Dir: dir, Metadata: testMeta, EvalReplications: 3}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{JobsFile(WorkloadTrain), generatespec.EvalJobsFile(1)} {
		a, _ := digest.File(filepath.Join(one, name))
		b, _ := digest.File(filepath.Join(dir, name))
		if a.SHA256 != b.SHA256 {
			t.Errorf("%s differs with three eval replications from one", name)
		}
	}
	reps := make([][]Job, 3)
	for r := range reps {
		var err error
		if reps[r], err = parquetio.ReadAll[Job](filepath.Join(dir, generatespec.EvalJobsFile(r+1))); err != nil {
			t.Fatal(err)
		}
		if len(reps[r]) != 20_000 {
			t.Fatalf("replication %d: %d jobs, want 20000", r+1, len(reps[r]))
		}
		if lo := int64(r+1) * MaxJobs; reps[r][0].ID != lo || reps[r][len(reps[r])-1].ID != lo+19_999 {
			t.Errorf("replication %d: ids %d…%d, want from %d", r+1, reps[r][0].ID, reps[r][len(reps[r])-1].ID, lo)
		}
	}
	for r := 1; r < 3; r++ {
		same := 0
		for i := range reps[r] {
			a, b := reps[0][i], reps[r][i]
			if a.ArrivalS == b.ArrivalS && a.Model == b.Model && a.BatchSize == b.BatchSize && a.Class == b.Class {
				same++
			}
		}
		if same > 200 {
			t.Errorf("replication %d repeats %d of the first's 20000 jobs: its streams are not its own", r+1, same)
		}
		// The same distribution: the mean gap and the interactive share
		// agree within sampling noise.
		if g0, g := reps[0][19_999].ArrivalS/20_000, reps[r][19_999].ArrivalS/20_000; g < 0.9*g0 || g > 1.1*g0 {
			t.Errorf("replication %d: mean gap %v, the first's %v", r+1, g, g0)
		}
	}
	stats, err := parquetio.ReadAll[Stat](filepath.Join(dir, StatsFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for _, s := range stats {
		if s.Workload == WorkloadEval && s.Statistic == StatJobs {
			seen[s.Replication] = true
		}
	}
	if len(seen) != 3 || !seen[1] || !seen[2] || !seen[3] {
		t.Errorf("stats.parquet counts the eval replications %v, want 1, 2 and 3", seen)
	}
}

// TestImportedEvalIsOneReplication checks that an imported eval workload
// is written once, however many replications schedule runs.
func TestImportedEvalIsOneReplication(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "eval.csv")
	if err := os.WriteFile(csv, []byte("arrival_s,model,batch_size,class\n0,mlp,1,interactive\n0.5,resnet18,2,batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := smallConfig(100, 1)
	cfg.Eval.Import = csv
	dir := t.TempDir()
	if err := Run(context.Background(), cfg, 1, catalog.Zoo(), Output{Dir: dir, EvalReplications: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, generatespec.EvalJobsFile(2))); !os.IsNotExist(err) {
		t.Errorf("an imported eval workload was written again for replication 2: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, generatespec.EvalJobsFile(1))); err != nil {
		t.Error(err)
	}
}
