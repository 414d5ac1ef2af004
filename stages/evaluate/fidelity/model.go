package fidelity

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// The target for the simulator: within targetTolerance of the
// real run, relative to it, at P50 and P99 for the targetPolicies at
// each load, with the policies' ranking preserved.
const targetTolerance = 0.10

var targetPolicies = []string{"fifo", "edf"}

// minBeyond is how many of a run's completed jobs must lie beyond a
// percentile for the run to be judged on it: P50 needs 200 jobs, P95
// 2,000, P99 10,000. With fewer, the percentile is one of the few largest
// latencies, whose sampling spread is as wide as the error judged (the
// order statistics' distribution-free intervals: David and Nagaraja,
// Order Statistics, 3rd ed., 2003, §7.1). The mean is judged on any run.
const minBeyond = 100

// statistic is one figure of a run's end-to-end latency judged against
// its prediction band: the mean (p 0) or the p-quantile.
type statistic struct {
	name string
	p    float64
	of   func(metrics.Summary) float64
}

// statistics are the figures the prediction band judges.
var statistics = []statistic{
	{"mean", 0, func(s metrics.Summary) float64 { return s.E2E.Mean }},
	{"P50", 0.5, e2eP50},
	{"P95", 0.95, func(s metrics.Summary) float64 { return s.E2E.P95 }},
	{"P99", 0.99, e2eP99},
}

// needed is how many completed jobs a run needs to be judged on st.
func (f *comparison) needed(st statistic) int {
	if st.p == 0 {
		return 1
	}
	return int(math.Ceil(float64(f.enough)/(1-st.p) - 1e-9))
}

// judged says whether run r has enough completed real jobs to be judged
// on st.
func (f *comparison) judged(r *realRun, st statistic) bool { return len(r.realE2E) >= f.needed(st) }

// comparison is what the report shows of the real runs (schedule.real):
// each run beside its simulation, the rankings per load, and where the
// error comes from.
type comparison struct {
	// runs are real/runs.parquet's, in its order.
	runs []*realRun
	// cluster is the real cluster (real/cluster.parquet); left are the
	// simulated cluster's devices it lacks.
	cluster, left []schedulespec.ClusterRow
	// rankings has one entry per load, ascending.
	rankings []ranking
	// enough is minBeyond, but for tests of the arithmetic on a handful
	// of jobs.
	enough int
	// skipped are the real policies schedule did not run for real, the
	// real cluster having one device to move their jobs to
	// (schedulespec.NoteRealSkipped).
	skipped []string
}

// realRun is one policy run for real at one load, and its simulation.
type realRun struct {
	row       schedulespec.RealRunRow
	real, sim metrics.Summary
	// realUtil and simUtil are the cluster's busy lane-seconds over its
	// lanes × the run's makespan.
	realUtil, simUtil float64
	// realE2E and simE2E are the end-to-end latencies of each trace's
	// completed jobs; pairedReal and pairedSim those of the jobs both
	// completed, by job id.
	realE2E, simE2E       []float64
	pairedReal, pairedSim []float64
	jobErr                jobErrors
	src                   sources
	// replay is the replay's summary (the simulator's decisions with the
	// real run's batch times), nil for an artifact without one.
	replay *metrics.Summary
	// jobs are the real trace's job ids, which every trace beside it
	// must hold.
	jobs []int64
	// repeats are the summaries of the same jobs run for real again
	// (schedule.real.repeats), in order.
	repeats []metrics.Summary
	// faster and slower are the summaries of the simulation with every
	// service time shorter and longer by row.Sensitivity, nil for an
	// artifact without them.
	faster, slower *metrics.Summary
	// draws are the summaries of the simulations with the other seeds of
	// the service-time draws (schedule.real.draws), in order; the first
	// draw is sim.
	draws []metrics.Summary
	// bandFaster and bandSlower are the summaries of the simulation with
	// every service time shorter and longer by the profile's run-to-run
	// variation (row.Variation), nil where it is 0.
	bandFaster, bandSlower *metrics.Summary
}

// jobErrors summarize the per-job relative errors (sim − real)/real of
// the end-to-end latency: the median and P90 of their absolute values,
// and the share within ±targetTolerance.
type jobErrors struct {
	median, p90, within float64
}

// ranking is the order of the policies run at one load, by mean
// end-to-end latency, best first, as run indices: for real and simulated.
type ranking struct {
	load      float64
	real, sim []int
}

func (r ranking) ranked() bool { return len(r.real) > 1 }

func (r ranking) sameWinner() bool { return r.real[0] == r.sim[0] }

func (r ranking) sameOrder() bool { return slices.Equal(r.real, r.sim) }

// readRuns reads the schedule artifact's real runs and their
// simulations; nil when it has none (schedule.real.policies empty, or an
// artifact from before the real runs). devices are the simulated
// cluster's. Every error names the file at fault.
func readRuns(dir string, devices []schedulespec.ClusterRow) (*comparison, error) {
	rows, err := parquetio.ReadAll[schedulespec.RealRunRow](filepath.Join(dir, filepath.FromSlash(schedulespec.RealRunsFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read real runs: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	clusterFile := schedulespec.RealDir + "/" + schedulespec.ClusterFile
	f := &comparison{enough: minBeyond}
	if f.cluster, err = parquetio.ReadAll[schedulespec.ClusterRow](filepath.Join(dir, filepath.FromSlash(clusterFile))); err != nil {
		return nil, fmt.Errorf("read real cluster: %w", err)
	}
	cl, err := metrics.ReadCluster(filepath.Join(dir, filepath.FromSlash(clusterFile)))
	if err != nil {
		return nil, err
	}
	for _, d := range devices {
		if !slices.Contains(cl.Devices, d.Device) {
			f.left = append(f.left, d)
		}
	}
	factors := map[string][]float64{}
	for _, d := range f.cluster {
		factors[d.Device] = d.ContentionFactors
	}
	type runKey struct {
		policy string
		load   float64
	}
	seen := map[runKey]bool{}
	for i, row := range rows {
		k := runKey{row.Policy, row.Load}
		switch {
		case row.Policy == "":
			return nil, fmt.Errorf("read %s: row %d: no policy", schedulespec.RealRunsFile, i+1)
		case !(row.Load > 0) || math.IsInf(row.Load, 1):
			return nil, fmt.Errorf("read %s: row %d (%s): load = %g, want a positive fraction of capacity", schedulespec.RealRunsFile, i+1, row.Policy, row.Load)
		case seen[k]:
			return nil, fmt.Errorf("read %s: row %d: %s at load %g appears twice", schedulespec.RealRunsFile, i+1, row.Policy, row.Load)
		}
		seen[k] = true
		r, err := readRealRun(dir, row, cl, factors)
		if err != nil {
			return nil, err
		}
		f.runs = append(f.runs, r)
	}
	if err := f.readRepeats(dir, cl); err != nil {
		return nil, err
	}
	f.rank()
	return f, nil
}

// readRepeats reads real/repeats.parquet, where there is one: the runs of
// each real run's jobs beyond its first, which must be the same jobs.
func (f *comparison) readRepeats(dir string, cl metrics.Cluster) error {
	file := schedulespec.RealRepeatsFile
	rows, err := parquetio.ReadAll[schedulespec.RealRepeatRow](filepath.Join(dir, filepath.FromSlash(file)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read repeated real runs: %w", err)
	}
	for i, row := range rows {
		var r *realRun
		for _, c := range f.runs {
			if c.row.Policy == row.Policy && c.row.Load == row.Load {
				r = c
			}
		}
		switch {
		case r == nil:
			return fmt.Errorf("read %s: row %d: %s at load %g was not run first (%s lists no such run)", file, i+1, row.Policy, row.Load, schedulespec.RealRunsFile)
		case int(row.Repeat) != len(r.repeats)+2:
			return fmt.Errorf("read %s: row %d: %s at load %g: run %d, want run %d", file, i+1, row.Policy, row.Load, row.Repeat, len(r.repeats)+2)
		}
		t, s, _, err := readSide(dir, row.Trace, row.Devices, cl)
		if err != nil {
			return err
		}
		if !slices.Equal(r.jobs, t.JobID) {
			return fmt.Errorf("read %s: %d jobs, and the first run's %s %d: %s; a repeated run runs the first run's jobs",
				row.Trace, t.Len(), r.row.Trace, len(r.jobs), firstApart(r.jobs, t.JobID))
		}
		r.repeats = append(r.repeats, s)
	}
	return nil
}

// readSide reads a trace and its devices file (of a real run, its
// simulation or its replay) and summarizes them, with the cluster's
// utilization: its busy lane-seconds over its lanes × the makespan.
func readSide(dir, trace, devices string, cl metrics.Cluster) (*metrics.Trace, metrics.Summary, float64, error) {
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	t, err := metrics.ReadTrace(path(trace), cl.Devices)
	if err != nil {
		return nil, metrics.Summary{}, 0, err
	}
	busy, err := metrics.ReadBusy(path(devices), cl.Devices)
	if err != nil {
		return nil, metrics.Summary{}, 0, err
	}
	// No bounds, no workload, no resamples: the section needs none of
	// what they give.
	s := metrics.Summarize(t, busy, cl, metrics.Bounds{}, nil)
	var all, lanes float64
	for d, b := range busy {
		all += b
		lanes += float64(cl.Lanes[d])
	}
	util := math.NaN()
	if s.Makespan > 0 {
		util = all / (lanes * s.Makespan)
	}
	return t, s, util, nil
}

// readRealRun reads one real run's trace, devices and dispatch files and
// its simulation's trace and devices, and summarizes them.
func readRealRun(dir string, row schedulespec.RealRunRow, cl metrics.Cluster, factors map[string][]float64) (*realRun, error) {
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	r := &realRun{row: row}
	rt, rs, ru, err := readSide(dir, row.Trace, row.Devices, cl)
	if err != nil {
		return nil, err
	}
	r.jobs = rt.JobID
	// readBeside reads a simulation of the real run's jobs (what names
	// it: a simulation, a replay), which must hold exactly those jobs.
	readBeside := func(trace, devices, what string) (*metrics.Trace, metrics.Summary, float64, error) {
		t, s, u, err := readSide(dir, trace, devices, cl)
		if err == nil && !slices.Equal(rt.JobID, t.JobID) {
			err = fmt.Errorf("read %s: %d jobs, and the real run's %s %d: %s; %s runs the real run's jobs",
				trace, t.Len(), row.Trace, rt.Len(), firstApart(rt.JobID, t.JobID), what)
		}
		return t, s, u, err
	}
	st, ss, su, err := readBeside(row.SimTrace, row.SimDevices, "a simulation")
	if err != nil {
		return nil, err
	}
	r.real, r.sim, r.realUtil, r.simUtil = rs, ss, ru, su
	if row.ReplayTrace != "" {
		_, ps, _, err := readBeside(row.ReplayTrace, row.ReplayDevices, "a replay")
		if err != nil {
			return nil, err
		}
		r.replay = &ps
	}
	if row.Sensitivity > 0 {
		if !(row.Sensitivity < 1) || row.FasterTrace == "" || row.SlowerTrace == "" {
			return nil, fmt.Errorf("read %s: %s at load %g: sensitivity %v with faster trace %q and slower trace %q; want a fraction below 1 and both",
				schedulespec.RealRunsFile, row.Policy, row.Load, row.Sensitivity, row.FasterTrace, row.SlowerTrace)
		}
		_, fs, _, err := readBeside(row.FasterTrace, row.FasterDevices, "a simulation")
		if err != nil {
			return nil, err
		}
		_, ls, _, err := readBeside(row.SlowerTrace, row.SlowerDevices, "a simulation")
		if err != nil {
			return nil, err
		}
		r.faster, r.slower = &fs, &ls
	}
	if row.Variation > 0 {
		if !(row.Variation <= 0.5) || row.BandFasterTrace == "" || row.BandSlowerTrace == "" {
			return nil, fmt.Errorf("read %s: %s at load %g: variation %v with band traces %q and %q; want a fraction of at most 0.5 and both",
				schedulespec.RealRunsFile, row.Policy, row.Load, row.Variation, row.BandFasterTrace, row.BandSlowerTrace)
		}
		_, fs, _, err := readBeside(row.BandFasterTrace, row.BandFasterDevices, "a simulation")
		if err != nil {
			return nil, err
		}
		_, ls, _, err := readBeside(row.BandSlowerTrace, row.BandSlowerDevices, "a simulation")
		if err != nil {
			return nil, err
		}
		r.bandFaster, r.bandSlower = &fs, &ls
	}
	if row.Draws > schedulespec.MaxRealDraws {
		return nil, fmt.Errorf("read %s: %s at load %g: %d draws; want at most %d",
			schedulespec.RealRunsFile, row.Policy, row.Load, row.Draws, schedulespec.MaxRealDraws)
	}
	for k := 2; k <= int(row.Draws); k++ {
		d := schedulespec.RealDrawDir(row.Policy, row.Load, k)
		_, ds, _, err := readBeside(d+"/"+schedulespec.TraceFile, d+"/"+schedulespec.DevicesFile, "a simulation")
		if err != nil {
			return nil, err
		}
		r.draws = append(r.draws, ds)
	}
	var abs []float64
	for i := range rt.JobID {
		if !rt.Rejected[i] {
			r.realE2E = append(r.realE2E, rt.E2E[i])
		}
		if !st.Rejected[i] {
			r.simE2E = append(r.simE2E, st.E2E[i])
		}
		if rt.Rejected[i] || st.Rejected[i] || !(rt.E2E[i] > 0) {
			continue
		}
		r.pairedReal = append(r.pairedReal, rt.E2E[i])
		r.pairedSim = append(r.pairedSim, st.E2E[i])
		abs = append(abs, math.Abs(st.E2E[i]-rt.E2E[i])/rt.E2E[i])
	}
	slices.Sort(abs)
	r.jobErr = jobErrors{median: quantileOf(abs, 0.5), p90: quantileOf(abs, 0.9), within: math.NaN()}
	if len(abs) > 0 {
		n, _ := slices.BinarySearch(abs, math.Nextafter(targetTolerance, 2))
		r.jobErr.within = float64(n) / float64(len(abs))
	}
	batches, err := parquetio.ReadAll[schedulespec.DispatchRow](path(row.Dispatch))
	if err != nil {
		return nil, fmt.Errorf("read dispatch of %s at load %g: %w", row.Policy, row.Load, err)
	}
	if r.src, err = sourcesOf(batches, row, factors); err != nil {
		return nil, fmt.Errorf("read %s: %w", row.Dispatch, err)
	}
	r.src.gap = rs.E2E.Mean - ss.E2E.Mean
	return r, nil
}

// firstApart names the first job id in one of two ascending lists only.
func firstApart(a, b []int64) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i == len(a):
		return fmt.Sprintf("job %d is simulated only", b[i])
	case i == len(b) || a[i] < b[i]:
		return fmt.Sprintf("job %d ran for real only", a[i])
	}
	return fmt.Sprintf("job %d is simulated only", b[i])
}

// quantileOf is the nearest-rank p-quantile of sorted, as the metrics
// package takes it; NaN for none.
func quantileOf(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}

// rank orders the policies at each load by mean end-to-end latency, real
// and simulated; ties keep runs.parquet's order.
func (f *comparison) rank() {
	var loads []float64
	for _, r := range f.runs {
		loads = append(loads, r.row.Load)
	}
	slices.Sort(loads)
	for _, u := range slices.Compact(loads) {
		rk := ranking{load: u}
		for i, r := range f.runs {
			if r.row.Load == u {
				rk.real = append(rk.real, i)
			}
		}
		rk.sim = slices.Clone(rk.real)
		by := func(mean func(*realRun) float64) func(a, b int) int {
			return func(a, b int) int { return cmpNaNLast(mean(f.runs[a]), mean(f.runs[b])) }
		}
		slices.SortStableFunc(rk.real, by(func(r *realRun) float64 { return r.real.E2E.Mean }))
		slices.SortStableFunc(rk.sim, by(func(r *realRun) float64 { return r.sim.E2E.Mean }))
		f.rankings = append(f.rankings, rk)
	}
}

// cmpNaNLast compares a and b, a NaN after every number.
func cmpNaNLast(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	}
	return cmp.Compare(a, b)
}

// rankingAt is the ranking of the load of run i.
func (f *comparison) rankingAt(i int) ranking {
	k := slices.IndexFunc(f.rankings, func(r ranking) bool { return r.load == f.runs[i].row.Load })
	return f.rankings[k]
}

// relErr is (simulated − measured)/measured; NaN when measured is not
// positive.
func relErr(simulated, measured float64) float64 {
	if !(measured > 0) {
		return math.NaN()
	}
	return (simulated - measured) / measured
}

func (r *realRun) name() string { return fmt.Sprintf("%s at %s", r.row.Policy, report.Pct(r.row.Load)) }

// label is the run's name as Markdown.
func (r *realRun) label() string { return report.Escape(r.name()) }

// outcome is what the target makes of a run.
type outcome int

const (
	// notHeld: a policy the target does not name.
	notHeld outcome = iota
	// notJudged: too few jobs for P50 (minBeyond).
	notJudged
	met
	missed
)

// verdict is run i against the target: whether the run is within the
// tolerance at P50 and P99 with its load's ranking preserved, each
// percentile judged only on a run with enough jobs beyond it (minBeyond);
// text says so with the figures.
func (f *comparison) verdict(i int) (outcome, string) {
	r := f.runs[i]
	if !slices.Contains(targetPolicies, r.row.Policy) {
		return notHeld, "not held to it"
	}
	p50, p99 := statistics[1], statistics[3]
	if !f.judged(r, p50) {
		return notJudged, fmt.Sprintf("not judged (%d jobs; P50 needs %d)", len(r.realE2E), f.needed(p50))
	}
	within := func(e float64) bool { return math.Abs(e) <= targetTolerance }
	e50 := relErr(r.sim.E2E.P50, r.real.E2E.P50)
	ok := within(e50)
	errs := "P50 " + relPct(e50)
	if f.judged(r, p99) {
		e99 := relErr(r.sim.E2E.P99, r.real.E2E.P99)
		ok = ok && within(e99)
		errs += ", P99 " + relPct(e99)
	} else {
		errs += fmt.Sprintf(", P99 not judged: needs %d jobs", f.needed(p99))
	}
	rk := f.rankingAt(i)
	order := "nothing to rank"
	if rk.ranked() {
		order = "same order"
		if !rk.sameOrder() {
			ok, order = false, "order differs"
		}
	}
	if ok {
		return met, fmt.Sprintf("met (%s, %s)", errs, order)
	}
	return missed, fmt.Sprintf("**missed** (%s, %s)", errs, order)
}

// policies are the policies run for real, in runs.parquet's order.
func (f *comparison) policies() []string {
	var out []string
	for _, r := range f.runs {
		if !slices.Contains(out, r.row.Policy) {
			out = append(out, r.row.Policy)
		}
	}
	return out
}

// realPercentiles are the end-to-end P50s and P99s of a run's real runs:
// the first, then its repeats.
func (r *realRun) realPercentiles() (p50, p99 []float64) {
	p50, p99 = []float64{r.real.E2E.P50}, []float64{r.real.E2E.P99}
	for _, s := range r.repeats {
		p50, p99 = append(p50, s.E2E.P50), append(p99, s.E2E.P99)
	}
	return p50, p99
}

// repeatStats are a percentile's values over a run's real runs: the
// median, the spread (largest over smallest, less one) and whether the
// simulated value lies within their range.
func repeatStats(real []float64, sim float64) (median, spread float64, within bool) {
	s := slices.Sorted(slices.Values(real))
	return quantileOf(s, 0.5), s[len(s)-1]/s[0] - 1, s[0] <= sim && sim <= s[len(s)-1]
}

// e2eP50 and e2eP99 pick a percentile of a summary's end-to-end latency.
func e2eP50(s metrics.Summary) float64 { return s.E2E.P50 }

func e2eP99(s metrics.Summary) float64 { return s.E2E.P99 }

// band is run r's prediction band for st: the range of st over the
// draws, widened below by how far the simulation moves with every service
// time shorter by the profile's variation, and above by how far it moves
// with them longer (where the artifact has those simulations).
func (r *realRun) band(st statistic) (lo, hi float64) {
	lo, hi = r.drawSpread(st.of)
	if r.bandFaster != nil {
		mid := st.of(r.sim)
		lo -= max(0, mid-st.of(*r.bandFaster))
		hi += max(0, st.of(*r.bandSlower)-mid)
	}
	return lo, hi
}

// drawSpread is the range of a percentile (of) over run r's draws, the
// first (its plain simulation) included.
func (r *realRun) drawSpread(of func(metrics.Summary) float64) (lo, hi float64) {
	lo, hi = of(r.sim), of(r.sim)
	for _, d := range r.draws {
		v := of(d)
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}
