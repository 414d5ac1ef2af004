package evaluate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Inputs are the files evaluate reads.
type Inputs struct {
	// Schedule is the schedule artifact's directory.
	Schedule string
	// Jobs is generate's eval workload; Samples the profile's samples.
	Jobs, Samples string
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

// Provenance describes the run for the report's reproducibility section.
type Provenance struct {
	// Versions lists "stage@version" of every artifact the report rests on,
	// its own included.
	Versions []string
	// Config is the configuration the report rests on, one "key = value"
	// line per setting: evaluate's section and each upstream's as its
	// artifact records it.
	Config string
	// Machine describes the profiled machine (the profile's notes).
	Machine map[string]string
	// Commands reproduce the run.
	Commands []string
}

// Upstream is an artifact the report rests on, as its manifest records
// it: its stage and version, its section of the configuration as canonical
// JSON, and the notes its run left (the profile's machine).
type Upstream struct {
	Stage, Version string
	Config         []byte
	Notes          map[string]string
}

// NewProvenance says what the report of evaluate's version rests on: the
// upstreams' versions, the profiled machine, the configuration (evaluate's
// own section, the seed and each upstream's section as it was used) and the
// commands that reproduce it. The runner puts all of it in evaluate's key:
// the upstreams' versions enter it (pipeline.Stage.ShowsUpstreams), and a
// version's configuration is part of its key.
func NewProvenance(version string, seed int64, own Config, ups []Upstream) (Provenance, error) {
	prov := Provenance{Versions: []string{"evaluate@" + version}}
	var lines []string
	for _, u := range ups {
		prov.Versions = append(prov.Versions, u.Stage+"@"+u.Version)
		if u.Stage == "profile" {
			prov.Machine = u.Notes
			prov.Commands = append(prov.Commands, "mlsched pin profile "+u.Version+"   # the measured profile this report rests on")
		}
		l, err := config.Lines(u.Stage+".", u.Config)
		if err != nil {
			return prov, fmt.Errorf("%s@%s: config in manifest: %w", u.Stage, u.Version, err)
		}
		lines = append(lines, l...)
	}
	b, err := config.Canonical(own)
	if err != nil {
		return prov, err
	}
	l, err := config.Lines("evaluate.", b)
	if err != nil {
		return prov, err
	}
	lines = append(append(lines, l...), fmt.Sprintf("seed = %d", seed))
	slices.Sort(lines)
	slices.Sort(prov.Versions[1:])
	prov.Config = strings.Join(lines, "\n") + "\n"
	prov.Commands = append(prov.Commands, "mlsched run                                   # with this pipeline.yaml")
	return prov, nil
}

// policyResult is what the report needs of one policy once its trace is
// released: the summary, its differences from each baseline, and samples
// of its latency distributions for the charts.
type policyResult struct {
	summary     metrics.Summary
	reps        []metrics.Summary // every replication's, the first being summary
	diffs       []metrics.Difference
	e2e, wait   []float64 // distribution sketches: equally spaced quantiles
	interactive []float64 // the interactive jobs' end-to-end sketch
}

// sketchPoints is how many quantiles stand for a latency distribution in
// the charts: enough for a smooth CDF and histogram, few enough that every
// policy's fits in memory whatever the workload's size.
const sketchPoints = 2000

// Run evaluates the schedule artifact: it summarizes every policy's trace,
// compares each with the baselines, reads the load sweep and the capacity
// search, and writes metrics.parquet and the report. Everything it says of
// the simulations comes from the artifact: which policies ran, how often,
// on which cluster.
func Run(ctx context.Context, cfg Config, seed int64, in Inputs, out Output) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("evaluate: invalid config: %w", err)
	}
	runs, err := readRuns(in.Schedule)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := cfg.CheckBaselines(runs.policies); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	learned, err := readLearned(in.Schedule, runs, in.ScheduleNotes)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	devices, err := parquetio.ReadAll[schedulespec.ClusterRow](filepath.Join(in.Schedule, schedulespec.ClusterFile))
	if err != nil {
		return fmt.Errorf("evaluate: read cluster: %w", err)
	}
	cl, err := metrics.ReadCluster(filepath.Join(in.Schedule, schedulespec.ClusterFile))
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	bounds, err := metrics.ReadBounds(filepath.Join(in.Schedule, schedulespec.BoundsFile))
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	samples, err := metrics.JobSamples(in.Jobs)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	policies := runs.policies
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
	bs := metrics.Bootstrap{Resamples: cfg.Bootstrap.Resamples, Confidence: cfg.Bootstrap.Confidence, Seed: uint64(seed)}

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
	// once; what the comparisons need of it (a metrics.Side, about a third
	// of the trace) stays for them, which run together afterwards on one
	// set of resamples.
	results := make([]policyResult, len(policies))
	sides := make([]*metrics.Side, len(policies))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, spec := range policies {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			t, busy, err := loadRep(spec, 1)
			if err != nil {
				return err
			}
			r := policyResult{summary: metrics.Summarize(t, busy, cl, bounds, samples, bs)}
			sides[i] = metrics.NewSide(t)
			r.e2e, r.wait, r.interactive = sketch(t.E2E, t.Rejected, nil), sketch(t.Wait, t.Rejected, nil), sketch(t.E2E, t.Rejected, t.Class)
			r.reps = []metrics.Summary{r.summary}
			for k := 2; k <= runs.replications; k++ {
				t, busy, err := loadRep(spec, k)
				if err != nil {
					return err
				}
				point := metrics.Bootstrap{Confidence: bs.Confidence} // no resamples: the runs give the interval
				r.reps = append(r.reps, metrics.Summarize(t, busy, cl, bounds, samples, point))
			}
			results[i] = r
			step()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var pairs []metrics.Pair
	var of []int // the policy of each pair
	for i, spec := range policies {
		for _, b := range cfg.Baselines {
			if b != spec {
				pairs = append(pairs, metrics.Pair{Policy: sides[i], Baseline: sides[slices.Index(policies, b)]})
				of = append(of, i)
			}
		}
	}
	// Each learned spec against its counterparts, on the same resamples.
	fromBaselines := len(pairs)
	var compared []int // the comparison of each further pair
	if learned != nil {
		for k, c := range learned.comparisons {
			if c.simulated {
				pairs = append(pairs, metrics.Pair{Policy: sides[slices.Index(policies, c.learned)], Baseline: sides[slices.Index(policies, c.counterpart)]})
				compared = append(compared, k)
			}
		}
	}
	diffs, err := metrics.CompareAll(pairs, bs)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	for k, d := range diffs[:fromBaselines] {
		results[of[k]].diffs = append(results[of[k]].diffs, d...)
	}
	for k, d := range diffs[fromBaselines:] {
		learned.comparisons[compared[k]].diffs = d
	}
	clear(sides)

	sw, err := readSweep(in.Schedule, policies, cfg.Baselines, cfg.Bootstrap.Confidence)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	curves, err := profileCurves(in.Samples, devices)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	tr, err := readTrained(in.Train)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	fid, err := readFidelity(in.Schedule, devices)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	reps := replicationRows(policies, results, cfg.Baselines, cfg.Bootstrap.Confidence)
	rows := append(metricRows(policies, results, bounds, sw), reps...)
	rows = append(rows, profileRows(curves)...)
	rows = append(rows, trainRows(tr)...)
	rows = append(rows, learnedRows(learned)...)
	rows = append(rows, fidelityRows(fid)...)
	var since *change
	if in.Previous != "" {
		old, err := parquetio.ReadAll[MetricRow](in.Previous)
		if err != nil {
			return fmt.Errorf("evaluate: compare_to %s: %w", in.PreviousVersion, err)
		}
		since = compareRuns(rows, old, in.PreviousVersion)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, MetricsFile), rows, out.Metadata); err != nil {
		return fmt.Errorf("evaluate: write %s: %w", MetricsFile, err)
	}

	d := &reportData{cfg: cfg, devices: devices, policies: policies, results: results, bounds: bounds,
		cluster: cl, sweep: sw, since: since, replications: reps, profile: curves, train: tr, learned: learned, fidelity: fid, prov: out.Provenance}
	best := policies[d.ranked(objectives[2])[0]]
	from := cfg.Timeline.Start * bounds.MakespanLBS
	if d.timeline, err = readTimeline(filepath.Join(in.Schedule, filepath.FromSlash(runs.of[best][0].Devices)), best, cl, from, from+cfg.Timeline.Span.Seconds()); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	doc, err := d.document()
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := doc.Write(out.Dir, ReportMD, ReportHTML); err != nil {
		return fmt.Errorf("evaluate: %w", err)
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
	policies     []string
	replications int
	of           map[string][]schedulespec.RunRow // by policy, replication k at k-1
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
	if len(r.policies) == 0 {
		return nil, fmt.Errorf("read %s: no simulation", schedulespec.RunsFile)
	}
	r.replications = len(r.of[r.policies[0]])
	for _, p := range r.policies {
		if n := len(r.of[p]); n != r.replications {
			return nil, fmt.Errorf("read %s: policy %s has %d replications, policy %s %d", schedulespec.RunsFile, p, n, r.policies[0], r.replications)
		}
	}
	return r, nil
}
