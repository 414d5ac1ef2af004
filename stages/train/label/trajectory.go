package label

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// decision is one migration decision of a scouted trajectory: the step of
// the simulation it came in (how many steps had run before it), its place
// among that step's decisions, and the job it was about.
type decision struct {
	step    int64
	ordinal int32
	job     int64
}

// trajectory is one simulation of a segment of the workload.
type trajectory struct {
	opts    Options
	src     Source
	pass    int32
	segment int32
	jobs    []sim.Job
	seed    uint64 // the trajectory's own, from which its draws come
	prog    *progress

	cfg       sim.Config
	rule      sim.Migrator // the Threshold rule, of every later decision
	behaviour sim.Migrator // the rule with random moves

	decisions []decision
	played    []bool // by decision, whether a round has played it out
	nplayed   int
	chosen    []int // this round's decisions, by index, ascending
	points    []Point
	index     []int    // each point's decision
	keys      []uint64 // each point's subsample key
	stats     Stats
}

// setup configures the behaviour simulation.
func (t *trajectory) setup() error {
	cfg, err := t.src.SimConfig(behaviourSpec, mix(t.seed, 1, 0), mix(t.seed, 2, 0))
	if err != nil {
		return err
	}
	if cfg.Migration.Decide == nil {
		return fmt.Errorf("behaviour policy %s has no migration rule", behaviourSpec)
	}
	t.rule = cfg.Migration.Decide
	t.behaviour = explorer{rule: t.rule, share: t.opts.Explore, seed: mix(t.seed, 3, 0)}
	cfg.Migration.Decide = t.behaviour
	t.cfg = cfg
	return nil
}

// recorder notes every decision of a scouted run and decides as the
// behaviour rule does.
type recorder struct {
	rule sim.Migrator
	step *int64
	out  *[]decision
}

func (r recorder) Migrate(f *sim.MigrationFeatures) bool {
	d := decision{step: *r.step, job: f.Job.ID}
	if n := len(*r.out); n > 0 && (*r.out)[n-1].step == d.step {
		d.ordinal = (*r.out)[n-1].ordinal + 1
	}
	*r.out = append(*r.out, d)
	return r.rule.Migrate(f)
}

// scout runs the trajectory to its end and records its decisions.
func (t *trajectory) scout(ctx context.Context) error {
	if err := t.setup(); err != nil {
		return err
	}
	var step int64
	cfg := t.cfg
	cfg.Migration.Decide = recorder{rule: t.behaviour, step: &step, out: &t.decisions}
	r := &runner{live: map[int64]tracked{}}
	s, err := sim.New(cfg, t.feeder(r), func(rec *sim.Record) error { delete(r.live, rec.Job.ID); return nil })
	if err != nil {
		return err
	}
	for ; ; step++ {
		if step%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		more, err := s.Step()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// choose picks this round's decisions to play out among those not played
// yet: each with probability share, by a hash of the trajectory's seed,
// the round and its index.
func (t *trajectory) choose(share float64, round uint64) {
	if t.played == nil {
		t.played = make([]bool, len(t.decisions))
	}
	t.chosen = t.chosen[:0]
	for i := range t.decisions {
		if !t.played[i] && unit(mix(t.seed, 4+round<<8, uint64(i))) < share {
			t.chosen = append(t.chosen, i)
			t.played[i] = true
			t.nplayed++
		}
	}
}

// sortPoints puts the points in the order of their decisions, whatever
// round played them.
func (t *trajectory) sortPoints() {
	idx := make([]int, len(t.points))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(t.index[a], t.index[b]) })
	points, keys, index := make([]Point, len(idx)), make([]uint64, len(idx)), make([]int, len(idx))
	for i, j := range idx {
		points[i], keys[i], index[i] = t.points[j], t.keys[j], t.index[j]
	}
	t.points, t.keys, t.index = points, keys, index
}

// label runs the trajectory again and plays out each chosen decision.
func (t *trajectory) label(ctx context.Context) error {
	if len(t.chosen) == 0 {
		return nil
	}
	main := &runner{live: map[int64]tracked{}}
	var err error
	main.s, err = sim.New(t.cfg, t.feeder(main), func(rec *sim.Record) error { delete(main.live, rec.Job.ID); return nil })
	if err != nil {
		return err
	}
	first, last := t.jobs[0].Arrival, t.jobs[len(t.jobs)-1].Arrival
	var step int64
	for _, i := range t.chosen {
		d := t.decisions[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		for ; step < d.step; step++ {
			more, err := main.s.Step()
			if err != nil {
				return err
			}
			if !more {
				return fmt.Errorf("the run ended at step %d, before the decision scouted at step %d", step, d.step)
			}
		}
		key := mix(t.seed, 5, uint64(i))
		p, ok, err := t.probe(main, d, t.compared(key))
		if err != nil {
			return err
		}
		t.prog.add(1, 0)
		if !ok {
			continue
		}
		p.Block = t.segment*BlocksPerSegment + block(p.Time, first, last)
		t.points = append(t.points, p)
		t.index = append(t.index, i)
		t.keys = append(t.keys, key)
	}
	return nil
}

// compared says whether the decision whose subsample key is key is judged
// under Options.Alternatives too: a share Compare/Decisions of the
// decisions, those with the smallest keys, which the subsample keeps
// first.
func (t *trajectory) compared(key uint64) bool {
	return len(t.opts.Alternatives) > 0 && unit(key) < float64(t.opts.Compare)/float64(t.opts.Decisions)
}

// block is which of BlocksPerSegment equal spans of [first, last] holds
// time; times past last (the segment draining) fall in the last span.
func block(time, first, last float64) int32 {
	if !(last > first) {
		return 0
	}
	return int32(min(max((time-first)/(last-first)*BlocksPerSegment, 0), BlocksPerSegment-1))
}

// tracked is what a simulation knows of a job it was handed: when it
// arrives and its deadline.
type tracked struct{ arrival, deadline float64 }

// runner is one simulation (the behaviour run or a branch) with the jobs
// handed to it and not yet done.
type runner struct {
	s    *sim.Sim
	live map[int64]tracked
	// next is the position in the segment of the next job to hand out.
	next int
	// fed, if not nil, is told of every job handed out.
	fed func(id int64, tr tracked)
}

// feeder hands out copies of the trajectory's jobs from r.next on, noting
// each in r.live.
func (t *trajectory) feeder(r *runner) func() (*sim.Job, bool) {
	return func() (*sim.Job, bool) {
		if r.next == len(t.jobs) {
			return nil, false
		}
		j := new(sim.Job)
		*j = t.jobs[r.next]
		r.next++
		tr := tracked{j.Arrival, j.Deadline}
		r.live[j.ID] = tr
		if r.fed != nil {
			r.fed(j.ID, tr)
		}
		return j, true
	}
}
