package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// cloneJobs gives a simulation its own copies of jobs: the simulator keeps
// its bookkeeping in the jobs it is handed.
func cloneJobs(jobs []*sim.Job) []*sim.Job {
	out := make([]*sim.Job, len(jobs))
	for i, j := range jobs {
		c := *j
		out[i] = &c
	}
	return out
}

// cursor hands out jobs in order, counting how many it has.
type cursor struct {
	jobs []*sim.Job
	read int
}

func (c *cursor) next() (*sim.Job, bool) {
	if c.read == len(c.jobs) {
		return nil, false
	}
	c.read++
	return c.jobs[c.read-1], true
}

// stream is what a simulation emitted: copies of its records (their jobs
// are the simulation's) and of its batches.
type stream struct {
	recs    []sim.Record
	batches []sim.BatchRecord
}

func (s *stream) record(r *sim.Record) error { s.recs = append(s.recs, *r); return nil }
func (s *stream) batch(b *sim.BatchRecord) error {
	s.batches = append(s.batches, *b)
	return nil
}

// specConfig is the invariant tests' simulation of spec sp.
func specConfig(t testing.TB, sp Spec) sim.Config {
	t.Helper()
	o := Options{Seed: 7, Weights: DefaultWeights()}
	p, err := New(sp.Name, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Devices: invDevs, Service: invSvc, Policy: p, Placement: sp.Placer(o), Seed: 3}
	if err := sp.Configure(&cfg, invSettings); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// jobFields are the fields of a job the caller sets, which a record's job
// must carry.
func jobFields(j *sim.Job) sim.Job {
	return sim.Job{ID: j.ID, Arrival: j.Arrival, Deadline: j.Deadline, Class: j.Class, Model: j.Model, Precision: j.Precision, Batch: j.Batch}
}

// diffRecords describes the first difference between two record streams,
// field by field (jobs by their fields, since each simulation has its own),
// or returns "".
func diffRecords(a, b []sim.Record) string {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if jobFields(x.Job) != jobFields(y.Job) {
			return fmt.Sprintf("record %d is of job %+v, want %+v", i, jobFields(x.Job), jobFields(y.Job))
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

func diffBatches(a, b []sim.BatchRecord) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("batch %d is %+v, want %+v", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d batches, want %d", len(a), len(b))
	}
	return ""
}

// unforked runs jobs under cfg to the end, as sim.Run does.
func unforked(t *testing.T, cfg sim.Config, jobs []*sim.Job) (stream, sim.Stats) {
	t.Helper()
	var out stream
	cfg.OnBatch = out.batch
	in := cursor{jobs: cloneJobs(jobs)}
	st, err := sim.Run(cfg, in.next, out.record)
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

// TestForkIsExact forks every spec's simulation at several moments, from
// before the first event to after the last arrival, and runs each fork to
// the end before the original goes on. A fork must emit, from its moment
// on, exactly the records and batches the original emits from then, and
// end with the same stats; its records must be of its own jobs; and the
// original, forked or not, must emit what an unforked run does. Running
// the fork first means a fork that shared anything with the original (a
// job's queue stamp, a split's parts left, a policy's generator) would
// change the original's course, and be caught.
func TestForkIsExact(t *testing.T) {
	workloads := []struct {
		name string
		jobs []*sim.Job
	}{
		{"light", randomWorkload(11, 3000)},
		{"heavy", deadlineWorkload(5, 3000, 90)}, // deep queues, deadlines out of arrival order
	}
	for _, w := range workloads {
		for _, sp := range specs() {
			t.Run(w.name+"/"+sp.String(), func(t *testing.T) {
				cfg := specConfig(t, sp)
				want, wantStats := unforked(t, specConfig(t, sp), w.jobs)
				var got stream
				cfg.OnBatch = got.batch
				in := cursor{jobs: cloneJobs(w.jobs)}
				ours := map[*sim.Job]bool{}
				for _, j := range in.jobs {
					ours[j] = true
				}
				m, err := sim.New(cfg, in.next, got.record)
				if err != nil {
					t.Fatal(err)
				}
				steps := int64(0)
				for _, at := range []float64{0, 1e-9, 0.013, 0.2, 0.5, 0.77, 0.98, 0.9995} {
					for ; steps < int64(at*float64(wantStats.Events)); steps++ {
						if _, err := m.Step(); err != nil {
							t.Fatal(err)
						}
					}
					if m.Stats().Events != steps {
						t.Fatalf("%d events after %d steps", m.Stats().Events, steps)
					}
					var fork stream
					rest := cursor{jobs: cloneJobs(w.jobs[in.read:])}
					f, err := m.Fork(rest.next, fork.record, nil)
					if err != nil {
						t.Fatal(err)
					}
					f.SetOnBatch(fork.batch)
					if f.Now() != m.Now() || f.Stats() != m.Stats() {
						t.Fatalf("step %d: fork at %v with %+v, original at %v with %+v", steps, f.Now(), f.Stats(), m.Now(), m.Stats())
					}
					recs, batches := len(got.recs), len(got.batches)
					fst, err := f.Run()
					if err != nil {
						t.Fatal(err)
					}
					if d := diffRecords(fork.recs, want.recs[recs:]); d != "" {
						t.Fatalf("fork at step %d: %s", steps, d)
					}
					if d := diffBatches(fork.batches, want.batches[batches:]); d != "" {
						t.Fatalf("fork at step %d: %s", steps, d)
					}
					if fst != wantStats {
						t.Fatalf("fork at step %d ends with %+v, want %+v", steps, fst, wantStats)
					}
					for _, r := range fork.recs {
						if ours[r.Job] {
							t.Fatalf("fork at step %d emitted a record of the original's job %d", steps, r.Job.ID)
						}
					}
				}
				st, err := m.Run()
				if err != nil {
					t.Fatal(err)
				}
				if d := diffRecords(got.recs, want.recs); d != "" {
					t.Fatalf("forked original: %s", d)
				}
				if d := diffBatches(got.batches, want.batches); d != "" {
					t.Fatalf("forked original: %s", d)
				}
				if st != wantStats {
					t.Fatalf("forked original ends with %+v, want %+v", st, wantStats)
				}
			})
		}
	}
}

// decision is one call to a Migrator.
type decision struct {
	at       float64
	job      int64
	from, to int
	vec      [sim.NumFeatures]float32
	move     bool
}

// recorder notes the decisions of its rule.
type recorder struct {
	rule sim.Migrator
	seen []decision
}

func (r *recorder) Migrate(f *sim.MigrationFeatures) bool {
	d := decision{at: f.Now, job: f.Job.ID, from: f.From, to: f.To, move: r.rule.Migrate(f)}
	f.Vector(&d.vec)
	r.seen = append(r.seen, d)
	return d.move
}

// answer is a Migrator that always says the same.
type answer bool

func (a answer) Migrate(*sim.MigrationFeatures) bool { return bool(a) }

// TestForkWithAMigratorDivergesAtItsFirstDecision forks simulations with a
// rule that always moves, or never does, and steps the fork beside the
// original: they must agree event for event (clock, stats, records) up to
// the step where the fork meets its first decision, which both must see
// alike; the fork then obeys its rule (its moves are its yes answers) and
// the original goes on as if never forked. Where the rule disagrees with
// the original's first answer (some forks of each rule must) the two runs
// must differ.
func TestForkWithAMigratorDivergesAtItsFirstDecision(t *testing.T) {
	jobs := randomWorkload(11, 3000) // light: devices fall idle, and decisions are frequent
	disagreed := map[bool]int{}      // by the fork's answer
	for _, spec := range []string{"edf+migrate", "dynamic+split+migrate", "fifo+batch+migrate"} {
		sp, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		want, st := unforked(t, specConfig(t, sp), jobs)
		for _, share := range []float64{0, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95} {
			at := 1 + int(share*float64(st.Events))
			for _, yes := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/step %d/always %v", spec, at, yes), func(t *testing.T) {
					cfg := specConfig(t, sp)
					orig := &recorder{rule: cfg.Migration.Decide}
					cfg.Migration.Decide = orig
					var got, forked stream
					in := cursor{jobs: cloneJobs(jobs)}
					m, err := sim.New(cfg, in.next, got.record)
					if err != nil {
						t.Fatal(err)
					}
					for range at {
						if _, err := m.Step(); err != nil {
							t.Fatal(err)
						}
					}
					rule := &recorder{rule: answer(yes)}
					rest := cursor{jobs: cloneJobs(jobs[in.read:])}
					f, err := m.Fork(rest.next, forked.record, rule)
					if err != nil {
						t.Fatal(err)
					}
					movesBefore, seenBefore, recsBefore := m.Stats().Migrations, len(orig.seen), len(got.recs)
					for step := 0; ; step++ {
						nm, nf := len(got.recs), len(forked.recs)
						more, err := m.Step()
						fmore, ferr := f.Step()
						if err != nil || ferr != nil {
							t.Fatal(err, ferr)
						}
						if len(rule.seen) > 0 {
							if len(orig.seen) == seenBefore {
								t.Fatalf("step %d after the fork: the fork decided and the original did not", step)
							}
							o, r := orig.seen[seenBefore], rule.seen[0]
							o.move, r.move = false, false
							if o != r {
								t.Fatalf("first decision after the fork: fork saw %+v, original %+v", rule.seen[0], orig.seen[seenBefore])
							}
							t.Logf("first decision %d steps after the fork, at %v; the original answered %v", step, r.at, orig.seen[seenBefore].move)
							break
						}
						if len(orig.seen) > seenBefore {
							t.Fatalf("step %d after the fork: the original decided and the fork did not", step)
						}
						if d := diffRecords(forked.recs[nf:], got.recs[nm:]); d != "" || more != fmore || f.Now() != m.Now() || f.Stats() != m.Stats() {
							t.Fatalf("step %d after the fork, before any decision: %s; more %v and %v; fork at %v with %+v, original at %v with %+v",
								step, d, fmore, more, f.Now(), f.Stats(), m.Now(), m.Stats())
						}
						if !more {
							t.Fatal("no decision after the fork")
						}
					}
					fst, err := f.Run()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := m.Run(); err != nil {
						t.Fatal(err)
					}
					if d := diffRecords(got.recs, want.recs); d != "" {
						t.Fatalf("the original after the fork: %s", d)
					}
					yeses := int64(0)
					for _, d := range rule.seen {
						if d.move {
							yeses++
						}
					}
					if fst.Migrations-movesBefore != yeses {
						t.Errorf("the fork moved %d jobs, its rule said yes %d times", fst.Migrations-movesBefore, yeses)
					}
					if orig.seen[seenBefore].move != yes {
						disagreed[yes]++
						if diffRecords(forked.recs, got.recs[recsBefore:]) == "" {
							t.Errorf("the fork answered %v to the first decision, the original %v, and their records agree", yes, !yes)
						}
					}
				})
			}
		}
	}
	if disagreed[true] == 0 || disagreed[false] == 0 {
		t.Errorf("forks whose first answer disagreed with the original's: %v; want some of each answer", disagreed)
	}
}

// clock is a RoundRobin-like policy with state and no way to fork it.
type clock struct{ n int }

func (*clock) Name() string                         { return "clock" }
func (c *clock) Place(j *sim.Job, s *sim.State) int { c.n++; return c.n % s.Devices() }

// TestForkRefusesStateItCannotCopy: a policy or a migration rule that is a
// pointer without a fork method may hold state that a fork would share, so
// Fork refuses it, unless a rule replaces the rule; values are shared.
func TestForkRefusesStateItCannotCopy(t *testing.T) {
	tests := []struct {
		name   string
		policy sim.Policy
		rule   sim.Migrator
		mig    sim.Migrator
		want   string
	}{
		{"a pointer policy without ForkPolicy", &clock{}, nil, nil, "policy clock (*policy.clock) is a pointer, which may hold state, and has no ForkPolicy method to copy it"},
		{"a pointer rule without ForkMigrator", FIFO{}, &recorder{rule: Threshold{}}, nil, "migration rule (*policy.recorder) is a pointer, which may hold state, and has no ForkMigrator method to copy it"},
		{"a pointer rule replaced", FIFO{}, &recorder{rule: Threshold{}}, answer(true), ""},
		{"policies with fork methods", &RoundRobin{}, Threshold{}, nil, ""},
		{"values", EDF{}, Threshold{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := sim.Config{Devices: invDevs, Service: invSvc, Policy: tt.policy, Migration: sim.Migration{Decide: tt.rule}}
			in := cursor{jobs: randomWorkload(1, 10)}
			m, err := sim.New(cfg, in.next, func(*sim.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Fork(in.next, func(*sim.Record) error { return nil }, tt.mig)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Fork: %v", err)
			case tt.want != "" && (err == nil || err.Error() != "sim: fork: "+tt.want):
				t.Errorf("Fork: %v, want %q", err, "sim: fork: "+tt.want)
			}
		})
	}
}

// TestForkedPoliciesDecideAlike: a stateful policy's fork places the jobs
// that follow as the original does, and neither disturbs the other.
func TestForkedPoliciesDecideAlike(t *testing.T) {
	for _, p := range []sim.PolicyForker{NewRandom(3).(*Random), &RoundRobin{}} {
		t.Run(p.(sim.Policy).Name(), func(t *testing.T) {
			s := runState(t)
			j := &sim.Job{Batch: 1}
			pl := p.(sim.Placer)
			for range 5 {
				pl.Place(j, s)
			}
			f := p.ForkPolicy().(sim.Placer)
			var a, b []int
			for range 20 {
				b = append(b, f.Place(j, s)) // the fork first: sharing state would shift the original's
			}
			for range 20 {
				a = append(a, pl.Place(j, s))
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("original places %v, its fork %v", a, b)
			}
		})
	}
}

// runState is the State of a small simulation, for calling policies
// directly.
func runState(t *testing.T) *sim.State {
	t.Helper()
	in := cursor{jobs: randomWorkload(1, 1)}
	m, err := sim.New(sim.Config{Devices: invDevs, Service: invSvc, Policy: FIFO{}}, in.next, func(*sim.Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return m.State()
}

// BenchmarkFork measures what a counterfactual rollout costs on
// BenchmarkRun's cluster under edf+migrate, forked once a queue has built
// up: Fork alone (its cost grows with the jobs held), and a rollout, a
// fork run for a horizon of simulated time, with fresh copies of the jobs
// that arrive meanwhile.
func BenchmarkFork(b *testing.B) {
	devs := []sim.Device{
		{Name: "cpu0", Lanes: 2, Memory: 100, Speed: 1}, {Name: "cpu1", Lanes: 2, Memory: 100, Speed: 1},
		{Name: "acc0", Lanes: 2, Memory: 100, Speed: 2}, {Name: "acc1", Lanes: 2, Memory: 100, Speed: 2},
	}
	svc := noisy{secs: []float64{0.001, 0.005, 0.01}, mem: []float64{2, 5, 9}}
	const capacity = 782.0 // jobs/s, see BenchmarkRun
	const horizon = 0.5    // seconds of simulated time a rollout runs
	for _, tt := range []struct {
		load  float64
		after int // jobs arrived before the fork
	}{{0.9, 50_000}, {1.0, 50_000}, {1.2, 20_000}} {
		r := rand.New(rand.NewPCG(1, 2))
		jobs := make([]sim.Job, tt.after+int(2*horizon*capacity*tt.load)+1000)
		t := 0.0
		for i := range jobs {
			t += r.ExpFloat64() / (tt.load * capacity)
			jobs[i] = sim.Job{ID: int64(i), Arrival: t, Class: sim.Class(r.IntN(2)), Model: int32(r.IntN(3)), Batch: int32(1 + r.IntN(4)), Deadline: t + 0.1}
		}
		feed := func(from int) (next func() (*sim.Job, bool), read func() int) {
			i := from
			return func() (*sim.Job, bool) {
				if i == len(jobs) {
					return nil, false
				}
				j := new(sim.Job)
				*j = jobs[i]
				i++
				return j, true
			}, func() int { return i }
		}
		sp, _ := ParseSpec("edf+migrate")
		p, _ := New(sp.Name, Options{Seed: 1})
		cfg := sim.Config{Devices: devs, Service: svc, Policy: p, Seed: 1}
		if err := sp.Configure(&cfg, Settings{MigrationCost: 0.002}); err != nil {
			b.Fatal(err)
		}
		next, read := feed(0)
		discard := func(*sim.Record) error { return nil }
		m, err := sim.New(cfg, next, discard)
		if err != nil {
			b.Fatal(err)
		}
		for read() <= tt.after {
			if _, err := m.Step(); err != nil {
				b.Fatal(err)
			}
		}
		queued := 0
		for d := range devs {
			queued += m.State().Queued(d)
		}
		name := fmt.Sprintf("load=%.1f/queued=%d", tt.load, queued)
		b.Run(name+"/fork", func(b *testing.B) {
			for b.Loop() {
				next, _ := feed(read())
				if _, err := m.Fork(next, discard, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/rollout", func(b *testing.B) {
			var events int64
			for b.Loop() {
				next, _ := feed(read())
				f, err := m.Fork(next, discard, nil)
				if err != nil {
					b.Fatal(err)
				}
				end := f.Now() + horizon
				for more := true; more && f.Now() <= end; {
					if more, err = f.Step(); err != nil {
						b.Fatal(err)
					}
				}
				events += f.Stats().Events - m.Stats().Events
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rollouts/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/rollout")
		})
	}
}
