package evaluate

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// ScopeFidelity holds the real runs set against their simulations in
// metrics.parquet: for each run (Policy and Load) the real and simulated
// latency percentiles, SLO attainment and utilization, their errors, the
// per-job errors, the figures of the sources of error and the target's
// verdict; for each load (Policy empty) whether the simulator ranks the
// policies as the real runs do.
const ScopeFidelity = "fidelity"

// The target for the simulator: within fidelityTolerance of the
// real run, relative to it, at P50 and P99 for the fidelityPolicies at
// each load, with the policies' ranking preserved.
const fidelityTolerance = 0.10

var fidelityPolicies = []string{"fifo", "edf"}

// fidelity is what the report shows of the real runs (schedule.real):
// each run beside its simulation, the rankings per load, and where the
// error comes from.
type fidelity struct {
	// runs are real/runs.parquet's, in its order.
	runs []*realRun
	// cluster is the real cluster (real/cluster.parquet); left are the
	// simulated cluster's devices it lacks.
	cluster, left []schedulespec.ClusterRow
	// rankings has one entry per load, ascending.
	rankings []ranking
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
}

// jobErrors summarize the per-job relative errors (sim − real)/real of
// the end-to-end latency: the median and P90 of their absolute values,
// and the share within ±fidelityTolerance.
type jobErrors struct {
	median, p90, within float64
}

// The sources of error the section weighs, in the order of
// sources.contrib.
const (
	srcAlone = iota
	srcContention
	srcDispatch
	srcLateness
	numSources
)

// sourceInfo names each source: its metric, and what it is when it makes
// the real run slower (more) or faster (less) than the simulation.
var sourceInfo = [numSources]struct{ metric, column, more, less string }{
	srcAlone:      {"contribution_service_alone_s", "run time alone", "service times longer than the profile's mean when alone", "service times shorter than the profile's mean when alone"},
	srcContention: {"contribution_contention_s", "contention", "contention beyond the profiled factor", "contention below the profiled factor"},
	srcDispatch:   {"contribution_dispatch_s", "dispatch overhead", "dispatch overhead", "dispatch overhead"},
	srcLateness:   {"contribution_lateness_s", "scheduler lateness", "scheduler lateness", "scheduler lateness"},
}

// sources are a real run's figures from dispatch.parquet and
// runs.parquet, and each source's estimated addition to a real job's
// end-to-end latency.
type sources struct {
	// batches counts the run's batches, jobs the jobs they ran (the real
	// run's completed jobs).
	batches, jobs int
	// Dispatch overhead (run_s − start_s) and notice lag (noticed_s −
	// end_s), median and P99 over the batches.
	dispatchP50, dispatchP99, lagP50, lagP99 float64
	// The measured run time (end_s − run_s) over the simulator's model of
	// it on the real run's timeline (modelledRun), summed over the batches
	// that ran alone throughout and over those that ran beside other
	// lanes at some point (a batch weighs by its time), with their
	// counts; factor is the latter's modelled time over their profile
	// means: how much the profiled contention slowed them in the model.
	alone, contended   float64
	aloneN, contendedN int
	factor             float64
	// latePerJob is runs.parquet's late events per job of the slice.
	latePerJob float64
	// faults counts the pages the lanes' threads faulted in during the
	// batches' runs, -1 where the system did not count them.
	faults int64
	// contrib is each source's seconds per completed job, positive when
	// it makes the real run slower than the simulation; gap is the real
	// mean end-to-end latency less the simulated.
	contrib [numSources]float64
	gap     float64
}

// ranking is the order of the policies run at one load, by mean
// end-to-end latency, best first, as run indices: for real and simulated.
type ranking struct {
	load      float64
	real, sim []int
}

func (r ranking) ranked() bool     { return len(r.real) > 1 }
func (r ranking) sameWinner() bool { return r.real[0] == r.sim[0] }
func (r ranking) sameOrder() bool  { return slices.Equal(r.real, r.sim) }

// readFidelity reads the schedule artifact's real runs and their
// simulations; nil when it has none (schedule.real.policies empty, or an
// artifact from before the real runs). devices are the simulated
// cluster's. Every error names the file at fault.
func readFidelity(dir string, devices []schedulespec.ClusterRow) (*fidelity, error) {
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
	f := &fidelity{}
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
func (f *fidelity) readRepeats(dir string, cl metrics.Cluster) error {
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
	s := metrics.Summarize(t, busy, cl, metrics.Bounds{}, nil, metrics.Bootstrap{})
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
		n, _ := slices.BinarySearch(abs, math.Nextafter(fidelityTolerance, 2))
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

// sourcesOf computes a real run's figures from its batches: what the
// simulator does not model, each source's seconds per job.
//
// A batch's measured run time is held to the time the simulator's service
// model gives it on the real run's own timeline (modelledRun): the
// profile's mean, slowed by the device's profiled contention factor
// while the other lanes of its device ran their real batches. The excess
// of a batch that ran alone throughout and of one that ran beside others
// at some point, its dispatch overhead, and the median lateness times the
// late events per job of the slice are what each source adds to a real
// job's own latency, a batch counted once per job in it. Queueing behind
// a delayed batch is not counted, so the sources need not add up to the
// gap.
func sourcesOf(batches []schedulespec.DispatchRow, row schedulespec.RealRunRow, factors map[string][]float64) (sources, error) {
	s := sources{batches: len(batches), faults: -1}
	var dispatch, lag []float64
	// Run time, modelled time and profiled time, summed: a median over
	// batches would let the mlp's microsecond batches, all fixed cost at
	// 10 to 20 times the profile's mean, outvote the batches that hold
	// the time.
	var aloneRun, aloneModel, besideRun, besideModel, besideProf float64
	var sum [numSources]float64
	for i, b := range batches {
		for _, v := range []float64{b.StartS, b.RunS, b.EndS, b.NoticedS, b.ProfileMeanS} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return s, fmt.Errorf("row %d (batch %d): a time is %v; want finite times", i+1, b.BatchID, v)
			}
		}
	}
	lanes := lanesOf(batches)
	for _, b := range batches {
		w := float64(b.Jobs)
		s.jobs += int(b.Jobs)
		if b.Faults >= 0 {
			s.faults = max(s.faults, 0) + b.Faults
		}
		dispatch = append(dispatch, b.RunS-b.StartS)
		lag = append(lag, b.NoticedS-b.EndS)
		sum[srcDispatch] += w * (b.RunS - b.StartS)
		if !(b.ProfileMeanS > 0) {
			continue // no profile curve to hold it to
		}
		run := b.EndS - b.RunS
		model, beside := modelledRun(b, lanes[b.Device], factors[b.Device])
		if !beside {
			s.aloneN++
			aloneRun, aloneModel = aloneRun+run, aloneModel+model
			sum[srcAlone] += w * (run - model)
			continue
		}
		s.contendedN++
		besideRun, besideModel, besideProf = besideRun+run, besideModel+model, besideProf+b.ProfileMeanS
		sum[srcContention] += w * (run - model)
	}
	for _, v := range [][]float64{dispatch, lag} {
		slices.Sort(v)
	}
	s.dispatchP50, s.dispatchP99 = quantileOf(dispatch, 0.5), quantileOf(dispatch, 0.99)
	s.lagP50, s.lagP99 = quantileOf(lag, 0.5), quantileOf(lag, 0.99)
	s.alone, s.contended, s.factor = math.NaN(), math.NaN(), math.NaN()
	if aloneModel > 0 {
		s.alone = aloneRun / aloneModel
	}
	if besideModel > 0 {
		s.contended, s.factor = besideRun/besideModel, besideModel/besideProf
	}
	s.latePerJob = math.NaN()
	if row.Jobs > 0 {
		s.latePerJob = float64(row.LateEvents) / float64(row.Jobs)
	}
	late := 0.0
	if row.LateEvents > 0 {
		late = row.LateP50S * s.latePerJob
	}
	for k := range s.contrib {
		s.contrib[k] = math.NaN()
		if s.jobs > 0 {
			s.contrib[k] = sum[k] / float64(s.jobs)
		}
	}
	s.contrib[srcLateness] = late
	return s, nil
}

// span is the time a lane ran a batch, from onnxruntime's Run to its end.
type span struct{ run, end float64 }

// lanesOf returns the spans of each device's lanes, by device and lane,
// each lane's in order.
func lanesOf(batches []schedulespec.DispatchRow) map[string]map[int32][]span {
	lanes := map[string]map[int32][]span{}
	for _, b := range batches {
		if lanes[b.Device] == nil {
			lanes[b.Device] = map[int32][]span{}
		}
		lanes[b.Device][b.Lane] = append(lanes[b.Device][b.Lane], span{b.RunS, b.EndS})
	}
	for _, byLane := range lanes {
		for _, sp := range byLane {
			slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.run, b.run) })
		}
	}
	return lanes
}

// modelledRun is the run time the simulator's service model gives batch b
// on the real run's own timeline: its profile mean of work, done from its
// Run at the rate the simulator gives a lane while k lanes of its device
// run (1 over the profiled factor at k, b's own lane one of them, the
// others running the batches they really ran), as the simulator slows
// every busy lane while others run. beside says whether another lane ran
// at any moment of b's real run.
func modelledRun(b schedulespec.DispatchRow, lanes map[int32][]span, factors []float64) (model float64, beside bool) {
	var others [][]span
	for l, sp := range lanes {
		if l == b.Lane {
			continue
		}
		others = append(others, sp)
		if i := endingAfter(sp, b.RunS); i < len(sp) && sp[i].run < b.EndS {
			beside = true
		}
	}
	t, work := b.RunS, b.ProfileMeanS
	for work > 0 {
		k, next := int32(1), math.Inf(1)
		for _, sp := range others {
			i := endingAfter(sp, t)
			if i == len(sp) {
				continue
			}
			if sp[i].run <= t {
				k++
				next = min(next, sp[i].end)
			} else {
				next = min(next, sp[i].run)
			}
		}
		rate := 1 / contentionFactor(factors, k)
		if dt := work / rate; t+dt <= next {
			t += dt
			break
		}
		work -= (next - t) * rate
		t = next
	}
	return t - b.RunS, beside
}

// endingAfter is the index of the first of a lane's spans to end after t,
// len(sp) if none does.
func endingAfter(sp []span, t float64) int {
	i, _ := slices.BinarySearchFunc(sp, t, func(x span, t float64) int {
		if x.end <= t {
			return -1
		}
		return 1
	})
	return i
}

// contentionFactor is the profiled slowdown of each lane while busy lanes
// of its device run, itself included: factors[busy-1], the last for more
// lanes than they cover, 1 without any.
func contentionFactor(factors []float64, busy int32) float64 {
	if len(factors) == 0 || busy < 1 {
		return 1
	}
	return factors[min(int(busy), len(factors))-1]
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
func (f *fidelity) rank() {
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
func (f *fidelity) rankingAt(i int) ranking {
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

// verdict is run i against the target: held is false for a policy the
// target does not name; met says whether the run is within the tolerance
// at P50 and P99 with its load's ranking preserved, and text says so with
// the figures.
func (f *fidelity) verdict(i int) (held, met bool, text string) {
	r := f.runs[i]
	if !slices.Contains(fidelityPolicies, r.row.Policy) {
		return false, false, "not held to it"
	}
	p50, p99 := relErr(r.sim.E2E.P50, r.real.E2E.P50), relErr(r.sim.E2E.P99, r.real.E2E.P99)
	within := func(e float64) bool { return math.Abs(e) <= fidelityTolerance }
	rk := f.rankingAt(i)
	order := "nothing to rank"
	kept := true
	if rk.ranked() {
		kept = rk.sameOrder()
		order = "same order"
		if !kept {
			order = "order differs"
		}
	}
	met = within(p50) && within(p99) && kept
	word := "met"
	if !met {
		word = "**missed**"
	}
	return true, met, fmt.Sprintf("%s (P50 %s, P99 %s, %s)", word, relPct(p50), relPct(p99), order)
}

// relPct formats a relative error as a signed percentage.
func relPct(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case f == 0:
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

// fidelityRows are the section's numbers for metrics.parquet
// (ScopeFidelity): each run's, then each load's ranking.
func fidelityRows(f *fidelity) []MetricRow {
	if f == nil {
		return nil
	}
	var rows []MetricRow
	for i, r := range f.runs {
		add := func(metric string, v float64) {
			rows = append(rows, MetricRow{Scope: ScopeFidelity, Policy: r.row.Policy, Load: r.row.Load, Metric: metric, Value: v})
		}
		add("jobs", float64(r.row.Jobs))
		add("jobs_compared", float64(len(r.pairedReal)))
		if r.faster != nil {
			add("sensitivity", r.row.Sensitivity)
			add("sim_faster_p50_e2e_s", r.faster.E2E.P50)
			add("sim_faster_p99_e2e_s", r.faster.E2E.P99)
			add("sim_slower_p50_e2e_s", r.slower.E2E.P50)
			add("sim_slower_p99_e2e_s", r.slower.E2E.P99)
		}
		if len(r.draws) > 0 {
			lo50, hi50 := r.drawSpread(e2eP50)
			lo99, hi99 := r.drawSpread(e2eP99)
			add("draws", float64(len(r.draws)+1))
			add("sim_draws_min_p50_e2e_s", lo50)
			add("sim_draws_max_p50_e2e_s", hi50)
			add("sim_draws_min_p99_e2e_s", lo99)
			add("sim_draws_max_p99_e2e_s", hi99)
		}
		if len(r.repeats) > 0 {
			p50, p99 := r.realPercentiles()
			m50, s50, _ := repeatStats(p50, r.sim.E2E.P50)
			m99, s99, _ := repeatStats(p99, r.sim.E2E.P99)
			add("real_runs", float64(len(p50)))
			add("real_median_p50_e2e_s", m50)
			add("real_median_p99_e2e_s", m99)
			add("real_spread_p50_e2e", s50)
			add("real_spread_p99_e2e", s99)
			add("error_vs_real_median_p50_e2e", relErr(r.sim.E2E.P50, m50))
			add("error_vs_real_median_p99_e2e", relErr(r.sim.E2E.P99, m99))
		}
		for _, q := range []struct {
			name      string
			real, sim float64
		}{{"mean", r.real.E2E.Mean, r.sim.E2E.Mean}, {"p50", r.real.E2E.P50, r.sim.E2E.P50},
			{"p95", r.real.E2E.P95, r.sim.E2E.P95}, {"p99", r.real.E2E.P99, r.sim.E2E.P99}} {
			add("real_"+q.name+"_e2e_s", q.real)
			add("sim_"+q.name+"_e2e_s", q.sim)
			add("error_"+q.name+"_e2e", relErr(q.sim, q.real))
		}
		if p := r.replay; p != nil {
			add("replay_p50_e2e_s", p.E2E.P50)
			add("replay_p99_e2e_s", p.E2E.P99)
			add("error_replay_p50_e2e", relErr(p.E2E.P50, r.real.E2E.P50))
			add("error_replay_p99_e2e", relErr(p.E2E.P99, r.real.E2E.P99))
			add("replay_missed_batches", float64(r.row.ReplayMissed))
		}
		add("real_slo_attainment", 1-r.real.SLOViolation)
		add("sim_slo_attainment", 1-r.sim.SLOViolation)
		add("real_utilization", r.realUtil)
		add("sim_utilization", r.simUtil)
		add("job_median_abs_error", r.jobErr.median)
		add("job_p90_abs_error", r.jobErr.p90)
		add("job_within_10pct", r.jobErr.within)
		if held, met, _ := f.verdict(i); held {
			add("target_met", boolValue(met))
		}
		s := r.src
		add("dispatch_overhead_p50_s", s.dispatchP50)
		add("dispatch_overhead_p99_s", s.dispatchP99)
		add("notice_lag_p50_s", s.lagP50)
		add("notice_lag_p99_s", s.lagP99)
		add("alone_run_over_model", s.alone)
		add("beside_run_over_model", s.contended)
		add("beside_model_over_profile", s.factor)
		add("late_events", float64(r.row.LateEvents))
		add("late_p50_s", r.row.LateP50S)
		add("late_p99_s", r.row.LateP99S)
		add("pages_faulted_in", float64(s.faults))
		add("warm_runs", float64(r.row.WarmRuns))
		add("mean_e2e_gap_s", s.gap)
		for k, info := range sourceInfo {
			add(info.metric, s.contrib[k])
		}
	}
	for _, rk := range f.rankings {
		if !rk.ranked() {
			continue
		}
		rows = append(rows,
			MetricRow{Scope: ScopeFidelity, Load: rk.load, Metric: "same_winner", Value: boolValue(rk.sameWinner())},
			MetricRow{Scope: ScopeFidelity, Load: rk.load, Metric: "same_order", Value: boolValue(rk.sameOrder())})
	}
	return rows
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// fidelitySection is the report's part on the simulator against the real
// runs: the error table, the rankings, the distributions and the main
// remaining source of error; left out when schedule ran nothing for real.
func fidelitySection(d *reportData) (report.Section, error) {
	f := d.fidelity
	if f == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	md.WriteString(f.introText())
	md.WriteString(f.targetText())
	md.WriteString(f.errorText())
	md.WriteString(f.repeatText())
	md.WriteString(f.sensitivityText())
	md.WriteString(f.drawsText())
	md.WriteString(f.rankingText())
	md.WriteString(f.replayText())
	text, charts, err := f.charts()
	if err != nil {
		return report.Section{}, err
	}
	md.WriteString(text)
	md.WriteString(f.sourcesText())
	return report.Section{Title: "Fidelity", Markdown: md.String(), Charts: charts}, nil
}

// policies are the policies run for real, in runs.parquet's order.
func (f *fidelity) policies() []string {
	var out []string
	for _, r := range f.runs {
		if !slices.Contains(out, r.row.Policy) {
			out = append(out, r.row.Policy)
		}
	}
	return out
}

func (f *fidelity) introText() string {
	var loads []string
	for _, rk := range f.rankings {
		loads = append(loads, report.Pct(rk.load))
	}
	var spans []string
	for _, r := range f.runs {
		if s := report.Secs(r.row.SpanS); !slices.Contains(spans, s) {
			spans = append(spans, s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The schedule stage ran %s for real (schedule.real) at offered loads of %s of the real cluster's capacity: "+
		"each run takes the eval jobs that arrive within its first %s, carries out the policy's decisions with onnxruntime on this machine, "+
		"and is simulated on the same jobs (same ids, same arrival times) on the same devices with the same policy. "+
		"Each run's real trace is set against its simulation's; an error is simulated minus real, relative to real.\n",
		report.AndList(mapf(f.policies(), report.Escape)), report.AndList(loads), strings.Join(spans, " or "))
	fmt.Fprintf(&b, "\nThe real cluster: %s.", clusterText(f.cluster))
	if len(f.left) > 0 {
		var left []string
		for _, d := range f.left {
			why := "declared: no hardware here to run it on"
			if d.Kind != schedulespec.KindDeclared {
				why = "its profile device was not measured on this machine"
			}
			left = append(left, fmt.Sprintf("%s (%s)", report.Escape(d.Device), why))
		}
		fmt.Fprintf(&b, " Left out of it, of the simulated cluster: %s; the loads are fractions of the real cluster's capacity alone.", report.AndList(left))
	}
	b.WriteString("\n")
	return b.String()
}

// targetText states the target and how many runs meet it.
func (f *fidelity) targetText() string {
	var met, missed []string
	for i, r := range f.runs {
		held, ok, _ := f.verdict(i)
		switch {
		case !held:
		case ok:
			met = append(met, r.label())
		default:
			missed = append(missed, r.label())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Target**: |simulated − real| ≤ %s of real at P50 and at P99 for %s at each load, with the ranking of the policies preserved. ",
		report.Pct(fidelityTolerance), report.AndList(fidelityPolicies))
	switch n := len(met) + len(missed); {
	case n == 0:
		fmt.Fprintf(&b, "No run is of %s, so none is held to it.\n", report.AndList(fidelityPolicies))
	case len(missed) == 0:
		fmt.Fprintf(&b, "Met in all %d runs held to it.\n", n)
	case len(met) == 0:
		fmt.Fprintf(&b, "**Missed** in all %d runs held to it: %s.\n", n, report.AndList(missed))
	default:
		fmt.Fprintf(&b, "Met in %d of the %d runs held to it (%s); **missed** in %s.\n", len(met), n, report.AndList(met), report.AndList(missed))
	}
	return b.String()
}

// errorText is the error table and the per-job errors, SLO attainment
// and utilization.
func (f *fidelity) errorText() string {
	var b strings.Builder
	b.WriteString("\n### The error table\n\nEnd-to-end latency percentiles over each trace's completed jobs (nearest rank), real and simulated, " +
		"and the target's verdict with the errors it rests on.\n\n")
	t := report.NewTable("run", ">jobs", ">P50 real", ">P50 sim", ">error", ">P95 real", ">P95 sim", ">error", ">P99 real", ">P99 sim", ">error", "target")
	for i, r := range f.runs {
		_, _, verdict := f.verdict(i)
		t.Add(r.label(), fmt.Sprint(r.row.Jobs),
			report.Secs(r.real.E2E.P50), report.Secs(r.sim.E2E.P50), relPct(relErr(r.sim.E2E.P50, r.real.E2E.P50)),
			report.Secs(r.real.E2E.P95), report.Secs(r.sim.E2E.P95), relPct(relErr(r.sim.E2E.P95, r.real.E2E.P95)),
			report.Secs(r.real.E2E.P99), report.Secs(r.sim.E2E.P99), relPct(relErr(r.sim.E2E.P99, r.real.E2E.P99)), verdict)
	}
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nPer job: the two traces joined on job id, each job's error (simulated − real)/real in end-to-end latency, over the jobs both completed; "+
		"the median and P90 of its absolute value and the share of jobs within ±%s. SLO attainment is the share of all the run's jobs within their SLO "+
		"(a rejected job never is); utilization the cluster's busy lane-seconds over its lanes times the run's makespan.\n\n", report.Pct(fidelityTolerance))
	t = report.NewTable("run", ">jobs compared", ">median abs. error", ">P90 abs. error", ">within ±"+report.Pct(fidelityTolerance),
		">SLO attainment real", ">SLO attainment sim", ">difference", ">utilization real", ">utilization sim", ">difference")
	for _, r := range f.runs {
		ra, sa := 1-r.real.SLOViolation, 1-r.sim.SLOViolation
		t.Add(r.label(), fmt.Sprint(len(r.pairedReal)), report.Pct(r.jobErr.median), report.Pct(r.jobErr.p90), report.Pct(r.jobErr.within),
			report.Pct(ra), report.Pct(sa), report.Signed(sa-ra, report.PctPts), report.Pct(r.realUtil), report.Pct(r.simUtil), report.Signed(r.simUtil-r.realUtil, report.PctPts))
	}
	b.WriteString(t.String())
	return b.String()
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

// repeatText sets the simulation against every real run of its jobs, when
// schedule.real.repeats ran them more than once: how far real runs of the
// same jobs fall apart is how close a simulation can be expected to come
// to any one of them.
func (f *fidelity) repeatText() string {
	var b strings.Builder
	t := report.NewTable("run", ">real runs", ">P50 real, each run", ">P50 sim", ">sim − median real", ">P99 real, each run", ">P99 sim", ">sim − median real")
	var spread50, spread99 float64
	in50, in99, n := 0, 0, 0
	for _, r := range f.runs {
		if len(r.repeats) == 0 {
			continue
		}
		n++
		p50, p99 := r.realPercentiles()
		m50, s50, w50 := repeatStats(p50, r.sim.E2E.P50)
		m99, s99, w99 := repeatStats(p99, r.sim.E2E.P99)
		spread50, spread99 = max(spread50, s50), max(spread99, s99)
		if w50 {
			in50++
		}
		if w99 {
			in99++
		}
		each := func(v []float64) string {
			out := make([]string, len(v))
			for i, x := range v {
				out[i] = report.Secs(x)
			}
			return strings.Join(out, ", ")
		}
		t.Add(r.label(), fmt.Sprint(len(p50)), each(p50), report.Secs(r.sim.E2E.P50), relPct(relErr(r.sim.E2E.P50, m50)),
			each(p99), report.Secs(r.sim.E2E.P99), relPct(relErr(r.sim.E2E.P99, m99)))
	}
	if n == 0 {
		return ""
	}
	b.WriteString("\n### Real against real\n\nEach slice was run for real more than once (schedule.real.repeats), the same jobs under the same policy on the same " +
		"devices, one run of every slice before any second: how far two real runs of the same jobs fall apart is how close a simulation can be expected " +
		"to come to any one of them. The target above holds the simulation to each slice's first run; here it is set against the median of the real runs.\n\n")
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nReal runs of the same jobs differed by up to %s at P50 and %s at P99 (the largest over the smallest, less one). "+
		"The simulation lies within the real runs' range at P50 in %d of %d runs and at P99 in %d of %d.\n", pctSpread(spread50), pctSpread(spread99), in50, n, in99, n)
	return b.String()
}

// sensitivityText shows how far each simulation moves when every
// service time is shorter or longer by schedule.real.sensitivity: where a
// small error in the service-time model moves a percentile much, no
// simulator can be held to that percentile of one real run.
func (f *fidelity) sensitivityText() string {
	var s float64
	t := report.NewTable("run", ">P50 real", ">sim, faster", ">sim", ">sim, slower", ">real within", ">P99 real", ">sim, faster", ">sim", ">sim, slower", ">real within")
	var worst float64
	worstRun := ""
	for _, r := range f.runs {
		if r.faster == nil {
			continue
		}
		s = r.row.Sensitivity
		band := func(real, lo, mid, hi float64) string {
			if min(lo, mid, hi) <= real && real <= max(lo, mid, hi) {
				return "yes"
			}
			return "no"
		}
		p50 := [3]float64{r.faster.E2E.P50, r.sim.E2E.P50, r.slower.E2E.P50}
		p99 := [3]float64{r.faster.E2E.P99, r.sim.E2E.P99, r.slower.E2E.P99}
		for _, v := range []float64{p50[0], p50[2]} {
			if e := math.Abs(relErr(v, p50[1])); e > worst {
				worst, worstRun = e, r.name()
			}
		}
		t.Add(r.label(), report.Secs(r.real.E2E.P50), report.Secs(p50[0]), report.Secs(p50[1]), report.Secs(p50[2]), band(r.real.E2E.P50, p50[0], p50[1], p50[2]),
			report.Secs(r.real.E2E.P99), report.Secs(p99[0]), report.Secs(p99[1]), report.Secs(p99[2]), band(r.real.E2E.P99, p99[0], p99[1], p99[2]))
	}
	if worstRun == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Sensitivity\n\nEach slice simulated again with every service time %s shorter (faster) and %s longer (slower) than the profile's "+
		"(schedule.real.sensitivity), as if the device ran that much faster or slower: how far the simulation moves for a service-time model off by "+
		"that much either way, and whether the real run lies within that band.\n\n", report.Pct(s), report.Pct(s))
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nService times %s off move the simulated P50 by up to %s (%s).\n", report.Pct(s), pctSpread(worst), report.Escape(worstRun))
	return b.String()
}

// e2eP50 and e2eP99 pick a percentile of a summary's end-to-end latency.
func e2eP50(s metrics.Summary) float64 { return s.E2E.P50 }
func e2eP99(s metrics.Summary) float64 { return s.E2E.P99 }

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

// drawsText sets each real run against its slice simulated with every
// seed of the service-time draws (schedule.real.draws): how far the
// simulation moves with its own randomness, and whether the real run lies
// within that range. The target's verdict stays on the first draw.
func (f *fidelity) drawsText() string {
	t := report.NewTable("run", ">draws", ">P50 real", ">P50 sim", ">P50 over the draws", ">real within", ">P99 real", ">P99 sim", ">P99 over the draws", ">real within")
	var runs, in50, in99 int
	var widest float64
	widestRun := ""
	for _, r := range f.runs {
		if len(r.draws) == 0 {
			continue
		}
		runs++
		lo50, hi50 := r.drawSpread(e2eP50)
		lo99, hi99 := r.drawSpread(e2eP99)
		within := func(v, lo, hi float64, n *int) string {
			if lo <= v && v <= hi {
				*n++
				return "yes"
			}
			return "no"
		}
		if w := relErr(hi50, lo50); w > widest {
			widest, widestRun = w, r.name()
		}
		t.Add(r.label(), fmt.Sprint(len(r.draws)+1), report.Secs(r.real.E2E.P50), report.Secs(r.sim.E2E.P50), report.Secs(lo50)+" – "+report.Secs(hi50), within(r.real.E2E.P50, lo50, hi50, &in50),
			report.Secs(r.real.E2E.P99), report.Secs(r.sim.E2E.P99), report.Secs(lo99)+" – "+report.Secs(hi99), within(r.real.E2E.P99, lo99, hi99, &in99))
	}
	if runs == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### The simulation's own spread\n\nEach slice simulated again with other seeds of the service-time draws (schedule.real.draws; " +
		"the sweep's replications), the same jobs, policy and profile: a simulated batch takes a draw from the profile's measured distribution, " +
		"so the simulated percentiles of a slice this short are themselves samples. The sim columns are the first draw's, which the target holds to.\n\n")
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nThe real P50 lies within the draws' range in %d of %d runs, the real P99 in %d of %d; the draws' highest P50 is %s above their lowest in %s.\n",
		in50, runs, in99, runs, pctSpread(widest), report.Escape(widestRun))
	return b.String()
}

// pctSpread formats a spread as a percentage.
func pctSpread(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// rankingText compares the real and simulated order of the policies at
// each load.
func (f *fidelity) rankingText() string {
	var b strings.Builder
	b.WriteString("\n### Ranking\n\nThe policies at each load ordered by mean end-to-end latency over their completed jobs, best first.\n\n")
	t := report.NewTable("load", "real", "simulated", "same winner", "same order")
	order := func(idx []int, mean func(*realRun) float64) string {
		var parts []string
		for _, i := range idx {
			parts = append(parts, fmt.Sprintf("%s (%s)", report.Escape(f.runs[i].row.Policy), report.Secs(mean(f.runs[i]))))
		}
		return strings.Join(parts, ", ")
	}
	var kept, broken []string
	for _, rk := range f.rankings {
		measured := order(rk.real, func(r *realRun) float64 { return r.real.E2E.Mean })
		simulated := order(rk.sim, func(r *realRun) float64 { return r.sim.E2E.Mean })
		if !rk.ranked() {
			t.Add(report.Pct(rk.load), measured, simulated, "– (one policy)", "–")
			continue
		}
		t.Add(report.Pct(rk.load), measured, simulated, yesNo(rk.sameWinner()), yesNo(rk.sameOrder()))
		if rk.sameOrder() {
			kept = append(kept, report.Pct(rk.load))
		} else {
			broken = append(broken, report.Pct(rk.load))
		}
	}
	b.WriteString(t.String())
	switch {
	case len(kept) == 0 && len(broken) == 0:
		b.WriteString("\nNo load ran more than one policy, so there is no ranking to compare.\n")
	case len(broken) == 0:
		b.WriteString("\nThe simulator ranks the policies as the real runs do at every load.\n")
	case len(kept) == 0:
		fmt.Fprintf(&b, "\nThe simulator's ranking **differs** from the real runs' at every load (%s).\n", report.AndList(broken))
	default:
		fmt.Fprintf(&b, "\nThe simulator ranks the policies as the real runs do at %s, and **differently** at %s.\n", report.AndList(kept), report.AndList(broken))
	}
	return b.String()
}

// replayText sets each run against its replay: the simulator's own
// decisions, queues and clock with every batch taking the time the real
// run measured. What the replay misses is the share of the error that no
// service-time model could close; the rest is the service-time model's.
func (f *fidelity) replayText() string {
	var rows [][]string
	for _, r := range f.runs {
		p := r.replay
		if p == nil {
			continue
		}
		rows = append(rows, []string{r.name(),
			report.Secs(r.real.E2E.P50), report.Secs(p.E2E.P50), relPct(relErr(p.E2E.P50, r.real.E2E.P50)), relPct(relErr(r.sim.E2E.P50, r.real.E2E.P50)),
			report.Secs(r.real.E2E.P99), report.Secs(p.E2E.P99), relPct(relErr(p.E2E.P99, r.real.E2E.P99)), relPct(relErr(r.sim.E2E.P99, r.real.E2E.P99)),
			fmt.Sprint(r.row.ReplayMissed)})
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Replay: the simulator with the real run's times\n\n" +
		"Each run replayed: the same jobs, policy and devices simulated again, each batch taking exactly the time (decision to end, dispatch included) " +
		"that the batch its lead job led took in the real run, instead of a draw from the profile. " +
		"The replay's error is what the simulator's queues, decisions and clock make of real times (with the scheduler's lateness left out); " +
		"the simulation's error beyond it comes from the service-time model: the profile's latencies and contention factors. " +
		"A batch the real run had no counterpart for (its decisions parted from the replay's) takes the profile's mean, and is counted.\n\n")
	t := report.NewTable("run", ">P50 real", ">P50 replay", ">replay error", ">sim error", ">P99 real", ">P99 replay", ">replay error", ">sim error", ">batches without a real time")
	for _, row := range rows {
		t.Add(row...)
	}
	b.WriteString(t.String())
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// charts draws each run's end-to-end latency CDF, real against simulated,
// and one scatter of every compared job's simulated latency against its
// real one.
func (f *fidelity) charts() (string, []report.Chart, error) {
	var b strings.Builder
	var charts []report.Chart
	b.WriteString("\n### Distributions\n\n")
	used := map[string]bool{}
	for _, r := range f.runs {
		measured, simulated := positive(r.realE2E), positive(r.simE2E)
		if len(measured) == 0 || len(simulated) == 0 {
			fmt.Fprintf(&b, "%s has no completed job with a positive latency in one of its traces: no distribution to draw.\n\n", r.label())
			continue
		}
		name := chartFileName(used, "fidelity-cdf", r.row.Policy, strconv.FormatFloat(r.row.Load, 'g', -1, 64))
		svg, err := chart.CDF(fmt.Sprintf("%s: end-to-end latency, real and simulated", r.name()), "latency (s)",
			[]chart.Series{{Name: "real", X: measured}, {Name: "simulated", X: simulated}}, true)
		if err != nil {
			return "", nil, fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&b, "%s\n\n", c.Link(fmt.Sprintf("CDF of end-to-end latency of %s, the real run against its simulation", r.label())))
	}
	var series []chart.Series
	for _, r := range f.runs {
		s := chart.Series{Name: r.name()}
		for k := range r.pairedReal {
			if r.pairedSim[k] > 0 {
				s.X, s.Y = append(s.X, r.pairedReal[k]), append(s.Y, r.pairedSim[k])
			}
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	if len(series) > 0 {
		name := chartFileName(used, "fidelity-scatter")
		svg, err := chart.Scatter("Per-job end-to-end latency, simulated against real", "real latency (s)", "simulated latency (s)",
			series, chart.ScatterOptions{LogX: true, LogY: true, Diagonal: true, DiagonalLabel: "simulated = real"})
		if err != nil {
			return "", nil, fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&b, "%s\n\nEach point is a job both completed, at its real and its simulated end-to-end latency; on the dashed line the simulation is exact, below it the simulation is faster.\n",
			c.Link("Simulated against real end-to-end latency of every job, log-log, one colour per run"))
	}
	return b.String(), charts, nil
}

// chartFileName makes a chart's file name from parts: lower case, a
// hyphen for any run of other characters, unique among used.
func chartFileName(used map[string]bool, parts ...string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.Join(parts, "-")) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	base := strings.TrimSuffix(b.String(), "-")
	name := base
	for k := 2; used[name]; k++ {
		name = fmt.Sprintf("%s-%d", base, k)
	}
	used[name] = true
	return name + ".svg"
}

// sourcesText gives the figures of each source of error, their estimated
// contributions, and names the largest.
func (f *fidelity) sourcesText() string {
	var b strings.Builder
	b.WriteString("\n### Where the error comes from\n\nWhat the real runs did that the simulator does not model, from each run's dispatch.parquet and runs.parquet: " +
		"the dispatch overhead from the policy's decision to onnxruntime's Run (run_s − start_s) and the lag before the scheduler noticed a batch's end " +
		"(noticed_s − end_s), median / P99 over the batches; the measured run time (end_s − run_s) over the time the simulator's service model gives " +
		"the batch on the real run's own timeline (the profile's mean, slowed by the profiled contention factor for as long as other lanes of the device " +
		"ran their real batches beside it), each summed over the batches that ran alone throughout and over those that ran beside other lanes at some " +
		"point (so that a batch weighs by its time, and the mlp's microsecond batches, all fixed cost, do not outvote the rest), the latter with the " +
		"slowdown the model gave them (their modelled time over their profile means); how late the scheduler handled events due at a time; the pages the lanes' " +
		"threads faulted in during the batches' runs (memory onnxruntime had not used before, which the profile's warm runs do not pay); and the " +
		"untimed runs that warmed the lanes' sessions before the run's clock started, each session at its largest batch size until a run faulted " +
		"no page in (none where an earlier run had warmed them).\n\n")
	t := report.NewTable("run", ">batches", ">dispatch overhead", ">notice lag", ">run / model, alone", ">run / model, beside others", ">modelled slowdown",
		">late events per job", ">lateness P50 / P99", ">pages faulted in", ">warm-up")
	for _, r := range f.runs {
		s := r.src
		t.Add(r.label(), fmt.Sprint(s.batches), report.Secs(s.dispatchP50)+" / "+report.Secs(s.dispatchP99), report.Secs(s.lagP50)+" / "+report.Secs(s.lagP99),
			ratioOf(s.alone, s.aloneN), ratioOf(s.contended, s.contendedN), factorText(s.factor, s.contendedN),
			report.Num(s.latePerJob), report.Secs(r.row.LateP50S)+" / "+report.Secs(r.row.LateP99S), faultsText(s.faults), warmText(r.row))
	}
	b.WriteString(t.String())

	b.WriteString("\nMethod: each source's contribution is the time it adds to a real job's own end-to-end latency beyond the simulator's model, " +
		"averaged over the run's completed jobs (a batch counts once per job in it): run time beyond the model's for a batch that ran alone, " +
		"and for one that ran beside others, the dispatch overhead, and the median lateness times the " +
		"late events per job. Queueing behind a delayed batch is not counted, so they need not add up to the gap, the real mean end-to-end latency " +
		"less the simulated.\n\n")
	head := []string{"run", ">gap (real − sim)"}
	for _, info := range sourceInfo {
		head = append(head, ">"+info.column)
	}
	t = report.NewTable(append(head, "largest")...)
	var total [numSources]float64
	var gap float64
	jobs := 0
	for _, r := range f.runs {
		s := r.src
		row := []string{r.label(), report.Signed(s.gap, report.Secs)}
		for k := range sourceInfo {
			row = append(row, report.Signed(s.contrib[k], report.Secs))
		}
		row = append(row, sourceName(largest(s.contrib), s.contrib))
		t.Add(row...)
		if s.jobs > 0 {
			for k := range total {
				total[k] += s.contrib[k] * float64(s.jobs)
			}
			gap += s.gap * float64(s.jobs)
			jobs += s.jobs
		}
	}
	b.WriteString(t.String())
	k := largest(total)
	if jobs == 0 || k < 0 {
		b.WriteString("\nNo run has a batch to weigh, so no source can be named.\n")
		return b.String()
	}
	for i := range total {
		total[i] /= float64(jobs)
	}
	gap /= float64(jobs)
	var sum float64
	for _, v := range total {
		sum += v
	}
	fmt.Fprintf(&b, "\n**The main remaining source of error is %s**: %s per job, over the %d completed real jobs of the %d runs, against a mean gap of %s "+
		"(%s). The four sources together come to %s per job.\n",
		sourceName(k, total), report.Signed(total[k], report.Secs), jobs, len(f.runs), report.Signed(gap, report.Secs), gapText(gap), report.Signed(sum, report.Secs))
	if math.Abs(sum) < math.Abs(gap)/2 {
		b.WriteString("They come to less than half the gap: the rest is queueing, each job waiting behind batches that took longer or shorter " +
			"than simulated, which the method does not count")
		for _, r := range f.runs {
			if r.faster != nil {
				b.WriteString(" and which grows with the load (the Sensitivity table)")
				break
			}
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// largest is the index of the contribution largest in size; -1 when none
// is a number.
func largest(c [numSources]float64) int {
	k := -1
	for i, v := range c {
		if !math.IsNaN(v) && (k < 0 || math.Abs(v) > math.Abs(c[k])) {
			k = i
		}
	}
	return k
}

// sourceName names source k by the sign of its contribution; "–" for -1.
func sourceName(k int, c [numSources]float64) string {
	if k < 0 {
		return "–"
	}
	if c[k] < 0 {
		return sourceInfo[k].less
	}
	return sourceInfo[k].more
}

func gapText(gap float64) string {
	switch {
	case gap > 0:
		return "the real runs slower than simulated"
	case gap < 0:
		return "the real runs faster than simulated"
	}
	return "no gap"
}

func ratioOf(v float64, n int) string {
	if n == 0 {
		return "– (none)"
	}
	return fmt.Sprintf("%.2f (%d)", v, n)
}

func factorText(v float64, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

// faultsText is a run's count of pages faulted in, or why there is none.
func faultsText(n int64) string {
	if n < 0 {
		return "not counted"
	}
	return fmt.Sprint(n)
}

// warmText is a run's warm-up: its runs and time, and the sessions
// still faulting pages in when it stopped.
func warmText(row schedulespec.RealRunRow) string {
	if row.WarmRuns == 0 {
		return "none"
	}
	t := fmt.Sprintf("%d runs, %s", row.WarmRuns, report.Secs(row.WarmS))
	if row.WarmFaulting > 0 {
		t += fmt.Sprintf(", %d still faulting", row.WarmFaulting)
	}
	return t
}
