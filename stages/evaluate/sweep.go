package evaluate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/metrics"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/schedule"
)

// sweepSchema names the layout of a memoized sweep point; bump it when a
// point's file changes, so that old entries are not read as new ones.
const sweepSchema = "evaluate sweep point v1"

// pointFile is a sweep point's file in its memo entry: its metric rows.
const pointFile = "point.parquet"

// The metrics a sweep point keeps.
const (
	metricSLO            = "slo_attainment"
	metricInteractiveSLO = "interactive_slo_attainment"
	metricMeanE2E        = "mean_e2e_s"
	metricP99E2E         = "p99_e2e_s"
	metricThroughput     = "throughput_jobs_per_s"
	metricGoodput        = "goodput_jobs_per_s"
	metricScheduleLoad   = "schedule_load"
	metricSustained      = "max_load_at_target"
)

// sweepResult is the load sweep: each policy's metrics at each load, and
// the highest load each sustains.
type sweepResult struct {
	loads    []float64
	jobs     int64                  // simulated at each point
	points   map[string][]MetricRow // by policy, in load order
	sustains map[string]float64     // 0 when the lowest load already misses the target
}

// at returns the policy's value of metric at load index i.
func (s *sweepResult) at(policy string, i int, metric string) float64 {
	for _, r := range s.points[policy] {
		if r.Load == s.loads[i] && r.Metric == metric {
			return r.Value
		}
	}
	return math.NaN()
}

// runSweep simulates the first cfg.Sweep.Jobs eval jobs under every policy
// at every load, each point from the memo when it is there. A load u
// offers the jobs at u times the cluster's capacity: schedule.load is u
// times the arrivals' span over the work's lower bound, both at load 1.
func runSweep(ctx context.Context, cfg Config, sched schedule.Config, seed int64, in Inputs, code string, memo Memo, step func()) (*sweepResult, error) {
	res := &sweepResult{loads: cfg.Sweep.Loads, points: map[string][]MetricRow{}, sustains: map[string]float64{}}
	if len(cfg.Sweep.Loads) == 0 {
		return res, nil
	}
	// The inputs enter the keys by content, provenance left out, as the
	// runner compares outputs: a regenerated identical workload hits.
	jobsDigest, err := digest.File(in.Jobs)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	samplesDigest, err := digest.File(in.Samples)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	jobs := in.Jobs
	if cfg.Sweep.Jobs > 0 {
		dir, err := memo.Get(pointKey(sweepSchema, "jobs", jobsDigest.Content, cfg.Sweep.Jobs), func(dir string) error {
			return firstJobs(in.Jobs, filepath.Join(dir, "jobs.parquet"), cfg.Sweep.Jobs)
		})
		if err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		jobs = filepath.Join(dir, "jobs.parquet")
	}
	unit := sched
	unit.Policies, unit.Load = sched.Policies[:1], 1
	bd, err := schedule.Bounds(ctx, unit, schedule.Inputs{Samples: in.Samples, Jobs: jobs})
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if !(bd.WorkLBS > 0) {
		return nil, errors.New("sweep: the eval jobs hold no work that fits the cluster")
	}
	res.jobs = bd.Jobs
	perUnit := bd.ArrivalLBS / bd.WorkLBS

	// The point's key: everything its simulation and summary depend on,
	// but not the list of policies or loads, so that adding either
	// computes only what is new.
	base := sched
	base.Policies, base.Load = nil, 0
	schedJSON, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	type point struct {
		policy string
		load   float64
		rows   []MetricRow
	}
	var pts []*point
	for _, p := range sched.Policies {
		for _, u := range cfg.Sweep.Loads {
			pts = append(pts, &point{policy: p, load: u})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, pt := range pts {
		g.Go(func() error {
			key := pointKey(sweepSchema, code, jobsDigest.Content, samplesDigest.Content, cfg.Sweep.Jobs, seed, string(schedJSON), pt.policy, pt.load, cfg.Bootstrap.Resamples, cfg.Bootstrap.Confidence)
			dir, err := memo.Get(key, func(dir string) error {
				return simulatePoint(gctx, sched, seed, in.Samples, jobs, pt.policy, pt.load, pt.load*perUnit, cfg.Bootstrap, filepath.Join(dir, pointFile))
			})
			if err != nil {
				return fmt.Errorf("sweep %s at load %g: %w", pt.policy, pt.load, err)
			}
			pt.rows, err = parquetio.ReadAll[MetricRow](filepath.Join(dir, pointFile))
			step()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for _, pt := range pts {
		res.points[pt.policy] = append(res.points[pt.policy], pt.rows...)
	}
	for _, p := range sched.Policies {
		for i, u := range res.loads {
			if !(res.at(p, i, metricInteractiveSLO) >= cfg.Sweep.Target) {
				break
			}
			res.sustains[p] = u
		}
	}
	return res, nil
}

// simulatePoint runs one policy on the jobs at schedule load factor, in a
// scratch directory beside out, and writes the point's metric rows to out.
func simulatePoint(ctx context.Context, sched schedule.Config, seed int64, samples, jobs, policy string, u, factor float64, b Bootstrap, out string) error {
	scratch := filepath.Join(filepath.Dir(out), "sim")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	sc := sched
	sc.Policies, sc.Load = []string{policy}, factor
	if err := schedule.Run(ctx, sc, seed, schedule.Inputs{Samples: samples, Jobs: jobs}, schedule.Output{Dir: scratch}); err != nil {
		return err
	}
	cl, err := metrics.ReadCluster(filepath.Join(scratch, schedule.ClusterFile))
	if err != nil {
		return err
	}
	bd, err := metrics.ReadBounds(filepath.Join(scratch, schedule.BoundsFile))
	if err != nil {
		return err
	}
	t, err := metrics.ReadTrace(filepath.Join(scratch, schedule.PolicyFile(policy, schedule.TraceFile)), cl.Devices)
	if err != nil {
		return err
	}
	busy, err := metrics.ReadBusy(filepath.Join(scratch, schedule.PolicyFile(policy, schedule.DevicesFile)), cl.Devices)
	if err != nil {
		return err
	}
	s := metrics.Summarize(t, busy, cl, bd, nil, metrics.Bootstrap{Resamples: b.Resamples, Confidence: b.Confidence, Seed: uint64(seed)})
	row := func(metric string, v float64, ci *metrics.Interval) MetricRow {
		r := MetricRow{Scope: ScopeSweep, Policy: policy, Load: u, Metric: metric, Value: v}
		if ci != nil {
			r.Lo, r.Hi = &ci.Lo, &ci.Hi
		}
		return r
	}
	inter := math.NaN()
	for _, c := range s.Classes {
		if c.Class == generate.ClassInteractive {
			inter = 1 - c.SLOViolation
		}
	}
	rows := []MetricRow{
		row(metricScheduleLoad, factor, nil),
		row(metricSLO, 1-s.SLOViolation, nil),
		row(metricInteractiveSLO, inter, nil),
		row(metricMeanE2E, s.E2E.Mean, nil),
		row(metricP99E2E, s.E2E.P99, &s.E2EP99CI),
		row(metricThroughput, s.Throughput, nil),
		row(metricGoodput, s.Goodput, nil),
	}
	return parquetio.WriteFile(out, rows, nil)
}

// firstJobs copies the first n rows of a jobs file (all of them if it
// holds fewer).
func firstJobs(src, dst string, n int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	r := parquet.NewGenericReader[generate.Job](f)
	defer r.Close()
	rows := make([]generate.Job, min(n, r.NumRows()))
	for read := 0; read < len(rows); {
		k, err := r.Read(rows[read:])
		read += k
		if errors.Is(err, io.EOF) {
			rows = rows[:read]
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(src), err)
		}
	}
	return parquetio.WriteFile(dst, rows, nil)
}

// pointKey hashes its parts, each on its own line, into a memo key.
func pointKey(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\n", p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
