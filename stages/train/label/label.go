// Package label labels migration decisions by simulated counterfactuals:
// it runs the simulator on a workload under a behaviour policy and, at
// chosen decisions, forks the whole simulation and plays the decision both
// ways, move and stay, over a bounded horizon. The branch with the lower
// objective gives the label. Nothing here is a formula for when a move
// pays: the simulator says.
//
// # The behaviour policy
//
// edf+migrate, whose migration rule is the Threshold rule except for a
// share (Options.Explore) of its decisions, which are taken at random, so
// that the states the labels are drawn from include the aftermath of moves
// the rule would not make. The random choices are a hash of the seed and
// the job, so a run is a function of its inputs.
//
// # Trajectories and decisions
//
// The workload is cut into Segments pieces of consecutive jobs, each
// simulated from an empty cluster. One simulation of a segment is a
// trajectory; a pass simulates every segment once, each pass with its own
// seeds (its own ground-truth draws and random moves), so that a workload
// that makes fewer migration decisions than Options.Decisions asks for is
// run again, up to MaxPasses times, from other draws.
//
// A trajectory is first scouted: run to its end with a recorder that
// notes, for every migration decision, the step of the simulation it came
// in and its place among that step's decisions. Labelling goes in rounds:
// a seeded share of the decisions not yet played out is chosen in every
// trajectory, enough for the points still missing at the share of near
// ties measured so far (none, the first round), with 2% to spare, and
// another pass is scouted first when too few decisions are left. Each
// trajectory is run again, and exactly before each chosen decision's step
// the simulation is forked twice (sim.Sim.Fork: an exact copy). In each branch the
// decisions of that step before the chosen one follow the behaviour rule,
// as in the scouted run; the chosen one is taken in one branch and refused
// in the other; every later decision follows the Threshold rule. A branch
// whose chosen decision is not the scouted one (another job) is an error:
// forking is exact, and the test suite holds it to that.
//
// Both branches see the same service times, since ground-truth draws are
// keyed to jobs (common random numbers), so the difference between them is
// the decision's doing.
//
// # The objective
//
// By default the jobs in the system at the decision (arrived and not
// done) are the ones it is judged on. ObjectiveLatency sums their
// end-to-end latency from the decision on: the time from the decision to
// each one's end, a job still in the system at the horizon counting the
// whole horizon. ObjectiveSLO counts those that miss their deadline: done
// late, or not done by a deadline that the horizon passed. A branch ends
// once every judged job is done, or at the horizon.
//
// Judged so, a move is neither charged nor credited for what it does to
// the jobs that come after it: the lane it takes may be one a later
// arrival would have had, and the queue it shortens is one later arrivals
// join. With Options.Arrivals the jobs that arrive after the decision and
// no later than the horizon are judged too, each from its arrival: its
// latency term runs from its arrival to the earlier of its end and the
// horizon, and under ObjectiveSLO it counts if it misses its deadline by
// the same rule. Both branches are handed the same arrivals and the same
// service times, so they judge the same jobs.
//
// The branches then run in step, the one behind in simulated time first,
// to the horizon, or until no judged job is left and no job can still
// arrive before the horizon, or until they meet again: the first moment
// both clusters are empty with the same job to arrive next. From there
// they run alike (the same jobs, the same service times, and rules that
// decide by the state alone), so every later arrival would add the same
// term to both objectives: it is left out. That changes no label; it
// measures a near tie against the jobs the decision could still touch,
// not every job the horizon holds, and it keeps the branches short. An empty branch is not run on to its next arrival while the
// other is behind it, so the moment is not stepped over.
//
// A point whose branches differ by no more than Options.Tie of the larger
// objective is a near tie, and is dropped, not weighted: its label would
// be noise (an exact tie is common: a move often changes nothing the
// judged jobs see).
//
// # How much the judgement matters
//
// Whether a horizon or the arrivals change the labels is measured, not
// assumed: Options.Alternatives are other judgements (Judge: a horizon,
// arrivals or not) of the same forks, and a seeded sample of about
// Options.Compare of the points is judged under each of them as well
// (Point.Alternatives). The branches are the same simulations whatever
// judges them, since the rule after the decision does not depend on the
// judgement, so every judgement of a point comes from one pair of branches,
// run until the longest of them is done; each judgement comes out as it
// would alone. A sampled point is chosen by its subsample key, before it
// is played out, and the subsample keeps it.
//
// The points are in the order of their trajectories (pass, then segment)
// and of their decisions, whatever round played them. When more points
// than Options.Decisions are labelled, a seeded subsample of exactly
// Options.Decisions is kept, in that order.
//
// # Blocks
//
// Each point carries the block of the workload it came from: its segment
// and which of BlocksPerSegment equal spans of the segment's arrivals the
// decision fell in. Points of one block share most of their state, across
// passes too (the same jobs), so a caller that splits points for training
// and testing splits whole blocks.
//
// # Speed
//
// Trajectories run on their own goroutines, at most GOMAXPROCS at once;
// the points are concatenated in (pass, segment) order, so the result does
// not depend on the cores.
package label

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// The objectives a point's branches are compared on.
const (
	ObjectiveLatency = "latency"
	ObjectiveSLO     = "slo"
)

const (
	// Segments is how many pieces of the workload are simulated apart.
	Segments = 8
	// BlocksPerSegment is how many spans of its arrivals a segment's
	// points are grouped into (Point.Block).
	BlocksPerSegment = 25
	// MaxPasses bounds how many times the workload is simulated.
	MaxPasses = 16
	// oversample is how many more decisions than the points missing a
	// round plays out, at the measured share of near ties: a little, so
	// that a second round is rarely needed and few points are dropped.
	oversample = 1.02
)

// Options set the labelling.
type Options struct {
	// Decisions is how many labelled points to collect, over all
	// trajectories; fewer come back if MaxPasses of the workload make too
	// few decisions.
	Decisions int
	// Horizon bounds each branch, seconds of simulated time after the
	// decision.
	Horizon float64
	// Arrivals judges the jobs that arrive after the decision and no
	// later than the horizon too (see the package doc).
	Arrivals bool
	// Alternatives are other judgements of the forks, each applied to a
	// sample of the points (Point.Alternatives), to measure how much the
	// labels depend on the judgement.
	Alternatives []Judge
	// Compare is about how many of the points the sample holds: each
	// point is in it with probability Compare/Decisions.
	Compare int
	// Objective is ObjectiveLatency or ObjectiveSLO.
	Objective string
	// Tie is the relative difference under which a point is dropped.
	Tie float64
	// Explore is the share of the behaviour policy's decisions taken at
	// random.
	Explore float64
	// Seed seeds the behaviour policy, the choice of decisions and the
	// subsample.
	Seed uint64
	// Progress, if not nil, is told how many chosen decisions are played
	// out so far, of how many.
	Progress func(done, total int)
}

// Point is one labelled decision.
type Point struct {
	// Pass and Segment name the trajectory the point came from, Block
	// the span of the workload (see the package doc), and Time is the
	// simulated time of the decision.
	Pass, Segment, Block int32
	Time                 float64
	// JobID is the job the decision was about, From and To the devices.
	JobID    int64
	From, To int32
	// Features are the decision's inputs, sim.FeatureNames's order.
	Features [sim.NumFeatures]float32
	// Gain is the Threshold rule's predicted gain, seconds.
	Gain float64
	// Judged is how many jobs the branches were judged on: those in the
	// system at the decision, and with Options.Arrivals those that
	// arrived after it, no later than the horizon.
	Judged int32
	// Stay and Move are the branches' objectives.
	Stay, Move float64
	// Migrate is the label: moving did better.
	Migrate bool
	// Alternatives are the point judged under each of
	// Options.Alternatives, in order, if it is in the compared sample;
	// nil if not.
	Alternatives []Verdict
}

// Stats describe a labelling run.
type Stats struct {
	// Passes is how many times the workload was simulated, Decisions
	// how many migration decisions those runs made.
	Passes    int
	Decisions int64
	// Probes counts the decisions played out both ways; Ties those
	// dropped as near ties; Dropped the labelled points beyond
	// Options.Decisions left out of the subsample.
	Probes, Ties, Dropped int64
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
	case !(opts.Tie >= 0 && opts.Tie < 1):
		return nil, Stats{}, fmt.Errorf("label: tie %v: want a share in [0, 1)", opts.Tie)
	case opts.Compare < 0:
		return nil, Stats{}, fmt.Errorf("label: want a sample of at least 0 points to compare, got %d", opts.Compare)
	case len(src.Jobs) == 0:
		return nil, Stats{}, errors.New("label: no jobs")
	}
	for i, j := range opts.Alternatives {
		if !(j.Horizon > 0) || math.IsInf(j.Horizon, 0) {
			return nil, Stats{}, fmt.Errorf("label: alternative %d: want a positive horizon, got %v", i+1, j.Horizon)
		}
	}
	var (
		st    Stats
		trajs []*trajectory
		prog  = progress{report: opts.Progress}
		// yield is the share of probes that give a point (not a near
		// tie): hoped to be all at first, then measured.
		yield = 1.0
	)
	scout := func() error {
		ts := segments(src, opts, int32(st.Passes))
		if err := each(ctx, ts, (*trajectory).scout); err != nil {
			return fmt.Errorf("label: %w", err)
		}
		for _, t := range ts {
			t.prog = &prog
			st.Decisions += int64(len(t.decisions))
		}
		trajs = append(trajs, ts...)
		st.Passes++
		return nil
	}
	// Rounds: choose enough unplayed decisions for the points still
	// missing, scouting more passes when too few are left, and play them.
	for round := uint64(0); ; round++ {
		have := 0
		for _, t := range trajs {
			have += len(t.points)
		}
		need := opts.Decisions - have
		if need <= 0 {
			break
		}
		probes := int(math.Ceil(oversample * float64(need) / yield))
		for unplayed(trajs) < probes && st.Passes < MaxPasses {
			if err := scout(); err != nil {
				return nil, Stats{}, err
			}
		}
		avail := unplayed(trajs)
		if avail == 0 {
			break
		}
		share := min(1, float64(probes)/float64(avail))
		for _, t := range trajs {
			t.choose(share, round)
			prog.add(0, len(t.chosen))
		}
		if err := each(ctx, trajs, (*trajectory).label); err != nil {
			return nil, Stats{}, fmt.Errorf("label: %w", err)
		}
		var probed, ties int64
		for _, t := range trajs {
			probed += t.stats.Probes
			ties += t.stats.Ties
		}
		yield = max(0.01, float64(probed-ties)/float64(probed))
	}
	var points []Point
	var keys []uint64
	for _, t := range trajs {
		t.sortPoints()
		points = append(points, t.points...)
		keys = append(keys, t.keys...)
		st.Probes += t.stats.Probes
		st.Ties += t.stats.Ties
		st.Events += t.stats.Events
	}
	if len(points) > opts.Decisions {
		st.Dropped = int64(len(points) - opts.Decisions)
		points = subsample(points, keys, opts.Decisions)
	}
	return points, st, nil
}

// unplayed counts the scouted decisions not yet played out.
func unplayed(ts []*trajectory) int {
	n := 0
	for _, t := range ts {
		n += len(t.decisions) - t.nplayed
	}
	return n
}

// segments returns the trajectories of one pass.
func segments(src Source, opts Options, pass int32) []*trajectory {
	n := len(src.Jobs)
	var ts []*trajectory
	for k := range Segments {
		lo, hi := k*n/Segments, (k+1)*n/Segments
		if hi == lo {
			continue
		}
		ts = append(ts, &trajectory{opts: opts, src: src, pass: pass, segment: int32(k), jobs: src.Jobs[lo:hi],
			seed: mix(opts.Seed, uint64(pass), uint64(k))})
	}
	return ts
}

// each runs f on every trajectory, at most GOMAXPROCS at once.
func each(ctx context.Context, ts []*trajectory, f func(*trajectory, context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, t := range ts {
		g.Go(func() error {
			if err := f(t, gctx); err != nil {
				return fmt.Errorf("pass %d segment %d (jobs %d to %d): %w", t.pass, t.segment, t.jobs[0].ID, t.jobs[len(t.jobs)-1].ID, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// subsample keeps the n points with the smallest keys, in their order.
func subsample(points []Point, keys []uint64, n int) []Point {
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(a, b)) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]Point, n)
	for i, j := range idx {
		out[i] = points[j]
	}
	return out
}

// progress counts the decisions played out over the trajectories.
type progress struct {
	mu     sync.Mutex
	done   int
	total  int
	report func(done, total int)
}

// add counts done more decisions played out, of total more chosen.
func (p *progress) add(done, total int) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += done
	p.total += total
	p.report(p.done, p.total)
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
	if unit(h) < e.share {
		return h&1 == 1
	}
	return e.rule.Migrate(f)
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

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
