package schedule

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// pointFile is a sweep point's file in its memo entry: its SweepRow, with
// Load and Search left zero (they say why the point was simulated, not what
// it is).
const pointFile = "point.parquet"

// sweeper runs the load sweep's grid and the capacity search. A load u
// (a fraction of capacity) offers the first jobs at u times the cluster's
// capacity for them: their arrival times are divided by u·perUnit, the
// arrivals' span over the work's lower bound, both at load 1.
type sweeper struct {
	cfg  Config
	cl   *cluster.Cluster
	seed int64
	in   Inputs // each replication's workload: Inputs.jobsOf
	memo Memo
	prog *progress
	runs []run // whose grid and search to run

	// jobs[k] is how many jobs each point of replication k+1 simulates,
	// perUnit[k] the schedule load of its offered load 1.
	jobs    []int64
	perUnit []float64

	mu     sync.Mutex
	points map[pointOf]SweepRow
}

// pointOf names a point of the sweep: a policy's replication at a load.
type pointOf struct {
	spec string
	rep  int
	load float64
}

// newSweeper reads the first sweep.jobs jobs of each replication's
// workload once for their bounds: each replication's offered loads are
// fractions of the cluster's capacity for its own jobs. It sweeps every
// run of cfg, or those of part where part is not nil.
func newSweeper(ctx context.Context, cfg Config, cl *cluster.Cluster, seed int64, in Inputs, memo Memo, part *Shard) (*sweeper, error) {
	s := &sweeper{cfg: cfg, cl: cl, seed: seed, in: in, memo: memo, runs: runsOf(cfg, part), points: map[pointOf]SweepRow{}}
	if !s.on() {
		return s, nil
	}
	s.jobs, s.perUnit = make([]int64, cfg.Replications), make([]float64, cfg.Replications)
	for k := range cfg.Replications {
		perUnit, b, err := cl.Capacity(ctx, in.jobsOf(k+1), cfg.Sweep.Jobs)
		if err != nil {
			if k > 0 {
				return nil, fmt.Errorf("replication %d: %w", k+1, err)
			}
			return nil, err
		}
		s.jobs[k], s.perUnit[k] = b.Jobs, perUnit
	}
	return s, nil
}

// on says whether there is a grid or a search to run.
func (s *sweeper) on() bool { return len(s.cfg.Sweep.Loads) > 0 || s.cfg.Sweep.Tolerance > 0 }

// estimate is the jobs the sweep will simulate, for progress: the grid's
// exactly, the search's as a bisection across the widest gap of the grid.
func (s *sweeper) estimate() int64 {
	if !s.on() {
		return 0
	}
	points := int64(len(s.cfg.Sweep.Loads))
	if tol := s.cfg.Sweep.Tolerance; tol > 0 {
		gap, prev := 1.0, 0.0
		for _, u := range s.cfg.Sweep.Loads {
			gap, prev = max(gap, u-prev), u
		}
		points += int64(math.Ceil(math.Log2(gap / tol)))
	}
	var jobs int64
	for _, r := range s.runs {
		jobs += s.jobs[r.rep-1]
	}
	return points * jobs
}

// grid adds the grid's points of the sweeper's runs to g.
func (s *sweeper) grid(ctx context.Context, g *errgroup.Group) {
	if !s.on() {
		return
	}
	for _, r := range s.runs {
		for _, u := range s.cfg.Sweep.Loads {
			g.Go(func() error {
				_, err := s.point(ctx, r.at(u), false)
				return err
			})
		}
	}
}

// search runs the capacity search of the sweeper's runs, once the grid is
// done, and returns every point, grid and search, and each run's
// capacity.
func (s *sweeper) search(ctx context.Context) ([]SweepRow, []CapacityRow, error) {
	if !s.on() {
		return []SweepRow{}, []CapacityRow{}, nil
	}
	capacity := make([]CapacityRow, len(s.runs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, r := range s.runs {
		g.Go(func() error {
			c, err := s.capacity(gctx, r)
			capacity[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	order := map[string]int{}
	for i, p := range s.cfg.Policies {
		order[p] = i
	}
	points := make([]SweepRow, 0, len(s.points))
	for _, p := range s.points {
		points = append(points, p)
	}
	slices.SortFunc(points, func(a, b SweepRow) int {
		return cmp.Or(cmp.Compare(order[a.Policy], order[b.Policy]), cmp.Compare(a.Replication, b.Replication), cmp.Compare(a.Load, b.Load))
	})
	return points, capacity, nil
}

// capacity finds the highest load the run sustains.
func (s *sweeper) capacity(ctx context.Context, r run) (CapacityRow, error) {
	c := CapacityRow{Policy: r.spec, Replication: int32(r.rep), Target: s.cfg.Sweep.Target, Tolerance: s.cfg.Sweep.Tolerance}
	var err error
	c.SustainedLoad, c.FailedLoad, c.Points, c.Dips, err = searchCapacity(s.cfg.Sweep.Loads, s.cfg.Sweep.Tolerance, func(u float64, search bool) (bool, error) {
		return s.sustains(ctx, r.at(u), search)
	})
	return c, err
}

// searchCapacity scans the whole grid first and brackets the highest
// sustained load with it: the highest grid load that meets the target,
// and the grid load after it. It does not assume that attainment falls as
// load rises (it need not: a policy that places badly when queues are
// short can do better at a higher load), so a miss below the highest
// sustained grid load does not end the scan; dips counts those misses,
// and the report says where attainment is not monotone. Then it doubles
// loads above the grid until one fails (up to MaxSweepLoad), and bisects
// the bracket until it is at most tol wide (tol 0: no search). It returns
// the bracket and the number of loads it tried beyond the grid.
func searchCapacity(grid []float64, tol float64, sustains func(u float64, search bool) (bool, error)) (sustained, failed float64, points, dips int32, err error) {
	failed = math.Inf(1)
	met := make([]bool, len(grid))
	top := -1 // the highest grid load that meets the target
	for i, u := range grid {
		if met[i], err = sustains(u, false); err != nil {
			return 0, 0, 0, 0, err
		}
		if met[i] {
			top = i
		}
	}
	switch {
	case top >= 0:
		sustained = grid[top]
		if top+1 < len(grid) {
			failed = grid[top+1]
		}
		for _, ok := range met[:top] {
			if !ok {
				dips++
			}
		}
	case len(grid) > 0:
		failed = grid[0]
	}
	if tol == 0 {
		return sustained, failed, 0, dips, nil
	}
	try := func(u float64) (bool, error) {
		points++
		return sustains(u, true)
	}
	for math.IsInf(failed, 1) && sustained < MaxSweepLoad {
		u := min(MaxSweepLoad, max(2*sustained, 1))
		ok, err := try(u)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if !ok {
			failed = u
			break
		}
		sustained = u
	}
	for !math.IsInf(failed, 1) && failed-sustained > tol {
		u := (sustained + failed) / 2
		ok, err := try(u)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if ok {
			sustained = u
		} else {
			failed = u
		}
	}
	return sustained, failed, points, dips, nil
}

// sustains says whether the point meets the target.
func (s *sweeper) sustains(ctx context.Context, p pointOf, search bool) (bool, error) {
	r, err := s.point(ctx, p, search)
	if err != nil {
		return false, err
	}
	return r.TargetAttainment() >= s.cfg.Sweep.Target, nil
}

// point returns the point's row, simulating its unit unless the memo or an
// earlier call has it.
func (s *sweeper) point(ctx context.Context, p pointOf, search bool) (SweepRow, error) {
	s.mu.Lock()
	r, ok := s.points[p]
	s.mu.Unlock()
	if ok {
		return r, nil
	}
	u := Unit{Spec: p.spec, Replication: p.rep, Jobs: s.cfg.Sweep.Jobs, Load: p.load * s.perUnit[p.rep-1], Predictor: s.cfg.Predictor}
	r, err := s.summary(ctx, u, s.jobs[p.rep-1])
	if err != nil {
		return SweepRow{}, err
	}
	r.Load, r.Search = p.load, search
	s.mu.Lock()
	s.points[p] = r
	s.mu.Unlock()
	return r, nil
}

// summary returns unit u's summary row (of its jobs jobs), simulating it
// unless the memo has it. A row it simulates is returned as computed, not
// read back from the memo entry it writes.
func (s *sweeper) summary(ctx context.Context, u Unit, jobs int64) (SweepRow, error) {
	if s.memo == nil {
		row, err := s.simulate(ctx, u, jobs)
		if err != nil {
			return SweepRow{}, fmt.Errorf("%s: %w", u, err)
		}
		return row, nil
	}
	var built *SweepRow
	dir, err := s.memo.Get("point", unitConfig(s.cfg, u.Spec), u.KeyLines(), func(dir string) error {
		row, err := s.simulate(ctx, u, jobs)
		if err != nil {
			return err
		}
		built = &row
		return parquetio.WriteFile(filepath.Join(dir, pointFile), []SweepRow{row}, nil)
	})
	if err != nil {
		return SweepRow{}, fmt.Errorf("%s: %w", u, err)
	}
	if built != nil {
		return *built, nil
	}
	rows, err := parquetio.ReadAll[SweepRow](filepath.Join(dir, pointFile))
	if err != nil {
		return SweepRow{}, fmt.Errorf("%s: %w", u, err)
	}
	if len(rows) != 1 || rows[0].Policy != u.Spec || rows[0].Replication != int32(u.Replication) || rows[0].ScheduleLoad != u.Load {
		return SweepRow{}, fmt.Errorf("%s: the memo entry %s holds another point: %+v", u, dir, rows)
	}
	return rows[0], nil
}

// simulate runs the unit on its jobs jobs, summarizing it as it goes (no
// trace or devices file is written), and returns its summary row.
func (s *sweeper) simulate(ctx context.Context, u Unit, jobs int64) (SweepRow, error) {
	devices := make([]string, len(s.cl.Devices()))
	lanes := make([]int32, len(devices))
	for d, dev := range s.cl.Devices() {
		devices[d], lanes[d] = dev.Name, int32(dev.Lanes)
	}
	sm := &summarizer{trace: metrics.NewTrace(u.Spec, devices, int(jobs)), busy: make([]float64, len(devices))}
	open := func(string, *cluster.Cluster) (sink, error) { return sm, nil }
	if err := runUnit(ctx, u, s.cfg, s.cl, s.seed, s.in.jobsOf(u.Replication), jobs, unitOutput{open: open}, s.prog, nil); err != nil {
		return SweepRow{}, err
	}
	if err := sm.trace.Finish(); err != nil {
		return SweepRow{}, err
	}
	sum := metrics.Summarize(sm.trace, sm.busy, metrics.Cluster{Devices: devices, Lanes: lanes}, metrics.Bounds{}, nil)
	inter := math.NaN()
	for _, c := range sum.Classes {
		if c.Class == generatespec.ClassInteractive {
			inter = 1 - c.SLOViolation
		}
	}
	return SweepRow{
		Policy: u.Spec, Replication: int32(u.Replication), ScheduleLoad: u.Load, Jobs: sum.Jobs,
		SLOAttainment: 1 - sum.SLOViolation, InteractiveSLOAttainment: inter,
		MeanE2ES: sum.E2E.Mean, P99E2ES: sum.E2E.P99,
		ThroughputJobsPerS: sum.Throughput, GoodputJobsPerS: sum.Goodput,
	}, nil
}

// summarizer is the sink of a sweep point: it keeps the trace and each
// device's busy lane-seconds in memory, the Trace and busy times that
// metrics.ReadTrace and metrics.ReadBusy would read from the recorder's
// files of the same simulation (TestSummarizerReadsAsTheFiles), without
// writing and reading them back.
type summarizer struct {
	trace *metrics.Trace
	busy  []float64
}

// classCodes are the trace's class codes of the simulator's classes.
var classCodes = func() (codes [2]uint8) {
	for _, c := range []sim.Class{sim.Interactive, sim.Batch} {
		code, ok := metrics.ClassCode(cluster.ClassName(c))
		if !ok {
			panic("schedule: class " + cluster.ClassName(c) + " has no trace code")
		}
		codes[c] = code
	}
	return codes
}()

// record keeps x's job as the recorder's trace row would hold it.
func (s *summarizer) record(x *sim.Record) error {
	j := x.Job
	r := metrics.Row{JobID: j.ID, Class: classCodes[j.Class], Device: metrics.NoDevice, Arrival: j.Arrival, Start: x.Start, End: x.End}
	if x.Rejected() {
		r.Rejected = true
	} else {
		r.Device, r.BatchSize = int16(x.Device), x.BatchSize
		r.Wait, r.Service, r.E2E = x.Start-j.Arrival, x.End-x.Start, x.End-j.Arrival
		r.SLOMet = x.End <= j.Deadline
	}
	s.trace.Append(r)
	return nil
}

// batch adds x's time to its device's busy lane-seconds, in the order the
// recorder's devices rows hold the batches.
func (s *summarizer) batch(x *sim.BatchRecord) error {
	s.busy[x.Device] += x.End - x.Start
	return nil
}

func (s *summarizer) close() error { return nil }
func (s *summarizer) abort()       {}
