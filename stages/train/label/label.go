// Package label labels migration decisions by simulated counterfactuals:
// it runs the simulator on a workload under a behaviour policy and, at
// sampled moments, forks the whole simulation and plays the next migration
// decision both ways, move and stay, over a bounded horizon. The branch
// with the lower objective gives the label. Nothing here is a formula for
// when a move pays: the simulator says.
//
// # The behaviour policy
//
// edf+migrate, whose migration rule is the Threshold rule except for a
// share (Options.Explore) of its decisions, which are taken at random, so
// that the states the labels are drawn from include the aftermath of moves
// the rule would not make. The random choices are a hash of the seed and
// the job, so a run is a function of its inputs.
//
// # A decision point
//
// Every so many events (a seeded gap, so that the points spread over the
// workload instead of crowding where decisions are dense), the simulation
// is forked twice (sim.Sim.Fork: an exact copy). Each branch runs until its
// next migration decision, which one branch takes and the other refuses;
// every later decision in either branch follows the Threshold rule. A fork
// with no decision within maxProbeEvents events is dropped, and the
// behaviour run goes on. Both branches see the same service times, since
// ground-truth draws are keyed to jobs (common random numbers), so the
// difference between them is the decision's doing.
//
// The jobs in the system at the decision (arrived and not done) are the
// ones it is judged on. ObjectiveLatency sums their end-to-end latency from
// the decision on: the time from the decision to each one's end, a job
// still in the system at the horizon counting the whole horizon.
// ObjectiveSLO counts those that miss their deadline: done late, or not
// done by a deadline that the horizon passed. A branch ends once every
// judged job is done, or at the horizon. A point whose branches differ by
// less than Options.Tie of the larger objective is a near tie, and is
// dropped: its label would be noise (an exact tie is common: the move
// often changes nothing the judged jobs see).
//
// # Speed
//
// The workload is cut into a fixed number of segments (Segments), each
// simulated from an empty cluster by one goroutine, at most GOMAXPROCS at
// once; the points are concatenated in segment order, so the result does
// not depend on the cores.
package label

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// The objectives a point's branches are compared on.
const (
	ObjectiveLatency = "latency"
	ObjectiveSLO     = "slo"
)

// Segments is how many pieces of the workload are simulated apart.
const Segments = 8

// maxProbeEvents bounds how far a fork runs looking for its decision.
const maxProbeEvents = 200

// Options set the labelling.
type Options struct {
	// Decisions is how many labelled points to collect, over all
	// segments; fewer come back if the workload runs out.
	Decisions int
	// Horizon bounds each branch, seconds of simulated time after the
	// decision.
	Horizon float64
	// Objective is ObjectiveLatency or ObjectiveSLO.
	Objective string
	// Tie is the relative difference under which a point is dropped.
	Tie float64
	// Explore is the share of the behaviour policy's decisions taken at
	// random.
	Explore float64
	// Seed seeds the behaviour policy, the gaps and the draws.
	Seed uint64
	// Progress, if not nil, is told how many points are labelled so far.
	Progress func(done, total int)
}

// Point is one labelled decision.
type Point struct {
	// Segment is the workload segment it came from, and Time the
	// simulated time of the decision.
	Segment int32
	Time    float64
	// JobID is the job the decision was about, From and To the devices.
	JobID    int64
	From, To int32
	// Features are the decision's inputs, sim.FeatureNames's order.
	Features [sim.NumFeatures]float32
	// Gain is the Threshold rule's predicted gain, seconds.
	Gain float64
	// Judged is how many jobs were in the system at the decision.
	Judged int32
	// Stay and Move are the branches' objectives.
	Stay, Move float64
	// Migrate is the label: moving did better.
	Migrate bool
}

// Stats describe a labelling run.
type Stats struct {
	// Probes counts forks looked at; NoDecision those without a decision
	// within maxProbeEvents events; Ties the points dropped as near ties.
	Probes, NoDecision, Ties int64
	// Events counts the branches' simulated events.
	Events int64
}

// Source is what the labeller simulates: the jobs in arrival order and a
// factory of the simulation's configuration for a policy spec.
type Source struct {
	Jobs      []sim.Job
	SimConfig func(spec string, simSeed, policySeed uint64) (sim.Config, error)
}

// behaviourSpec is the behaviour policy.
const behaviourSpec = "edf+migrate"

// Run labels decision points on src.
func Run(ctx context.Context, src Source, opts Options) ([]Point, Stats, error) {
	switch {
	case opts.Decisions < 1:
		return nil, Stats{}, fmt.Errorf("label: want at least 1 decision, got %d", opts.Decisions)
	case !(opts.Horizon > 0) || math.IsInf(opts.Horizon, 0):
		return nil, Stats{}, fmt.Errorf("label: want a positive horizon, got %v", opts.Horizon)
	case opts.Objective != ObjectiveLatency && opts.Objective != ObjectiveSLO:
		return nil, Stats{}, fmt.Errorf("label: unknown objective %q", opts.Objective)
	case len(src.Jobs) == 0:
		return nil, Stats{}, errors.New("label: no jobs")
	}
	results := make([]segmentResult, Segments)
	var prog progress
	prog.total, prog.report = opts.Decisions, opts.Progress
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	n := len(src.Jobs)
	for k := range Segments {
		lo, hi := k*n/Segments, (k+1)*n/Segments
		quota := opts.Decisions/Segments + boolInt(k < opts.Decisions%Segments)
		if hi == lo || quota == 0 {
			continue
		}
		g.Go(func() error {
			seg := &segment{ctx: gctx, opts: opts, src: src, index: int32(k), jobs: src.Jobs[lo:hi], quota: quota, prog: &prog}
			r, err := seg.run()
			results[k] = r
			if err != nil {
				return fmt.Errorf("label: segment %d (jobs %d to %d): %w", k, lo, hi-1, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, Stats{}, err
	}
	var points []Point
	var st Stats
	for _, r := range results {
		points = append(points, r.points...)
		st.Probes += r.stats.Probes
		st.NoDecision += r.stats.NoDecision
		st.Ties += r.stats.Ties
		st.Events += r.stats.Events
	}
	return points, st, nil
}

// progress counts the points labelled over the segments.
type progress struct {
	mu     sync.Mutex
	done   int
	total  int
	report func(done, total int)
}

func (p *progress) add(n int) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.report(p.done, p.total)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type segmentResult struct {
	points []Point
	stats  Stats
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
}

type segment struct {
	ctx   context.Context
	opts  Options
	src   Source
	index int32
	jobs  []sim.Job
	quota int
	prog  *progress
	cfg   sim.Config
	rule  sim.Migrator
}

// feeder hands out copies of the segment's jobs from r.next on, noting
// each in r.live.
func (g *segment) feeder(r *runner) func() (*sim.Job, bool) {
	return func() (*sim.Job, bool) {
		if r.next == len(g.jobs) {
			return nil, false
		}
		j := new(sim.Job)
		*j = g.jobs[r.next]
		r.next++
		r.live[j.ID] = tracked{j.Arrival, j.Deadline}
		return j, true
	}
}

func (g *segment) run() (segmentResult, error) {
	var res segmentResult
	simSeed, policySeed := mix(g.opts.Seed, uint64(g.index), 1), mix(g.opts.Seed, uint64(g.index), 2)
	cfg, err := g.src.SimConfig(behaviourSpec, simSeed, policySeed)
	if err != nil {
		return res, err
	}
	if cfg.Migration.Decide == nil {
		return res, fmt.Errorf("behaviour policy %s has no migration rule", behaviourSpec)
	}
	g.cfg, g.rule = cfg, cfg.Migration.Decide
	cfg.Migration.Decide = explorer{rule: g.rule, share: g.opts.Explore, seed: mix(g.opts.Seed, uint64(g.index), 3)}
	main := &runner{live: map[int64]tracked{}}
	main.s, err = sim.New(cfg, g.feeder(main), func(r *sim.Record) error { delete(main.live, r.Job.ID); return nil })
	if err != nil {
		return res, err
	}
	// Gaps between probes: about three events a job, spread so that the
	// quota takes half the segment's events if every probe gave a point.
	meanGap := max(2, 3*len(g.jobs)/(2*g.quota))
	rng := mix(g.opts.Seed, uint64(g.index), 4)
	for len(res.points) < g.quota {
		rng = mix(rng, 5, 6)
		gap := 1 + int(rng%uint64(2*meanGap))
		more := true
		for i := 0; i < gap && more; i++ {
			if more, err = main.s.Step(); err != nil {
				return res, err
			}
		}
		if !more {
			break
		}
		if err := g.ctx.Err(); err != nil {
			return res, err
		}
		p, ok, err := g.probe(main, &res.stats)
		if err != nil {
			return res, err
		}
		if ok {
			res.points = append(res.points, p)
			g.prog.add(1)
		}
	}
	return res, nil
}

// forced is a branch's migration rule: its first decision is Take, noted
// with the state at that moment; the rest follow the rule.
type forced struct {
	g     *segment
	r     *runner
	take  bool
	rule  sim.Migrator
	fired bool
	at    float64
	feat  sim.MigrationFeatures
	vec   [sim.NumFeatures]float32
	// judged are the jobs in the system at the decision not yet done,
	// and n how many there were.
	judged map[int64]tracked
	n      int
}

func (f *forced) Migrate(m *sim.MigrationFeatures) bool {
	if f.fired {
		return f.rule.Migrate(m)
	}
	f.fired, f.at, f.feat = true, m.Now, *m
	m.Vector(&f.vec)
	f.judged = map[int64]tracked{}
	for id, t := range f.r.live {
		if t.arrival <= m.Now {
			f.judged[id] = t
		}
	}
	f.n = len(f.judged)
	return f.take
}

// branch forks main with the next decision forced to take, and runs it to
// the end of its judgement; ok is false when no decision came.
func (g *segment) branch(main *runner, take bool, st *Stats) (obj float64, f *forced, ok bool, err error) {
	r := &runner{live: make(map[int64]tracked, len(main.live)), next: main.next}
	for id, t := range main.live {
		r.live[id] = t
	}
	f = &forced{g: g, r: r, take: take, rule: g.rule}
	var done []float64 // the judged jobs' objective terms, as they end
	emit := func(rec *sim.Record) error {
		delete(r.live, rec.Job.ID)
		if t, judged := f.judged[rec.Job.ID]; judged && f.fired {
			done = append(done, g.term(t, rec.End, f.at))
			delete(f.judged, rec.Job.ID)
		}
		return nil
	}
	if r.s, err = main.s.Fork(g.feeder(r), emit, f); err != nil {
		return 0, nil, false, err
	}
	for i := 0; !f.fired; i++ {
		if i == maxProbeEvents {
			st.Events += int64(i)
			return 0, f, false, nil
		}
		more, err := r.s.Step()
		if err != nil {
			return 0, nil, false, err
		}
		if !more {
			st.Events += int64(i)
			return 0, f, false, nil
		}
	}
	end := f.at + g.opts.Horizon
	events := int64(0)
	for len(f.judged) > 0 && r.s.Now() <= end {
		more, err := r.s.Step()
		if err != nil {
			return 0, nil, false, err
		}
		events++
		if !more {
			break
		}
	}
	st.Events += events
	// done may hold ends past the horizon, from the last step.
	for _, v := range done {
		obj += v
	}
	for _, t := range f.judged {
		obj += g.term(t, math.Inf(1), f.at)
	}
	return obj, f, true, nil
}

// term is one judged job's part of a branch's objective, for a job that
// ended at end (+Inf: not by the horizon) after a decision at.
func (g *segment) term(t tracked, end, at float64) float64 {
	horizon := at + g.opts.Horizon
	if g.opts.Objective == ObjectiveSLO {
		if min(end, horizon) > t.deadline { // late, or not done by a deadline the horizon passed
			return 1
		}
		return 0
	}
	return min(end, horizon) - at
}

// probe labels the next decision after main's current state, if one comes.
func (g *segment) probe(main *runner, st *Stats) (Point, bool, error) {
	st.Probes++
	move, fm, ok, err := g.branch(main, true, st)
	if err != nil || !ok {
		if err == nil {
			st.NoDecision++
		}
		return Point{}, false, err
	}
	stay, fs, ok, err := g.branch(main, false, st)
	if err != nil {
		return Point{}, false, err
	}
	if !ok || fs.at != fm.at || fs.feat.Job.ID != fm.feat.Job.ID {
		// The branches are the same simulation up to the decision.
		return Point{}, false, fmt.Errorf("the branches' first decisions differ: job %d at %v against job %d at %v (ok %v)",
			fm.feat.Job.ID, fm.at, fs.feat.Job.ID, fs.at, ok)
	}
	if math.Abs(move-stay) <= g.opts.Tie*max(move, stay) {
		st.Ties++
		return Point{}, false, nil
	}
	return Point{
		Segment: g.index, Time: fm.at, JobID: fm.feat.Job.ID, From: int32(fm.feat.From), To: int32(fm.feat.To),
		Features: fm.vec, Gain: fm.feat.Gain(), Judged: int32(fm.n),
		Stay: stay, Move: move, Migrate: move < stay,
	}, true, nil
}

// explorer is the behaviour policy's migration rule: the rule, except for
// a share of decisions decided by a coin keyed to the job and the time.
type explorer struct {
	rule  sim.Migrator
	share float64
	seed  uint64
}

func (e explorer) Migrate(f *sim.MigrationFeatures) bool {
	h := mix(e.seed, uint64(f.Job.ID), math.Float64bits(f.Now))
	if float64(h>>11)/(1<<53) < e.share {
		return h&1 == 1
	}
	return e.rule.Migrate(f)
}

// mix hashes its arguments (splitmix64 steps).
func mix(a, b, c uint64) uint64 {
	x := a
	for _, v := range [2]uint64{b, c} {
		x ^= v + 0x9e3779b97f4a7c15 + x<<6 + x>>2
		x += 0x9e3779b97f4a7c15
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
	}
	return x
}
