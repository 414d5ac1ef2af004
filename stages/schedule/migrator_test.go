package schedule

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestLatencies: the histogram's quantiles are within its 1% step of the
// exact ones, and recording allocates nothing.
func TestLatencies(t *testing.T) {
	var l latencies
	if !math.IsNaN(l.quantile(0.5)) {
		t.Error("an empty histogram has a median")
	}
	for us := 1; us <= 1000; us++ {
		l.add(time.Duration(us) * time.Microsecond)
	}
	l.add(0) // below the floor: the first bucket
	for _, tt := range []struct{ q, want float64 }{{0.5, 500e-6}, {0.99, 990e-6}, {1, 1000e-6}} {
		if got := l.quantile(tt.q); math.Abs(got/tt.want-1) > 0.011 {
			t.Errorf("quantile(%v) = %v, want %v within 1%%", tt.q, got, tt.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { l.add(3 * time.Microsecond) }); a != 0 {
		t.Errorf("add allocates %v times", a)
	}
}

// TestNetMigratorAllocates nothing per decision once warm: the features
// built, standardized, looked up, evaluated in a batch and cached, with
// the audit on.
func TestNetMigratorAllocates(t *testing.T) {
	lib, src := orttest.Library(t)
	if _, err := ort.Init(lib, src); err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("testdata/placement.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := newNetMigrator(model, 8, schedulespec.Cache{Size: 64, Step: 0.1, Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	job := &sim.Job{ID: 1, Deadline: 2}
	fs := make([]sim.MigrationFeatures, 8)
	out := make([]bool, 8)
	for i := range fs {
		fs[i] = sim.MigrationFeatures{Job: job, FromBusy: 1, FromQueued: i, FromBacklog: 0.01 * float64(i), PredictFrom: 0.02, PredictTo: 0.004, Now: 1}
	}
	m.MigrateBatch(fs, out) // warm: the cache fills
	if a := testing.AllocsPerRun(200, func() { m.MigrateBatch(fs, out); m.Migrate(&fs[3]) }); a != 0 {
		t.Errorf("a batch of decisions allocates %v times", a)
	}
	if m.err != nil || m.stats.Hits == 0 || m.stats.Changed != 0 {
		t.Errorf("stats %+v, err %v: want hits and no cached answer changed", m.stats.Decisions, m.err)
	}
}
