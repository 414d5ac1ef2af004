package schedule

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"
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
	for _, ev := range schedulespec.Evaluators {
		t.Run(ev, func(t *testing.T) {
			l := schedulespec.Learned{Evaluator: ev, Batch: 8, Cache: schedulespec.Cache{Size: 64, Step: 0.1, Audit: true}}
			checkMigratorAllocs(t, model, l)
		})
	}
}

// checkMigratorAllocs is TestNetMigratorAllocates for one evaluator.
func checkMigratorAllocs(t *testing.T, model []byte, l schedulespec.Learned) {
	m, err := newNetMigrator(model, l)
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

// TestEvaluatorsAgree runs the learned policy with its decisions
// evaluated in Go and in onnxruntime, on the network the default pipeline
// trained and on one that answers exactly the threshold (so that the Go
// pass's guard refers every point to onnxruntime): every file the stage
// writes is the same to the byte, and the notes say which evaluator
// served and how many points the guard referred.
func TestEvaluatorsAgree(t *testing.T) {
	lib, src := orttest.Library(t)
	samples, jobs := writeSamples(t, learnedProfile()), generateJobs(t, mlpWorkload(4000), 3)
	for _, tt := range []struct {
		name, placement string
		allReferred     bool
	}{
		{"trained", "testdata/placement.onnx", false},
		{"at the threshold", constantNetwork(t, 0), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dirs := map[string]string{}
			notes := map[string]map[string]string{}
			for _, ev := range schedulespec.Evaluators {
				cfg := testConfig()
				cfg.Policies = []string{"edf", "learned"}
				cfg.Learned.Evaluator = ev
				dirs[ev], notes[ev] = t.TempDir(), map[string]string{}
				in := Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Placement: tt.placement, ORTLib: lib, ORTSource: src}
				if err := Run(context.Background(), cfg, 5, in, Output{Dir: dirs[ev], Metadata: testMeta, Notes: notes[ev]}); err != nil {
					t.Fatal(err)
				}
			}
			files := sameFiles(t, dirs[schedulespec.EvaluatorGo], dirs[schedulespec.EvaluatorONNXRuntime])
			t.Logf("%d files the same", files)
			rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dirs[schedulespec.EvaluatorGo], "learned", ServingFile))
			if err != nil {
				t.Fatal(err)
			}
			goNotes, ortNotes := notes[schedulespec.EvaluatorGo], notes[schedulespec.EvaluatorONNXRuntime]
			if goNotes["serving:learned:evaluator"] != "go" || ortNotes["serving:learned:evaluator"] != "onnxruntime" {
				t.Errorf("evaluator notes %q and %q, want go and onnxruntime", goNotes["serving:learned:evaluator"], ortNotes["serving:learned:evaluator"])
			}
			referred, err := strconv.ParseInt(goNotes["serving:learned:referred"], 10, 64)
			if err != nil || ortNotes["serving:learned:referred"] != "" {
				t.Errorf("referred notes %q and %q: want a count for go alone", goNotes["serving:learned:referred"], ortNotes["serving:learned:referred"])
			}
			if all := referred == rows[0].Evaluated; all != tt.allReferred || rows[0].Evaluated == 0 {
				t.Errorf("the guard referred %d of %d points evaluated; want all of them: %v", referred, rows[0].Evaluated, tt.allReferred)
			}
		})
	}
}

// sameFiles requires the trees a and b to hold the same files with the
// same bytes, and returns how many.
func sameFiles(t *testing.T, a, b string) int {
	t.Helper()
	var n int
	err := filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		x, errA := os.ReadFile(path)
		y, errB := os.ReadFile(filepath.Join(b, rel))
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs (%v, %v)", rel, errA, errB)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(b, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b, path)
		if _, err := os.Stat(filepath.Join(a, rel)); err != nil {
			t.Errorf("%s is only in %s", rel, b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
