package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// TestGenerateEstimate: a synthetic workload is estimated by its jobs, an
// imported one by its file's size (the jobs key is not read then).
func TestGenerateEstimate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.csv"), make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := Runtime{ConfigDir: dir}
	cfg := generatespec.DefaultConfig()
	cfg.Train.Jobs, cfg.Eval.Jobs, cfg.Holdout.Jobs = 1000, 1e12, 100
	got, why := generateEstimate{cfg: cfg, path: rt.Path}.EstimateOutput(nil)
	if want := int64((1000+1e12+100)*jobRowBytes + 3*fileOverheadByte); got != want || !strings.Contains(why, "generate.eval.jobs = 1000000000000 jobs") {
		t.Errorf("synthetic: %d bytes (%s), want %d", got, why, want)
	}
	cfg.Eval.Import = "w.csv"
	got, why = generateEstimate{cfg: cfg, path: rt.Path}.EstimateOutput(nil)
	if want := int64((1000+100)*jobRowBytes + 5000 + 3*fileOverheadByte); got != want || !strings.Contains(why, "generate.eval.import's size") {
		t.Errorf("imported: %d bytes (%s), want %d", got, why, want)
	}
}
