package sim

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// batchRecorder answers yes to every move, and records the size of each
// batch it is asked, one call per batch.
type batchRecorder struct {
	calls []int
}

func (b *batchRecorder) Migrate(f *MigrationFeatures) bool { return true }
func (b *batchRecorder) MigrateBatch(fs []MigrationFeatures, out []bool) {
	b.calls = append(b.calls, len(fs))
	for i := range out {
		out[i] = true
	}
}

// TestDecisionsTakeTime works the migration scenario through by hand with
// decisions that take time: the answer delays the move it makes, a move
// answered for a job that started meanwhile is dropped, and decisions asked
// within a window go in one batch.
func TestDecisionsTakeTime(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 3}}
	svc := linear{Fixed: 1, PerSample: 0.5}
	latency := func(d float64) func(int, float64) float64 { return func(int, float64) float64 { return d } }
	tests := []struct {
		name string
		mig  Migration
		jobs []*Job
		want map[int64]ran
		// decisions and batches asked; sizes of the batches sent
		decisions, batches int64
		sizes              []int
	}{{
		// B is asked about at 0, answered at 0.1, travels 0.25 and runs
		// 1.5/3 on b: 0.35 → 0.85, 0.1 later than deciding at once.
		name:      "the answer delays the move",
		mig:       Migration{Cost: 0.25, Latency: latency(0.1), Batch: 1},
		jobs:      []*Job{{ID: 1, Batch: 1}, {ID: 2, Batch: 1}},
		want:      map[int64]ran{1: {0, 0, 1, 1, 0, 1.5, false, 1}, 2: {1, 0, 2, 1, 0.35, 0.85, true, 1}},
		decisions: 1, batches: 1, sizes: []int{1},
	}, {
		// The answer comes at 2; B started on a at 1.5, when A ended:
		// the move is dropped and b's held lane freed.
		name:      "a move answered for a job that started is dropped",
		mig:       Migration{Cost: 0.25, Latency: latency(2), Batch: 1},
		jobs:      []*Job{{ID: 1, Batch: 1}, {ID: 2, Batch: 1}},
		want:      map[int64]ran{1: {0, 0, 1, 1, 0, 1.5, false, 1}, 2: {0, 0, 2, 1, 1.5, 3, false, 1}},
		decisions: 1, batches: 1, sizes: []int{1},
	}, {
		// b has two lanes now: B at 0 and C at 0.05 are asked within the
		// window of 0.1 from B's asking, and sent together at 0.1; both
		// moves land at 0.1 + 0.2 = 0.3, run 1.5/3 at once on b's lanes
		// (no transit cost): 0.3 → 0.8.
		name:      "decisions asked within the window go in one batch",
		mig:       Migration{Latency: latency(0.2), Batch: 8, Window: 0.1},
		jobs:      []*Job{{ID: 1, Batch: 1}, {ID: 2, Batch: 1}, {ID: 3, Arrival: 0.05, Batch: 1}},
		want:      map[int64]ran{1: {0, 0, 1, 1, 0, 1.5, false, 1}, 2: {1, 0, 2, 1, 0.3, 0.8, true, 1}, 3: {1, 1, 3, 1, 0.3, 0.8, true, 1}},
		decisions: 2, batches: 1, sizes: []int{2},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devs := two
			if tt.mig.Window > 0 {
				devs = []Device{two[0], {Name: "b", Lanes: 2, Memory: 100, Speed: 3}}
			}
			b := &batchRecorder{}
			tt.mig.Decide = b
			got := map[int64]ran{}
			jobs := make([]*Job, len(tt.jobs))
			for i, j := range tt.jobs {
				c := *j
				jobs[i] = &c
			}
			stats, err := Run(Config{Devices: devs, Service: svc, Policy: first{}, Migration: tt.mig}, feed(jobs...), func(r *Record) error {
				got[r.Job.ID] = ran{r.Device, r.Lane, r.BatchID, r.BatchSize, r.Start, r.End, r.Migrated, r.SplitParts}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for id, w := range tt.want {
				g := got[id]
				if g.dev != w.dev || g.lane != w.lane || g.size != w.size || g.migrated != w.migrated ||
					math.Abs(g.start-w.start) > 1e-12 || math.Abs(g.end-w.end) > 1e-12 {
					t.Errorf("job %d: got %+v, want %+v", id, g, w)
				}
			}
			if stats.Decisions != tt.decisions || stats.DecisionBatches != tt.batches || len(b.calls) != len(tt.sizes) {
				t.Errorf("%d decisions in %d batches (calls %v), want %d in %d (%v)", stats.Decisions, stats.DecisionBatches, b.calls, tt.decisions, tt.batches, tt.sizes)
			}
			for i, n := range tt.sizes {
				if i < len(b.calls) && b.calls[i] != n {
					t.Errorf("batch %d of %d decisions, want %d", i, b.calls[i], n)
				}
			}
		})
	}
	bad := Config{Devices: two, Service: svc, Policy: first{}, Migration: Migration{Decide: &always{}, Latency: latency(1)}}
	if _, err := Run(bad, feed(), nil); err == nil || !strings.Contains(err.Error(), "batch of at least 1") {
		t.Errorf("a latency without a batch size: %v", err)
	}
}

// byParity places odd jobs on device 1 and even ones on device 0.
type byParity struct{}

func (byParity) Name() string               { return "by-parity" }
func (byParity) Place(j *Job, _ *State) int { return int(j.ID % 2) }

// coin answers a decision by a hash of its job and time: a third move.
type coin struct{}

func (coin) Migrate(f *MigrationFeatures) bool { return (f.Job.ID*7919+int64(f.Now*1e6))%3 == 0 }

// TestDecisionsOutliveTheirJobs reuses each ended job's struct for a later
// arrival, as the schedule stage's reader does, while decisions wait to be
// sent and are in flight long enough for their jobs to start and end: a
// decision must never touch the struct's next job, and every job must be
// recorded once.
func TestDecisionsOutliveTheirJobs(t *testing.T) {
	// Jobs queue on a and b by parity, and c, idle, asks about both: a
	// struct that ends on a may next wait on b.
	three := []Device{{Name: "a", Lanes: 1, Memory: 8, Speed: 1}, {Name: "b", Lanes: 1, Memory: 8, Speed: 1}, {Name: "c", Lanes: 2, Memory: 8, Speed: 2}}
	for _, tt := range []struct {
		latency, window float64
	}{{0.001, 0}, {0.05, 0}, {0.5, 0}, {0.05, 0.05}} {
		jobs := forkWorkload(1, 3000)
		var free []*Job
		i := 0
		next := func() (*Job, bool) {
			if i == len(jobs) {
				return nil, false
			}
			var j *Job
			if n := len(free); n > 0 {
				j, free = free[n-1], free[:n-1]
			} else {
				j = new(Job)
			}
			*j = *jobs[i]
			i++
			return j, true
		}
		seen := map[int64]int{}
		cfg := Config{Devices: three, Service: jitter{Fixed: 0.01, PerSample: 0.02}, Policy: byParity{}, Seed: 9,
			Migration: Migration{Decide: coin{}, Cost: 0.005, Latency: func(int, float64) float64 { return tt.latency }, Batch: 4, Window: tt.window}}
		st, err := Run(cfg, next, func(r *Record) error {
			seen[r.Job.ID]++
			free = append(free, r.Job)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// At half a second every answer comes after its job started.
		if len(seen) != len(jobs) || tt.latency < 0.5 && st.Migrations == 0 {
			t.Errorf("latency %v window %v: %d of %d jobs recorded, %d moves", tt.latency, tt.window, len(seen), len(jobs), st.Migrations)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("latency %v: job %d recorded %d times", tt.latency, id, n)
			}
		}
	}
}

// TestDecisionLatencyDraws: each batch of decisions is charged
// Latency(n, u) with u the variate of its ordinal, counting from 1
// (DecisionVariate), so the same seed charges the same times and another
// seed other ones; and the variates are uniform on [0, 1).
func TestDecisionLatencyDraws(t *testing.T) {
	three := []Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 2, Memory: 100, Speed: 3}, {Name: "c", Lanes: 1, Memory: 100, Speed: 2}}
	run := func(seed uint64) []float64 {
		var us []float64
		jobs := forkWorkload(1, 2000)
		i := 0
		next := func() (*Job, bool) {
			if i == len(jobs) {
				return nil, false
			}
			i++
			return jobs[i-1], true
		}
		cfg := Config{Devices: three, Service: jitter{Fixed: 0.01, PerSample: 0.02}, Policy: byParity{}, Seed: seed,
			Migration: Migration{Decide: coin{}, Cost: 0.005, Batch: 4, Window: 0.01, Latency: func(n int, u float64) float64 {
				us = append(us, u)
				return 0.001 * float64(n)
			}}}
		st, err := Run(cfg, next, func(*Record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(us)) != st.DecisionBatches || len(us) < 100 {
			t.Fatalf("seed %d: Latency called %d times for %d batches, want one call each, and at least 100", seed, len(us), st.DecisionBatches)
		}
		return us
	}
	a, again, other := run(5), run(5), run(6)
	for k, u := range a {
		if want := DecisionVariate(5, uint64(k+1)); u != want {
			t.Fatalf("batch %d: u = %v, want DecisionVariate(5, %d) = %v", k+1, u, k+1, want)
		}
	}
	if !slices.Equal(a, again) {
		t.Error("the same seed drew other variates")
	}
	if slices.Equal(a[:min(len(a), len(other))], other[:min(len(a), len(other))]) {
		t.Error("seeds 5 and 6 drew the same variates")
	}
	// Uniform: each tenth of [0, 1) holds about a tenth of 20,000 draws
	// (a binomial's standard deviation is 42; 200 is over 4.7 of them).
	var tenths [10]int
	for k := range 20_000 {
		u := DecisionVariate(11, uint64(k+1))
		if !(u >= 0 && u < 1) {
			t.Fatalf("DecisionVariate(11, %d) = %v, want [0, 1)", k+1, u)
		}
		tenths[int(u*10)]++
	}
	for i, n := range tenths {
		if n < 1800 || n > 2200 {
			t.Errorf("DecisionVariate: %d of 20,000 draws in [%.1f, %.1f), want 2,000 ± 200", n, float64(i)/10, float64(i+1)/10)
		}
	}
}
