package schedule

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	// The bucket is the one the logarithm gives, but for a time within
	// rounding of an edge, from below the floor to past the last edge.
	r := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		s := math.Exp(r.Float64()*math.Log(3e9)) * 1e-9 // 1 ns to 3 s, log-uniform
		want := 0
		if s > latencyFloor {
			want = min(int(math.Log(s/latencyFloor)/latencyLog), latencyBuckets-1)
		}
		got := latencyBucket(s)
		if got != want && !(got == want+1 && math.Abs(s/latencyEdges[got]-1) < 1e-12) && !(got+1 == want && math.Abs(s/latencyEdges[want]-1) < 1e-12) {
			t.Fatalf("latencyBucket(%g) = %d, the logarithm says %d", s, got, want)
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
	model := placementModel(t)
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

// TestMigratorPoolLendsAsNew: a migrator the pool lends a second time,
// after a simulation's decisions, answers the next simulation's as a new
// one does, with the same counts and the guard's referrals of that
// simulation alone; the pool's close closes it.
func TestMigratorPoolLendsAsNew(t *testing.T) {
	lib, src := orttest.Library(t)
	if _, err := ort.Init(lib, src); err != nil {
		t.Fatal(err)
	}
	batches := decisionBatches(300)
	type served struct {
		out                                               []bool
		decisions, calls, evaluated, hits, changed, refer int64
	}
	simulate := func(t *testing.T, m *netMigrator) served {
		var s served
		for _, fs := range batches {
			out := make([]bool, len(fs))
			m.MigrateBatch(fs, out)
			s.out = append(s.out, out...)
		}
		if m.err != nil {
			t.Fatal(m.err)
		}
		s.refer, _ = m.referred()
		st := m.stats
		s.decisions, s.calls, s.evaluated, s.hits, s.changed = st.Decisions, st.Calls, st.Evaluated, st.Hits, st.Changed
		return s
	}
	for _, network := range []struct{ name, path string }{{"trained", "testdata/placement.onnx"}, {"at the threshold", constantNetwork(t, 0)}} {
		t.Run(network.name, func(t *testing.T) {
			model, err := os.ReadFile(network.path)
			if err != nil {
				t.Fatal(err)
			}
			l := schedulespec.Learned{Evaluator: schedulespec.EvaluatorGo, Batch: 8, Cache: schedulespec.Cache{Size: 16, Step: 0.1, Audit: true}}
			pool := &migratorPool{model: model, l: l}
			first, err := pool.get()
			if err != nil {
				t.Fatal(err)
			}
			a := simulate(t, first)
			if err := first.release(); err != nil {
				t.Fatal(err)
			}
			again, err := pool.get()
			if err != nil {
				t.Fatal(err)
			}
			if again != first {
				t.Fatal("the pool made a second migrator while the first was free")
			}
			b := simulate(t, again)
			fresh, err := newNetMigrator(model, l)
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.close()
			want := simulate(t, fresh)
			for name, got := range map[string]served{"first": a, "lent again": b} {
				if !slices.Equal(got.out, want.out) || got.decisions != want.decisions || got.calls != want.calls || got.evaluated != want.evaluated ||
					got.hits != want.hits || got.changed != want.changed || got.refer != want.refer {
					t.Errorf("%s: %d decisions, %d calls, %d evaluated, %d hits, %d changed, %d referred; a new migrator %d, %d, %d, %d, %d, %d (same answers: %v)",
						name, got.decisions, got.calls, got.evaluated, got.hits, got.changed, got.refer,
						want.decisions, want.calls, want.evaluated, want.hits, want.changed, want.refer, slices.Equal(got.out, want.out))
				}
			}
			if want.hits == 0 || want.hits == want.decisions {
				t.Errorf("%d hits of %d decisions: the batches should hit the cache sometimes", want.hits, want.decisions)
			}
			if network.name == "at the threshold" && want.refer != want.evaluated {
				t.Errorf("%d of %d points referred, want all", want.refer, want.evaluated)
			}
			again.release()
			if err := pool.close(); err != nil {
				t.Fatal(err)
			}
			out := make([]bool, 1)
			again.MigrateBatch(batches[0][:1], out)
			if again.err == nil {
				t.Error("a migrator of a closed pool still evaluates")
			}
		})
	}
}

// decisionBatches makes n seeded batches of one to eight decisions whose
// features take few values, so that a small cache both hits and misses,
// about half of them with much to gain from a move (a long wait at the
// source, a short run at the destination) and half with little.
func decisionBatches(n int) [][]sim.MigrationFeatures {
	r := rand.New(rand.NewPCG(3, 4))
	job := &sim.Job{ID: 1, Deadline: 2, Class: sim.Interactive}
	batches := make([][]sim.MigrationFeatures, n)
	for i := range batches {
		batches[i] = make([]sim.MigrationFeatures, 1+r.IntN(8))
		for k := range batches[i] {
			f := sim.MigrationFeatures{Job: job, FromBusy: 1, FromQueued: 1 + r.IntN(3), Now: 1.9,
				FromBacklog: 0.05 * float64(1+r.IntN(3)), PredictFrom: 0.02 * float64(1+r.IntN(3)), PredictTo: 0.02 * float64(1+r.IntN(3))}
			if r.IntN(2) == 0 {
				f.FromWait, f.FromBacklog, f.FromQueued, f.PredictTo = 0.5, 2, 20, 0.001
			}
			batches[i][k] = f
		}
	}
	return batches
}

// TestAuditChangesNoAnswer: with the cache's audit off, a hit is answered
// from the cache alone and the rest of its batch is evaluated without it;
// the answers are those of the audited migrator, which evaluates every
// decision, and only the counts of what was evaluated differ.
func TestAuditChangesNoAnswer(t *testing.T) {
	model := placementModel(t)
	batches := decisionBatches(300)
	answers := map[bool][]bool{}
	stats := map[bool]servingStats{}
	for _, audit := range []bool{true, false} {
		l := schedulespec.Learned{Evaluator: schedulespec.EvaluatorGo, Batch: 8, Cache: schedulespec.Cache{Size: 16, Step: 0.1, Audit: audit}}
		m, err := newNetMigrator(model, l)
		if err != nil {
			t.Fatal(err)
		}
		for _, fs := range batches {
			out := make([]bool, len(fs))
			m.MigrateBatch(fs, out)
			answers[audit] = append(answers[audit], out...)
		}
		if err := errors.Join(m.err, m.close()); err != nil {
			t.Fatal(err)
		}
		stats[audit] = m.stats
	}
	if !slices.Equal(answers[true], answers[false]) {
		t.Error("the audit changed an answer")
	}
	on, off := stats[true], stats[false]
	if on.Hits == 0 || on.Hits != off.Hits || on.Evaluated != on.Decisions || off.Evaluated != off.Decisions-off.Hits || off.Changed != 0 {
		t.Errorf("audited: %d decisions, %d hits, %d evaluated; not: %d, %d, %d (%d changed); want every decision evaluated with the audit, all but the hits without",
			on.Decisions, on.Hits, on.Evaluated, off.Decisions, off.Hits, off.Evaluated, off.Changed)
	}
}

// placementModel loads onnxruntime and returns the bytes of the network
// the default pipeline trained (testdata/placement.onnx).
func placementModel(t *testing.T) []byte {
	t.Helper()
	lib, src := orttest.Library(t)
	if _, err := ort.Init(lib, src); err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("testdata/placement.onnx")
	if err != nil {
		t.Fatal(err)
	}
	return model
}
