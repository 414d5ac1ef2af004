package evaluate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Inputs are the files evaluate reads.
type Inputs struct {
	// Schedule is the schedule artifact's directory.
	Schedule string
	// Jobs is generate's eval workload; Samples the profile's samples.
	Jobs, Samples string
	// Machine is the profile's machine.parquet, how busy the machine was
	// while it measured: a profile that measured nothing, or was made
	// before the file was, has none (the path names no file, or is empty).
	Machine string
	// Workloads, if not empty, lists each replication's eval workload,
	// from the first (which is Jobs); a replication beyond it ran Jobs.
	Workloads []string
	// Train is the train artifact's directory: the report shows its
	// predictor's and placement network's scores. Empty leaves those
	// sections out.
	Train string
	// ScheduleNotes are the schedule artifact's manifest notes: the
	// learned simulations' wall-clock serving figures
	// (serving:<run>:<figure>), which the report shows beside the
	// targets. Nil leaves them out.
	ScheduleNotes map[string]string
	// Previous is the metrics.parquet of the run evaluate.compare_to names,
	// and PreviousVersion that run's version; both empty without one.
	Previous, PreviousVersion string
}

// Output is where evaluate writes and what it needs from the runner.
type Output struct {
	Dir      string
	Metadata map[string]string
	// Provenance is what the report's last section says of the run.
	Provenance Provenance
	// Progress, if not nil, is called with the policies summarized out of
	// the total.
	Progress func(done, total int64)
}

// sketchPoints is how many quantiles stand for a latency distribution in
// the charts: enough for a smooth CDF and histogram, few enough that every
// policy's fits in memory whatever the workload's size.
const sketchPoints = 2000

// Run evaluates the schedule artifact: it summarizes every policy's trace,
// compares each with the baselines, and has every section of the report
// (sections) read what it shows, add its numbers to metrics.parquet and
// render its part of the report. Everything it says of the simulations
// comes from the artifact: which policies ran, how often, on which
// cluster.
func Run(ctx context.Context, cfg Config, seed int64, in Inputs, out Output) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("evaluate: invalid config: %w", err)
	}
	secs := sections()
	if err := checkNames(secs); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	ev, err := summarize(ctx, cfg, in, out)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, s := range secs {
		if err := s.Read(ev); err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
	}
	if err := compare(ev, secs); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}

	var rows []MetricRow
	for _, s := range secs {
		rows = append(rows, s.Rows(ev)...)
	}
	section.OrderRows(rows)
	for _, s := range secs {
		if a, ok := s.(section.Annotator); ok {
			a.Annotate(rows)
		}
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, MetricsFile), rows, out.Metadata); err != nil {
		return fmt.Errorf("evaluate: write %s: %w", MetricsFile, err)
	}
	doc, err := document(ev, secs)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := doc.Write(out.Dir, ReportMD, ReportHTML); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	return nil
}

// summarize reads what every section shares of the schedule artifact (its
// runs, cluster and bounds), summarizes each policy's traces, and analyses
// the replications (section.Analysis): every interval the report gives.
func summarize(ctx context.Context, cfg Config, in Inputs, out Output) (*section.Evaluation, error) {
	runs, err := readRuns(in.Schedule)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckBaselines(runs.policies); err != nil {
		return nil, err
	}
	ev := &section.Evaluation{
		Config:          cfg,
		Schedule:        in.Schedule,
		Samples:         in.Samples,
		Machine:         in.Machine,
		Train:           in.Train,
		ScheduleNotes:   in.ScheduleNotes,
		Previous:        in.Previous,
		PreviousVersion: in.PreviousVersion,
		Policies:        runs.policies,
		Ablations:       runs.ablations,
		Replications:    runs.replications,
		Runs:            runs.of,
		Provenance:      out.Provenance,
	}
	if ev.Devices, err = parquetio.ReadAll[schedulespec.ClusterRow](filepath.Join(in.Schedule, schedulespec.ClusterFile)); err != nil {
		return nil, fmt.Errorf("read cluster: %w", err)
	}
	if ev.Cluster, err = metrics.ReadCluster(filepath.Join(in.Schedule, schedulespec.ClusterFile)); err != nil {
		return nil, err
	}
	cl := ev.Cluster
	if ev.BoundsRows, err = parquetio.ReadAll[schedulespec.BoundsRow](filepath.Join(in.Schedule, schedulespec.BoundsFile)); err != nil {
		return nil, fmt.Errorf("read bounds: %w", err)
	}
	bounds, err := metrics.ReadBounds(filepath.Join(in.Schedule, schedulespec.BoundsFile))
	if err != nil {
		return nil, err
	}
	if len(bounds) != runs.replications {
		return nil, fmt.Errorf("read %s: %d rows, one per replication of runs.parquet's %d", schedulespec.BoundsFile, len(bounds), runs.replications)
	}
	ev.Bounds = bounds[0]
	// Each replication's own jobs give its completed samples.
	ev.SharedWorkload = runs.replications > 1
	for k := 1; k < runs.replications; k++ {
		if k < len(in.Workloads) && in.Workloads[k] != in.Jobs {
			ev.SharedWorkload = false
		}
	}
	samples := make([]*metrics.Samples, runs.replications)
	for k := range samples {
		jobs := in.Jobs
		if k < len(in.Workloads) {
			jobs = in.Workloads[k]
		}
		if k > 0 && jobs == in.Jobs {
			samples[k] = samples[0]
			continue
		}
		if samples[k], err = metrics.JobSamples(jobs); err != nil {
			return nil, err
		}
	}
	policies := slices.Concat(runs.policies, runs.ablations) // ev.Index's order
	total := int64(len(policies))
	var (
		mu   sync.Mutex // keeps the reports in order
		done int64
	)
	step := func() {
		mu.Lock()
		defer mu.Unlock()
		if done++; out.Progress != nil {
			out.Progress(done, total)
		}
	}

	loadRep := func(spec string, k int) (*metrics.Trace, []float64, error) {
		r := runs.of[spec][k-1]
		t, err := metrics.ReadTrace(filepath.Join(in.Schedule, filepath.FromSlash(r.Trace)), cl.Devices)
		if err != nil {
			return nil, nil, err
		}
		busy, err := metrics.ReadBusy(filepath.Join(in.Schedule, filepath.FromSlash(r.Devices)), cl.Devices)
		return t, busy, err
	}
	// Each trace is read, summarized and released, at most GOMAXPROCS at
	// once; what the analysis needs of it (its per-job series) stays.
	ev.Results = make([]section.Result, len(policies))
	series := make([][]section.Series, len(policies))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, spec := range policies {
		g.Go(func() error {
			var r section.Result
			for k := 1; k <= runs.replications; k++ {
				if err := gctx.Err(); err != nil {
					return err
				}
				t, busy, err := loadRep(spec, k)
				if err != nil {
					if k > 1 {
						return fmt.Errorf("replication %d: %w", k, err)
					}
					return err
				}
				r.Reps = append(r.Reps, metrics.Summarize(t, busy, cl, bounds[k-1], samples[k-1]))
				series[i] = append(series[i], seriesOf(t))
				if k == 1 {
					r.E2ESketch, r.WaitSketch, r.InteractiveSketch = sketch(t.E2E, t.Rejected, nil), sketch(t.Wait, t.Rejected, nil), sketch(t.E2E, t.Rejected, t.Class)
				}
			}
			r.Summary = metrics.MeanSummary(r.Reps)
			ev.Results[i] = r
			step()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	reps := make([][]metrics.Summary, len(policies))
	for i := range reps {
		reps[i] = ev.Results[i].Reps
	}
	if ev.Analysis, err = section.NewAnalysis(reps, series, cfg.Confidence); err != nil {
		return nil, err
	}
	ev.Analysis.Candidates = len(runs.policies)
	ev.Results = ev.Results[:len(runs.policies)]
	return ev, nil
}

// seriesOf is a trace's per-job outputs, in job id (arrival) order.
func seriesOf(t *metrics.Trace) section.Series {
	var s section.Series
	s.Missed = make([]float64, t.Len())
	for i := range t.Len() {
		if !t.Rejected[i] {
			s.E2E = append(s.E2E, t.E2E[i])
		}
		miss := 0.0
		if !t.SLOMet[i] {
			miss = 1
		}
		s.Missed[i] = miss
		if t.Class[i] == metrics.Interactive {
			s.InteractiveMissed = append(s.InteractiveMissed, miss)
		}
	}
	return s
}

// compare sets every policy against each baseline, and the pairs each
// Comparer section asks for, with the analysis's paired intervals: the
// baselines' differences go to the results, a Comparer's to it.
func compare(ev *section.Evaluation, secs []section.Section) error {
	all := slices.Concat(ev.Policies, ev.Ablations) // ev.Index's order
	paired := func(i, j int) []metrics.Difference {
		var out []metrics.Difference
		for _, o := range section.Objectives() {
			out = append(out, ev.Analysis.Paired(i, j, o.Diff, all[i], all[j]))
		}
		return out
	}
	for i, spec := range ev.Policies {
		for _, b := range ev.Config.Baselines {
			if b != spec {
				ev.Results[i].Diffs = append(ev.Results[i].Diffs, paired(i, slices.Index(ev.Policies, b))...)
			}
		}
	}
	for _, s := range secs {
		c, ok := s.(section.Comparer)
		if !ok {
			continue
		}
		var diffs [][]metrics.Difference
		for _, p := range c.Pairs(ev) {
			i, j := ev.Index(p.Policy), ev.Index(p.Other)
			if i < 0 || j < 0 {
				return fmt.Errorf("section %s: compare %s with %s: both must be simulated (runs: %v)", s.Name(), p.Policy, p.Other, all)
			}
			diffs = append(diffs, paired(i, j))
		}
		c.Compared(diffs)
	}
	return nil
}

// sketch returns sketchPoints equally spaced quantiles of the completed
// jobs' values (of the interactive class only when class is given): a
// sample of the distribution that draws the same CDF and histogram.
func sketch(values []float64, rejected []bool, class []uint8) []float64 {
	var v []float64
	for i, x := range values {
		if !rejected[i] && (class == nil || class[i] == metrics.Interactive) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	n := min(sketchPoints, len(v))
	out := make([]float64, n)
	for k := range n {
		pos := float64(k) / float64(max(n-1, 1)) * float64(len(v)-1)
		out[k] = v[int(math.Round(pos))]
	}
	return out
}

// runSet holds the simulations of the whole workload the schedule artifact
// holds (runs.parquet): the policies in schedule's order, each with the
// same number of replications.
type runSet struct {
	// policies are the policies, ablations a learned policy's ablations
	// (policy.Spec.Ablation), each in schedule's order.
	policies, ablations []string
	replications        int
	of                  map[string][]schedulespec.RunRow // by policy, replication k at k-1
}

// readRuns reads runs.parquet and checks that every policy ran every
// replication once.
func readRuns(dir string) (*runSet, error) {
	rows, err := parquetio.ReadAll[schedulespec.RunRow](filepath.Join(dir, schedulespec.RunsFile))
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	r := &runSet{of: map[string][]schedulespec.RunRow{}}
	for i, row := range rows {
		if _, ok := r.of[row.Policy]; !ok {
			r.policies = append(r.policies, row.Policy)
		}
		if want := int32(len(r.of[row.Policy]) + 1); row.Replication != want {
			return nil, fmt.Errorf("read %s: row %d: policy %s replication %d, want %d", schedulespec.RunsFile, i+1, row.Policy, row.Replication, want)
		}
		r.of[row.Policy] = append(r.of[row.Policy], row)
	}
	var specs []string
	specs, r.policies = r.policies, nil
	for _, spec := range specs {
		ps, err := policy.ParseSpec(spec)
		switch {
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", schedulespec.RunsFile, err)
		case ps.Ablation != "":
			r.ablations = append(r.ablations, spec)
		default:
			r.policies = append(r.policies, spec)
		}
	}
	if len(r.policies) == 0 {
		return nil, fmt.Errorf("read %s: no simulation of a policy", schedulespec.RunsFile)
	}
	r.replications = len(r.of[r.policies[0]])
	for _, p := range slices.Concat(r.policies, r.ablations) {
		if n := len(r.of[p]); n != r.replications {
			return nil, fmt.Errorf("read %s: policy %s has %d replications, policy %s %d", schedulespec.RunsFile, p, n, r.policies[0], r.replications)
		}
	}
	return r, nil
}
