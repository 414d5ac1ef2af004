package sim

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// jitter is a Service whose batches take (Fixed + PerSample·b)·(0.5 + u)
// seconds at speed 1, with memory of one unit per sample and lanes that
// slow each other down.
type jitter struct{ Fixed, PerSample float64 }

func (l jitter) Time(d int, m, p, b int32, u float64) float64 {
	return (l.Fixed + l.PerSample*float64(b)) * (0.5 + u)
}
func (l jitter) Predict(d int, m, p, b int32) float64 { return l.Fixed + l.PerSample*float64(b) }
func (l jitter) Memory(m, p, b int32) float64         { return float64(b) }
func (l jitter) Contention(d, k int) float64          { return 1 + 0.2*float64(max(k-1, 0)) }

// byDeadline is halves with its queues in deadline order.
type byDeadline struct{ halves }

func (byDeadline) Name() string        { return "by-deadline" }
func (byDeadline) Less(a, b *Job) bool { return a.Deadline < b.Deadline }
func (byDeadline) Key(j *Job) RankKey  { return RankKey{Minor: j.Deadline} }

// gainOver moves a job when the move is predicted to end it more than its
// value sooner.
type gainOver float64

func (g gainOver) Migrate(f *MigrationFeatures) bool { return f.Gain() > float64(g) }

// forkWorkload is a seeded stream of jobs that all join device 0 (both
// test policies place there), so queues build, device 1 steals, batches
// merge and large jobs split.
func forkWorkload(seed uint64, n int) []*Job {
	r := rand.New(rand.NewPCG(seed, 3))
	jobs := make([]*Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / 45
		jobs[i] = &Job{ID: int64(i), Arrival: t, Class: Class(r.IntN(2)), Model: int32(r.IntN(2)),
			Batch: int32(1 + r.IntN(4)), Deadline: t + 3*r.Float64()}
	}
	return jobs
}

// held lists every job reference of m's state in a fixed order (nil for
// a cleared slot), the parents of split parts last.
func held(m *Sim) []*Job {
	s := m.state
	out := []*Job{m.pending}
	for d := range s.devs {
		ds := &s.devs[d]
		for _, l := range ds.lanes {
			out = append(out, l.jobs...)
		}
		for _, e := range ds.queue.fifo {
			out = append(out, e.job)
		}
		for _, r := range ds.queue.heap {
			out = append(out, r.job)
		}
		for _, ru := range ds.queue.runs {
			for _, r := range ru.entries {
				out = append(out, r.job)
			}
		}
		for _, k := range slices.SortedFunc(maps.Keys(ds.groups), cmpKind) {
			for _, e := range ds.groups[k].entries {
				out = append(out, e.job)
			}
		}
	}
	for _, t := range s.transit {
		out = append(out, t.job)
	}
	out = append(out, s.freeJobs...)
	for _, d := range s.asked {
		out = append(out, d.job, d.feat.Job)
	}
	for _, f := range s.flights {
		for _, d := range f.ds {
			out = append(out, d.job, d.feat.Job)
		}
	}
	for _, j := range out {
		if j != nil && j.split != nil {
			out = append(out, j.split.parent)
		}
	}
	return out
}

func cmpKind(a, b kind) int {
	return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.precision, b.precision), cmp.Compare(a.class, b.class))
}

// sameArray reports whether two slices share their backing array.
func sameArray[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// checkCopy checks that f's state is a copy of m's that shares nothing
// mutable: each job reference maps to a job with the same fields, one copy
// per original job and one split per original split; groups, lanes, queues
// and buffers have arrays of their own.
func checkCopy(t *testing.T, m, f *Sim) {
	t.Helper()
	a, b := held(m), held(f)
	if len(a) != len(b) {
		t.Fatalf("fork holds %d job references, the original %d", len(b), len(a))
	}
	orig := map[*Job]bool{}
	for _, j := range a {
		orig[j] = true
	}
	fwd, bwd := map[*Job]*Job{}, map[*Job]*Job{}
	splits, splitsBack := map[*split]*split{}, map[*split]*split{}
	for i, x := range a {
		y := b[i]
		if x == nil || y == nil {
			if x != y {
				t.Fatalf("reference %d: original %p, fork %p", i, x, y)
			}
			continue
		}
		if orig[y] {
			t.Fatalf("reference %d: the fork holds the original's job %d", i, y.ID)
		}
		if fy, ok := fwd[x]; ok && fy != y || bwd[y] != nil && bwd[y] != x {
			t.Fatalf("reference %d: job %d maps to two copies, or two jobs to one", i, x.ID)
		}
		fwd[x], bwd[y] = y, x
		cx, cy := *x, *y
		cx.split, cy.split = nil, nil
		if cx != cy || (x.split == nil) != (y.split == nil) {
			t.Fatalf("reference %d: job %+v copied as %+v", i, *x, *y)
		}
		if x.split == nil {
			continue
		}
		if x.split == y.split {
			t.Fatalf("reference %d: job %d's split is shared", i, x.ID)
		}
		if sy, ok := splits[x.split]; ok && sy != y.split || splitsBack[y.split] != nil && splitsBack[y.split] != x.split {
			t.Fatalf("reference %d: job %d's split maps to two copies, or two splits to one", i, x.ID)
		}
		splits[x.split], splitsBack[y.split] = y.split, x.split
		sx, sy := *x.split, *y.split
		sx.parent, sy.parent = nil, nil
		if sx != sy {
			t.Fatalf("reference %d: split %+v copied as %+v", i, sx, sy)
		}
	}
	for sx, sy := range splits {
		if fwd[sx.parent] != sy.parent {
			t.Fatalf("split of job %d: the fork's parent is not the copy of the original's", sx.parent.ID)
		}
	}
	s, c := m.state, f.state
	if c.seq != s.seq || c.stamps != s.stamps || c.now != s.now || c.stats != s.stats || c.tHead != s.tHead || f.more != m.more || f.last != m.last {
		t.Fatalf("fork's counters (seq %d, stamps %d, time %v, transit head %d, arrivals %v after %v) are not the original's (%d, %d, %v, %d, %v after %v)",
			c.seq, c.stamps, c.now, c.tHead, f.more, f.last, s.seq, s.stamps, s.now, s.tHead, m.more, m.last)
	}
	if sameArray(s.transit, c.transit) || sameArray(s.freeJobs, c.freeJobs) || sameArray(s.events.heap, c.events.heap) || sameArray(s.events.slots, c.events.slots) {
		t.Fatal("the fork shares the transit, free jobs or timers of the original")
	}
	for d := range s.devs {
		sd, cd := &s.devs[d], &c.devs[d]
		if sameArray(sd.lanes, cd.lanes) || sameArray(sd.queue.fifo, cd.queue.fifo) || sameArray(sd.queue.heap, cd.queue.heap) || sameArray(sd.queue.runs, cd.queue.runs) || sameArray(sd.active, cd.active) {
			t.Fatalf("device %d: the fork shares the lanes, queue or groups of the original", d)
		}
		for i := range sd.queue.runs {
			if sameArray(sd.queue.runs[i].entries, cd.queue.runs[i].entries) {
				t.Fatalf("device %d: the fork shares run %d of the original's queue", d, i)
			}
		}
		for i := range sd.lanes {
			if sameArray(sd.lanes[i].jobs, cd.lanes[i].jobs) {
				t.Fatalf("device %d lane %d: the fork shares the batch's slice", d, i)
			}
		}
		for k, g := range sd.groups {
			h := cd.groups[k]
			if h == nil || h == g || sameArray(g.entries, h.entries) || h.pos != g.pos || h.head != g.head || h.jobs != g.jobs || h.samples != g.samples {
				t.Fatalf("device %d: group %+v copied as %+v", d, g, h)
			}
			if g.pos >= 0 && cd.active[g.pos] != h {
				t.Fatalf("device %d: active group %d is not the copy of the original's", d, g.pos)
			}
		}
		if len(cd.groups) != len(sd.groups) {
			t.Fatalf("device %d: %d groups copied as %d", d, len(sd.groups), len(cd.groups))
		}
	}
}

// TestForkCopiesEveryJob forks simulations that batch, split and move jobs
// every few steps, checks that the fork's state is a copy sharing nothing
// with the original's, and runs the fork to the end, then the original:
// both must emit what an unforked run does from the fork on. The fork
// points must between them catch jobs in transit, parts of a split job
// waiting, stale queue entries, free parts, a ranked queue and a held
// batch.
func TestForkCopiesEveryJob(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 2, Memory: 6, Speed: 1}, {Name: "b", Lanes: 2, Memory: 8, Speed: 2}}
	tests := []struct {
		name    string
		policy  Policy
		latency float64 // of a migration decision; 0 decides at once
	}{
		{"fifo", halves{}, 0},
		{"ranked", byDeadline{}, 0},
		{"deciding", byDeadline{}, 0.003},
	}
	seen := map[string]int{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Devices: two, Service: jitter{Fixed: 0.01, PerSample: 0.02}, Policy: tt.policy, Seed: 9,
				Batching: Batching{MaxBatch: 4, Window: 0.01}, Split: Split{MinBatch: 3}, Migration: Migration{Decide: gainOver(0), Cost: 0.005}}
			if tt.latency > 0 {
				cfg.Migration.Latency = func(n int, _ float64) float64 { return tt.latency * float64(n) }
				cfg.Migration.Batch, cfg.Migration.Window = 3, 0.002
			}
			jobs := forkWorkload(1, 3000)
			want := collect(t, cfg, jobs)
			var got []Record
			in := &source{jobs: clones(jobs)}
			m, err := New(cfg, in.next, keep(&got))
			if err != nil {
				t.Fatal(err)
			}
			forkedAtEnd := false // once the arrivals are over
			for step := 0; ; step++ {
				if step%53 == 0 || !m.more && !forkedAtEnd {
					forkedAtEnd = !m.more
					note(seen, m)
					var forked []Record
					rest := &source{jobs: clones(jobs[in.read:])}
					f, err := m.Fork(rest.next, keep(&forked), nil)
					if err != nil {
						t.Fatal(err)
					}
					checkCopy(t, m, f)
					if _, err := f.Run(); err != nil {
						t.Fatal(err)
					}
					if d := diff(forked, want[len(got):]); d != "" {
						t.Fatalf("fork at step %d: %s", step, d)
					}
				}
				more, err := m.Step()
				if err != nil {
					t.Fatal(err)
				}
				if !more {
					break
				}
			}
			if d := diff(got, want); d != "" {
				t.Fatalf("the forked original: %s", d)
			}
		})
	}
	for _, what := range []string{"transit", "split parts", "stale entries", "free parts", "ranked queue", "ranked runs", "held batch", "busy lane", "arrivals over",
		"asked decisions", "decisions in flight"} {
		if seen[what] == 0 {
			t.Errorf("no fork point with %s", what)
		}
	}
}

// source hands out jobs in order, counting how many it has.
type source struct {
	jobs []*Job
	read int
}

func (s *source) next() (*Job, bool) {
	if s.read == len(s.jobs) {
		return nil, false
	}
	s.read++
	return s.jobs[s.read-1], true
}

// clones copies jobs for a simulation of their own.
func clones(jobs []*Job) []*Job {
	out := make([]*Job, len(jobs))
	for i, j := range jobs {
		c := *j
		out[i] = &c
	}
	return out
}

// keep is an emitter that appends copies of the records to recs.
func keep(recs *[]Record) func(*Record) error {
	return func(r *Record) error { *recs = append(*recs, *r); return nil }
}

// collect runs copies of jobs under cfg and returns the records.
func collect(t *testing.T, cfg Config, jobs []*Job) []Record {
	t.Helper()
	var out []Record
	if _, err := Run(cfg, (&source{jobs: clones(jobs)}).next, keep(&out)); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff describes the first difference between two record streams, their
// jobs compared by the fields a caller sets, or returns "".
func diff(a, b []Record) string {
	fields := func(j *Job) Job { c := *j; c.stamp, c.migrated, c.deciding, c.split = 0, false, false, nil; return c }
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if fields(x.Job) != fields(y.Job) {
			return fmt.Sprintf("record %d is of job %+v, want %+v", i, fields(x.Job), fields(y.Job))
		}
		x.Job, y.Job = nil, nil
		if x != y {
			return fmt.Sprintf("record %d (job %d) is %+v, want %+v", i, a[i].Job.ID, x, y)
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d records, want %d", len(a), len(b))
	}
	return ""
}

// note counts in seen what m's state holds that a fork must copy.
func note(seen map[string]int, m *Sim) {
	s := m.state
	if s.tHead < len(s.transit) {
		seen["transit"]++
	}
	if len(s.freeJobs) > 0 {
		seen["free parts"]++
	}
	if !m.more {
		seen["arrivals over"]++
	}
	if len(s.asked) > 0 {
		seen["asked decisions"]++
	}
	if len(s.flights) > 0 {
		seen["decisions in flight"]++
	}
	for d := range s.devs {
		ds := &s.devs[d]
		if ds.busy > 0 {
			seen["busy lane"]++
		}
		if !math.IsInf(ds.timer, 1) && ds.timer > s.now {
			seen["held batch"]++
		}
		live := 0
		for _, r := range ds.queue.heap {
			if r.live() {
				live++
			}
		}
		if live > 1 {
			seen["ranked queue"]++
		}
		live = 0
		for _, ru := range ds.queue.runs {
			for _, r := range ru.entries[ru.head:] {
				if r.live() {
					live++
				}
			}
		}
		if live > 1 {
			seen["ranked runs"]++
		}
		for _, g := range ds.groups {
			for _, e := range g.entries[g.head:] {
				switch {
				case !e.live():
					seen["stale entries"]++
				case e.job.split != nil:
					seen["split parts"]++
				}
			}
		}
	}
}
