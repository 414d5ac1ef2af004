package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

type unit struct{}

func (unit) Time(d int, m, p, b int32, u float64) float64 { return 1 }
func (unit) Predict(d int, m, p, b int32) float64         { return 1 }
func (unit) Memory(m, p, b int32) float64                 { return 1 }
func (unit) Contention(d, k int) float64                  { return 1 }

type first struct{}

func (first) Name() string               { return "first" }
func (first) Place(j *Job, s *State) int { return 0 }

type nameOnly struct{}

func (nameOnly) Name() string { return "name-only" }

func feed(jobs ...*Job) func() (*Job, bool) {
	return func() (*Job, bool) {
		if len(jobs) == 0 {
			return nil, false
		}
		j := jobs[0]
		jobs = jobs[1:]
		return j, true
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	ok := []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 1}}
	tests := []struct {
		name string
		cfg  Config
		jobs []*Job
		want string
	}{
		{"no devices", Config{Service: unit{}, Policy: first{}}, nil, "no devices"},
		{"zero lanes", Config{Devices: []Device{{Name: "d", Memory: 1, Speed: 1}}, Service: unit{}, Policy: first{}}, nil, "device 0 (d)"},
		{"zero speed", Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1}}, Service: unit{}, Policy: first{}}, nil, "speed > 0"},
		{"policy that cannot place", Config{Devices: ok, Service: unit{}, Policy: nameOnly{}}, nil, "does not place"},
		{"arrivals out of order", Config{Devices: ok, Service: unit{}, Policy: first{}},
			[]*Job{{ID: 1, Arrival: 5}, {ID: 2, Arrival: 4}}, "job 2 arrives at 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.cfg, feed(tt.jobs...), func(*Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestEmitErrorStopsTheRun(t *testing.T) {
	boom := errors.New("disk full")
	calls := 0
	_, err := Run(Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 1}}, Service: unit{}, Policy: first{}},
		feed(&Job{ID: 1}, &Job{ID: 2, Arrival: 1}, &Job{ID: 3, Arrival: 2}),
		func(*Record) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("err = %v after %d records, want the emitter's error after the first", err, calls)
	}
}

func TestStatsAndMakespan(t *testing.T) {
	st, err := Run(Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 2}}, Service: unit{}, Policy: first{}},
		feed(&Job{ID: 1}, &Job{ID: 2}, &Job{ID: 3, Arrival: 10}), func(*Record) error { return nil })
	// Speed 2: each job takes 0.5 s; 1 in [0, 0.5], 2 in [0.5, 1], 3 in [10, 10.5].
	if err != nil || st.Jobs != 3 || st.Rejected != 0 || st.Makespan != 10.5 {
		t.Errorf("stats = %+v, %v; want 3 jobs, makespan 10.5", st, err)
	}
}

// linear is a Service whose batches take Fixed + PerSample·b seconds at
// speed 1, every draw equal to the prediction, with memory of one unit per
// sample and no contention.
type linear struct{ Fixed, PerSample float64 }

func (l linear) Time(d int, m, p, b int32, u float64) float64 {
	return l.Fixed + l.PerSample*float64(b)
}
func (l linear) Predict(d int, m, p, b int32) float64 { return l.Fixed + l.PerSample*float64(b) }
func (l linear) Memory(m, p, b int32) float64         { return float64(b) }
func (l linear) Contention(d, k int) float64          { return 1 }

// halves splits every job in two equal parts over devices 0 and 1.
type halves struct{ first }

func (halves) Split(j *Job, s *State) []int32 { return []int32{j.Batch / 2, j.Batch - j.Batch/2} }

// always migrates every candidate.
type always struct{ seen []MigrationFeatures }

func (a *always) Migrate(f *MigrationFeatures) bool { a.seen = append(a.seen, *f); return true }

type ran struct {
	dev, lane  int32
	batch      int64
	size       int32
	start, end float64
	migrated   bool
	parts      int32
}

func runScenario(t *testing.T, cfg Config, jobs ...*Job) (map[int64]ran, []BatchRecord) {
	t.Helper()
	got := map[int64]ran{}
	var batches []BatchRecord
	cfg.OnBatch = func(b *BatchRecord) error { batches = append(batches, *b); return nil }
	_, err := Run(cfg, feed(jobs...), func(r *Record) error {
		if _, dup := got[r.Job.ID]; dup {
			t.Fatalf("job %d recorded twice", r.Job.ID)
		}
		got[r.Job.ID] = ran{r.Device, r.Lane, r.BatchID, r.BatchSize, r.Start, r.End, r.Migrated, r.SplitParts}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, batches
}

func TestFeatureScenarios(t *testing.T) {
	one := []Device{{Name: "d", Lanes: 1, Memory: 100, Speed: 1}}
	two := []Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 3}}
	svc := linear{Fixed: 1, PerSample: 0.5}
	tests := []struct {
		name    string
		cfg     Config
		jobs    []*Job
		want    map[int64]ran
		batches int
	}{{
		// A runs alone at once (window 0): 0 → 1.5. B, C and D (model 0)
		// and E (model 1) wait; at 1.5 B leads and C and D join it up to
		// 3 samples... of 4: B(1)+C(2) = 3, D(2) would make 5 > 4, so the
		// batch is B+C, 3 samples: 1.5 → 1.5+1+1.5 = 4. Then D (the next
		// in FIFO order: E arrived after D) alone: 4 → 6, then E: 6 → 7.5.
		name: "micro-batching merges compatible waiting jobs up to the largest batch",
		cfg:  Config{Devices: one, Service: svc, Policy: first{}, Batching: Batching{MaxBatch: 4}},
		jobs: []*Job{{ID: 1, Batch: 1}, {ID: 2, Arrival: 0.1, Batch: 1}, {ID: 3, Arrival: 0.2, Batch: 2},
			{ID: 4, Arrival: 0.3, Batch: 2}, {ID: 5, Arrival: 0.4, Batch: 1, Model: 1}},
		want: map[int64]ran{
			1: {0, 0, 1, 1, 0, 1.5, false, 1}, 2: {0, 0, 2, 3, 1.5, 4, false, 1}, 3: {0, 0, 2, 3, 1.5, 4, false, 1},
			4: {0, 0, 3, 2, 4, 6, false, 1}, 5: {0, 0, 4, 1, 6, 7.5, false, 1}},
		batches: 4,
	}, {
		// Window 0.5: A (t 0) is held until 0.5 for company; B joins at
		// 0.2; the batch of 2 runs 0.5 → 2.5. C at 3 is held to 3.5 and
		// runs alone 3.5 → 5.
		name: "the window holds a short batch from its oldest job's arrival",
		cfg:  Config{Devices: one, Service: svc, Policy: first{}, Batching: Batching{MaxBatch: 4, Window: 0.5}},
		jobs: []*Job{{ID: 1, Batch: 1}, {ID: 2, Arrival: 0.2, Batch: 1}, {ID: 3, Arrival: 3, Batch: 1}},
		want: map[int64]ran{
			1: {0, 0, 1, 2, 0.5, 2.5, false, 1}, 2: {0, 0, 1, 2, 0.5, 2.5, false, 1}, 3: {0, 0, 2, 1, 3.5, 5, false, 1}},
		batches: 2,
	}, {
		// A full batch does not wait: B fills the batch of 2 at 0.2.
		name:    "a full batch starts without waiting out the window",
		cfg:     Config{Devices: one, Service: svc, Policy: first{}, Batching: Batching{MaxBatch: 2, Window: 0.5}},
		jobs:    []*Job{{ID: 1, Batch: 1}, {ID: 2, Arrival: 0.2, Batch: 1}},
		want:    map[int64]ran{1: {0, 0, 1, 2, 0.2, 2.2, false, 1}, 2: {0, 0, 1, 2, 0.2, 2.2, false, 1}},
		batches: 1,
	}, {
		// The job of 6 samples runs as 3 on a (1 + 1.5 = 2.5 s) and 3 on b
		// (2.5/3 s); the record is the part that ended last, a's, and the
		// start the first.
		name:    "a split job ends when its last part does",
		cfg:     Config{Devices: two, Service: svc, Policy: halves{}, Split: Split{MinBatch: 4}},
		jobs:    []*Job{{ID: 1, Batch: 6}, {ID: 2, Arrival: 5, Batch: 3}},
		want:    map[int64]ran{1: {0, 0, 1, 3, 0, 2.5, false, 2}, 2: {0, 0, 3, 3, 5, 7.5, false, 1}},
		batches: 3,
	}, {
		// first puts both jobs on a; b is idle, so it takes B, which
		// travels 0.25 s and runs 0.25 → 0.25 + 1.5/3 = 0.75.
		name:    "an idle device takes a waiting job, paying the transit",
		cfg:     Config{Devices: two, Service: svc, Policy: first{}, Migration: Migration{Decide: &always{}, Cost: 0.25}},
		jobs:    []*Job{{ID: 1, Batch: 1}, {ID: 2, Batch: 1}},
		want:    map[int64]ran{1: {0, 0, 1, 1, 0, 1.5, false, 1}, 2: {1, 0, 2, 1, 0.25, 0.75, true, 1}},
		batches: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, batches := runScenario(t, tt.cfg, tt.jobs...)
			for id, w := range tt.want {
				g := got[id]
				if g.dev != w.dev || g.lane != w.lane || g.batch != w.batch || g.size != w.size || g.migrated != w.migrated || g.parts != w.parts ||
					math.Abs(g.start-w.start) > 1e-12 || math.Abs(g.end-w.end) > 1e-12 {
					t.Errorf("job %d: got %+v, want %+v", id, g, w)
				}
			}
			if len(got) != len(tt.want) || len(batches) != tt.batches {
				t.Errorf("%d records and %d batches, want %d and %d", len(got), len(batches), len(tt.want), tt.batches)
			}
		})
	}
}

func TestMigrationFeatures(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 3}}
	m := &always{}
	runScenario(t, Config{Devices: two, Service: linear{Fixed: 1, PerSample: 0.5}, Policy: first{}, Migration: Migration{Decide: m, Cost: 0.25}},
		&Job{ID: 1, Batch: 1}, &Job{ID: 2, Batch: 1})
	if len(m.seen) != 1 {
		t.Fatalf("asked %d times, want once", len(m.seen))
	}
	f := m.seen[0]
	// A runs on a until 1.5, so B would wait 1.5 and run 1.5 there; on b
	// it runs 0.5 after 0.25 of transit: a gain of 3 - 0.75.
	if f.From != 0 || f.To != 1 || f.FromBusy != 1 || f.ToBusy != 0 || f.FromQueued != 1 || f.FromWait != 1.5 ||
		f.PredictFrom != 1.5 || f.PredictTo != 0.5 || f.Cost != 0.25 || math.Abs(f.Gain()-2.25) > 1e-12 {
		t.Errorf("features %+v", f)
	}
}

func TestBadSplitsAreErrors(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 1, Memory: 4, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 1}}
	tests := []struct {
		name  string
		split splitFunc
		want  string
	}{
		{"sizes that do not add up", splitFunc(func(j *Job) []int32 { return []int32{1, 1} }), "summing to 2"},
		{"one part is the whole job", splitFunc(func(j *Job) []int32 { return []int32{0, j.Batch} }), ""},
		{"a part too big for its device", splitFunc(func(j *Job) []int32 { return []int32{j.Batch, 0} }), "cannot hold"},
		{"too few sizes", splitFunc(func(j *Job) []int32 { return []int32{j.Batch} }), "over 1 devices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := splitPolicy{tt.split}
			_, err := Run(Config{Devices: two, Service: linear{Fixed: 1}, Policy: p, Split: Split{MinBatch: 2}},
				feed(&Job{ID: 1, Batch: 6}), func(*Record) error { return nil })
			if tt.want == "" {
				if err != nil {
					t.Errorf("a whole job on one device: err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

type splitFunc func(j *Job) []int32

type splitPolicy struct{ f splitFunc }

func (splitPolicy) Name() string                     { return "split" }
func (splitPolicy) Place(j *Job, s *State) int       { return 1 }
func (p splitPolicy) Split(j *Job, s *State) []int32 { return p.f(j) }

// TestVariate checks the ground-truth variates: a pure function of seed,
// job and part, in [0, 1), different across each of them, and uniform
// (mean and deciles within a few standard errors over 200k jobs).
func TestVariate(t *testing.T) {
	// Pinned draws: a job's draw must not depend on what was drawn before
	// it (the order of events differs between policies), nor change
	// between versions, or a run could not be replayed. Each draw is taken
	// twice, the second time in reverse order, after all the others.
	pinned := []struct {
		seed uint64
		id   int64
		part int
		want float64
	}{
		{1, 42, -1, 0.5864711825414086},
		{1, 42, 0, 0.06945787997718478},
		{2, 42, -1, 0.005442405578626519},
		{1, 43, -1, 0.5362745330632924},
		{7, 0, 3, 0.9673633330884709},
	}
	first := make([]float64, len(pinned))
	for i, p := range pinned {
		first[i] = Variate(p.seed, p.id, p.part)
	}
	for i := len(pinned) - 1; i >= 0; i-- {
		p := pinned[i]
		if got := Variate(p.seed, p.id, p.part); got != first[i] || got != p.want {
			t.Errorf("Variate(%d, %d, %d) = %v, then %v, want %v both times", p.seed, p.id, p.part, first[i], got, p.want)
		}
	}
	// Each argument matters: changing any one of them, for many jobs,
	// changes the draw.
	changed := []struct {
		name string
		f    func(id int64) float64
	}{
		{"another seed", func(id int64) float64 { return Variate(2, id, -1) }},
		{"the next job", func(id int64) float64 { return Variate(1, id+1, -1) }},
		{"part 0 of the job", func(id int64) float64 { return Variate(1, id, 0) }},
		{"part 1 of the job", func(id int64) float64 { return Variate(1, id, 1) }},
	}
	for _, c := range changed {
		t.Run(c.name, func(t *testing.T) {
			for id := range int64(1000) {
				if base, other := Variate(1, id, -1), c.f(id); base == other {
					t.Fatalf("Variate(1, %d, -1) = %v, the same with %s", id, base, c.name)
				}
			}
		})
	}
	const n = 200_000
	var sum float64
	var deciles [10]int
	for id := range int64(n) {
		u := Variate(7, id, -1)
		if !(u >= 0 && u < 1) {
			t.Fatalf("Variate(7, %d) = %v, outside [0, 1)", id, u)
		}
		sum += u
		deciles[int(u*10)]++
	}
	if mean := sum / n; math.Abs(mean-0.5) > 4*math.Sqrt(1.0/12/n) {
		t.Errorf("mean variate %v, want 0.5", mean)
	}
	for k, c := range deciles {
		if math.Abs(float64(c)-n/10) > 4*math.Sqrt(n*0.1*0.9) {
			t.Errorf("decile %d holds %d of %d variates", k, c, n)
		}
	}
}

// scaled predicts k times the service's own prediction.
type scaled struct {
	svc Service
	k   float64
}

func (p scaled) Predict(d int, m, pr, b int32) float64 { return p.k * p.svc.Predict(d, m, pr, b) }

// TestPredictor runs the migration scenario with a predictor that says
// twice what the service does, and with a prediction error: the features
// the migration rule sees are the predictor's, scaled by the job's error,
// while the ground truth (when the jobs end) is the service's.
func TestPredictor(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 3}}
	svc := linear{Fixed: 1, PerSample: 0.5}
	for _, tt := range []struct {
		name string
		err  float64
	}{{"exact", 0}, {"30% error", 0.3}} {
		t.Run(tt.name, func(t *testing.T) {
			m := &always{}
			cfg := Config{Devices: two, Service: svc, Policy: first{}, Predictor: scaled{svc, 2}, PredictionError: tt.err, Seed: 4,
				Migration: Migration{Decide: m, Cost: 0.25}}
			got, _ := runScenario(t, cfg, &Job{ID: 1, Batch: 1}, &Job{ID: 2, Batch: 1})
			if len(m.seen) != 1 {
				t.Fatalf("asked %d times, want once", len(m.seen))
			}
			f := m.seen[0]
			// Job 2's predictions: 2 × 1.5 s, scaled by its error; its
			// wait is job 1's predicted end, 2 × 1.5 scaled by job 1's.
			e1 := 1 + tt.err*(2*PredictionVariate(4, 1)-1)
			e2 := 1 + tt.err*(2*PredictionVariate(4, 2)-1)
			if math.Abs(f.PredictFrom-3*e2) > 1e-12 || math.Abs(f.PredictTo-1*e2) > 1e-12 || math.Abs(f.FromWait-3*e1) > 1e-12 {
				t.Errorf("features %+v, want predict_from %v, predict_to %v, from_wait %v", f, 3*e2, 1*e2, 3*e1)
			}
			if tt.err > 0 && (e1 == 1 || e2 == 1 || math.Abs(e1-1) > tt.err || math.Abs(e2-1) > tt.err) {
				t.Errorf("errors %v and %v: want in [%v, %v], not 1", e1, e2, 1-tt.err, 1+tt.err)
			}
			// The ground truth is the service's: job 2 ends as in the
			// oracle's run, 0.25 + 1.5/3.
			if w := (ran{1, 0, 2, 1, 0.25, 0.75, true, 1}); got[2] != w {
				t.Errorf("job 2 ran %+v, want %+v", got[2], w)
			}
		})
	}
	if _, err := Run(Config{Devices: two, Service: svc, Policy: first{}, PredictionError: 1}, feed(), nil); err == nil || !strings.Contains(err.Error(), "prediction error 1") {
		t.Errorf("a prediction error of 100%%: %v", err)
	}
}

// TestPredictionVariate: uniform-looking, keyed to the seed and the job,
// and not the ground truth's draw.
func TestPredictionVariate(t *testing.T) {
	var sum float64
	same := 0
	const n = 20000
	for id := range int64(n) {
		v := PredictionVariate(1, id)
		if v < 0 || v >= 1 || v != PredictionVariate(1, id) {
			t.Fatalf("PredictionVariate(1, %d) = %v", id, v)
		}
		if v == PredictionVariate(2, id) || v == Variate(1, id, -1) {
			same++
		}
		sum += v
	}
	if mean := sum / n; math.Abs(mean-0.5) > 0.01 || same > 0 {
		t.Errorf("mean %v (want 0.5), %d collisions with another seed or the ground truth's draw", mean, same)
	}
}
