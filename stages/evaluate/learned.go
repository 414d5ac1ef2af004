package evaluate

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// ScopeLearned holds the learned policies' headline numbers in
// metrics.parquet: each learned spec's serving counts in replication 1
// (serving.parquet's, Baseline empty), and its paired differences from
// the edf specs it is set against (Baseline the counterpart).
const ScopeLearned = "learned"

// learnedRuns is what the report shows of the learned policies: their
// serving files, the wall-clock figures the schedule manifest notes, the
// comparisons with their counterparts and the studies.
type learnedRuns struct {
	// specs are the learned specs simulated, in schedule's order.
	specs []string
	reps  int
	// serving holds each spec's serving.parquet row, replication k at
	// k-1.
	serving map[string][]schedulespec.ServingRow
	// wall holds the wall-clock figures noted for each run (runName); a
	// run the notes say nothing of is absent.
	wall map[string]wallClock
	// comparisons pair each learned spec with its counterparts, in the
	// order of specs, the Threshold rule's first.
	comparisons []comparison
	// studies are studies.parquet's rows; none when the studies were
	// off or the artifact has no such file.
	studies []schedulespec.StudyRow
}

// comparison is one learned spec against one of its counterparts.
type comparison struct {
	learned, counterpart string
	// rule says what the counterpart decides migrations by.
	rule string
	// simulated is whether schedule ran the counterpart; diffs are
	// CompareAll's differences, learned minus counterpart, when it did.
	simulated bool
	diffs     []metrics.Difference
}

// The serving paths the schedule stage times, in the order of
// wallClock.paths, by their names in the notes.
var servingPaths = []string{"uncached", "batched", "cached"}

// wallClock is one learned run's wall-clock serving figures, from the
// schedule manifest's notes.
type wallClock struct {
	// inference is the time spent in onnxruntime, seconds; NaN when not
	// noted.
	inference float64
	paths     [3]servingPath
}

// servingPath is one path's decisions and their median and 99th
// percentile, seconds.
type servingPath struct {
	taken    bool
	n        int64
	p50, p99 float64
}

// runName names replication k of a spec as the notes and the trace
// directories do: the spec, or spec/rep-k.
func runName(spec string, k int) string {
	if k == 1 {
		return spec
	}
	return fmt.Sprintf("%s/rep-%d", spec, k)
}

// counterparts returns the specs a learned spec is set against: edf with
// the same options and the Threshold rule, then without migration.
func counterparts(spec string) ([]comparison, error) {
	ps, err := policy.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	threshold, none, ok := ps.Counterparts()
	if !ok {
		return nil, fmt.Errorf("%s is not a learned policy", spec)
	}
	return []comparison{
		{learned: spec, counterpart: threshold.String(), rule: "the Threshold rule"},
		{learned: spec, counterpart: none.String(), rule: "no migration"},
	}, nil
}

// readLearned reads what the report shows of the learned specs among the
// runs: each run's serving.parquet, the notes' wall-clock figures and
// studies.parquet. It returns nil when no learned spec was simulated.
// Every error names the file or note at fault.
func readLearned(dir string, runs *runSet, notes map[string]string) (*learnedRuns, error) {
	l := &learnedRuns{reps: runs.replications, serving: map[string][]schedulespec.ServingRow{}, wall: map[string]wallClock{}}
	for _, p := range runs.policies {
		if ps, err := policy.ParseSpec(p); err == nil && ps.Learned() {
			l.specs = append(l.specs, p)
		}
	}
	if len(l.specs) == 0 {
		return nil, nil
	}
	for _, spec := range l.specs {
		cs, err := counterparts(spec)
		if err != nil {
			return nil, fmt.Errorf("learned policy %s: %w", spec, err)
		}
		for i := range cs {
			cs[i].simulated = slices.Contains(runs.policies, cs[i].counterpart)
		}
		l.comparisons = append(l.comparisons, cs...)
		for k := 1; k <= runs.replications; k++ {
			row, err := readServing(dir, spec, k)
			if err != nil {
				return nil, err
			}
			l.serving[spec] = append(l.serving[spec], row)
			w, ok, err := wallClockOf(notes, runName(spec, k))
			if err != nil {
				return nil, err
			}
			if ok {
				l.wall[runName(spec, k)] = w
			}
		}
	}
	var err error
	if l.studies, err = readStudies(dir, runs.policies); err != nil {
		return nil, err
	}
	return l, nil
}

// readServing reads and checks the serving.parquet of replication k of a
// learned spec.
func readServing(dir, spec string, k int) (schedulespec.ServingRow, error) {
	name := schedulespec.ReplicationFile(spec, k, schedulespec.ServingFile)
	rows, err := parquetio.ReadAll[schedulespec.ServingRow](filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return schedulespec.ServingRow{}, fmt.Errorf("read serving of %s: %w", runName(spec, k), err)
	}
	if len(rows) != 1 {
		return schedulespec.ServingRow{}, fmt.Errorf("read %s: %d rows, want 1", name, len(rows))
	}
	r := rows[0]
	bad := ""
	switch {
	case r.Policy != spec || r.Replication != int32(k):
		bad = fmt.Sprintf("policy %s replication %d, want %s replication %d", r.Policy, r.Replication, spec, k)
	case r.Decisions < 0 || r.Batches < 0 || r.Migrations < 0 || r.Evaluated < 0 || r.Calls < 0:
		bad = fmt.Sprintf("a negative count (decisions %d, batches %d, migrations %d, evaluated %d, calls %d)",
			r.Decisions, r.Batches, r.Migrations, r.Evaluated, r.Calls)
	case r.CacheHits < 0 || r.CacheHits > r.Decisions || r.CacheChanged < 0 || r.CacheChanged > r.CacheHits:
		bad = fmt.Sprintf("cache_hits %d and cache_changed %d of %d decisions", r.CacheHits, r.CacheChanged, r.Decisions)
	case !(r.CostS >= 0) || math.IsInf(r.CostS, 1):
		bad = fmt.Sprintf("cost_s = %g, want a finite time of 0 or more", r.CostS)
	case math.IsNaN(r.MeanBatch) || math.IsInf(r.MeanBatch, 0) || math.IsNaN(r.HitRate) || r.HitRate < 0 || r.HitRate > 1:
		bad = fmt.Sprintf("mean_batch %g, hit_rate %g", r.MeanBatch, r.HitRate)
	}
	if bad != "" {
		return r, fmt.Errorf("read %s: %s", name, bad)
	}
	return r, nil
}

// wallClockOf reads run's wall-clock figures from the schedule manifest's
// notes (serving:<run>:<figure>); ok is false when the notes have none.
func wallClockOf(notes map[string]string, run string) (w wallClock, ok bool, err error) {
	prefix := "serving:" + run + ":"
	get := func(figure string) (float64, bool, error) {
		key := prefix + figure
		s, ok := notes[key]
		if !ok {
			return math.NaN(), false, nil
		}
		ok = true
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			return 0, false, fmt.Errorf("schedule manifest: note %s = %q: want a number of 0 or more", key, s)
		}
		return v, true, nil
	}
	var found bool
	if w.inference, found, err = get("inference_s"); err != nil {
		return w, false, err
	}
	ok = found
	for i, path := range servingPaths {
		n, found, err := get(path + "_n")
		if err != nil {
			return w, false, err
		}
		if !found {
			continue
		}
		ok = true
		p50, has50, err := get(path + "_p50_us")
		if err != nil {
			return w, false, err
		}
		p99, has99, err := get(path + "_p99_us")
		if err != nil {
			return w, false, err
		}
		if !has50 || !has99 || n != math.Trunc(n) {
			return w, false, fmt.Errorf("schedule manifest: note %s%s_n = %v without a whole count and both %s_p50_us and %s_p99_us", prefix, path, n, path, path)
		}
		w.paths[i] = servingPath{taken: true, n: int64(n), p50: p50 * 1e-6, p99: p99 * 1e-6}
	}
	return w, ok, nil
}

// readStudies reads studies.parquet: nil when the artifact has none (a
// schedule version from before the studies). Its rows must name
// simulated policies and known studies, and hold usable axes.
func readStudies(dir string, policies []string) ([]schedulespec.StudyRow, error) {
	path := filepath.Join(dir, schedulespec.StudiesFile)
	rows, err := parquetio.ReadAll[schedulespec.StudyRow](path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read studies: %w", err)
	}
	for i, r := range rows {
		bad := ""
		switch {
		case r.Study != schedulespec.StudyPredictionError && r.Study != schedulespec.StudyDecisionCost:
			bad = fmt.Sprintf("study %q, want %s or %s", r.Study, schedulespec.StudyPredictionError, schedulespec.StudyDecisionCost)
		case !slices.Contains(policies, r.Policy):
			bad = fmt.Sprintf("policy %q was not simulated (runs: %v)", r.Policy, policies)
		case !(r.PredictionError >= 0 && r.PredictionError < 1):
			bad = fmt.Sprintf("prediction_error = %g, want a share in [0, 1)", r.PredictionError)
		case !(r.PredictionMAPE >= 0) || math.IsInf(r.PredictionMAPE, 1):
			bad = fmt.Sprintf("prediction_mape = %g, want a finite share of 0 or more", r.PredictionMAPE)
		case !(r.DecisionCostS >= 0) || math.IsInf(r.DecisionCostS, 1):
			bad = fmt.Sprintf("decision_cost_s = %g, want a finite time of 0 or more", r.DecisionCostS)
		case r.Study == schedulespec.StudyDecisionCost && r.DecisionCost == "":
			bad = "a decision_cost row without its decision_cost"
		case r.SLOAttainment < 0 || r.SLOAttainment > 1 || r.InteractiveSLOAttainment < 0 || r.InteractiveSLOAttainment > 1:
			bad = fmt.Sprintf("slo_attainment %g, interactive_slo_attainment %g, want shares", r.SLOAttainment, r.InteractiveSLOAttainment)
		}
		if bad != "" {
			return nil, fmt.Errorf("read %s: row %d (%s, %s): %s", schedulespec.StudiesFile, i+1, r.Study, r.Policy, bad)
		}
	}
	return rows, nil
}

// study returns the rows of one study.
func (l *learnedRuns) study(name string) []schedulespec.StudyRow {
	var out []schedulespec.StudyRow
	for _, r := range l.studies {
		if r.Study == name {
			out = append(out, r)
		}
	}
	return out
}

// learnedRows are the learned specs' headline numbers for metrics.parquet
// (ScopeLearned): replication 1's serving counts and the paired
// differences from the counterparts that were simulated.
func learnedRows(l *learnedRuns) []MetricRow {
	if l == nil {
		return nil
	}
	var rows []MetricRow
	for _, spec := range l.specs {
		s := l.serving[spec][0]
		for _, m := range []struct {
			name string
			v    float64
		}{{"decisions", float64(s.Decisions)}, {"batches", float64(s.Batches)}, {"mean_batch", s.MeanBatch},
			{"migrations", float64(s.Migrations)}, {"cache_hits", float64(s.CacheHits)}, {"hit_rate", s.HitRate},
			{"cache_changed", float64(s.CacheChanged)}, {"evaluated", float64(s.Evaluated)}, {"calls", float64(s.Calls)},
			{"cost_s", s.CostS}} {
			rows = append(rows, MetricRow{Scope: ScopeLearned, Policy: spec, Metric: m.name, Value: m.v})
		}
		for _, c := range l.comparisons {
			if c.learned != spec {
				continue
			}
			for _, d := range c.diffs {
				rows = append(rows, MetricRow{Scope: ScopeLearned, Policy: spec, Baseline: c.counterpart, Metric: d.Metric,
					Value: d.Value, Lo: ptr(d.Lo), Hi: ptr(d.Hi), Significant: d.Significant})
			}
		}
	}
	return rows
}

// The serving targets: one decision through onnxruntime, a
// decision in a batch of 32, a cache hit.
const (
	targetUncachedP50 = 20e-6
	targetUncachedP99 = 100e-6
	targetBatched     = 2e-6
	targetBatch       = 32
	targetCached      = 200e-9
)

// learnedSection is the report's part on the learned policies: the
// network against the rules, serving, and the two studies; left out when
// schedule simulated no learned policy.
func learnedSection(d *reportData) (report.Section, error) {
	l := d.learned
	if l == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	fmt.Fprintf(&md, "The learned policy places and orders jobs as %s does; every migration decision is the train stage's placement network's, "+
		"run through onnxruntime inside the simulation: decisions are batched (schedule.learned.batch and window), cached "+
		"(schedule.learned.cache) and charged their cost on the simulated clock (schedule.learned.cost). Learned specs simulated: %s.\n",
		policy.LearnedBase, strings.Join(mapf(l.specs, report.Escape), ", "))

	md.WriteString(d.againstRulesText())
	md.WriteString(l.servingText())
	text, cs, err := d.predictionErrorText()
	if err != nil {
		return report.Section{}, err
	}
	md.WriteString(text)
	charts = append(charts, cs...)
	md.WriteString(l.decisionCostText())
	return report.Section{Title: "Learned decisions", Markdown: md.String(), Charts: charts}, nil
}

// headline are the objectives the comparisons state: those with a paired
// interval (the makespan has none).
func headline() []objective {
	var out []objective
	for _, o := range objectives {
		if o.diff != metrics.MetricMakespan {
			out = append(out, o)
		}
	}
	return out
}

// verdict says whether a difference (policy minus other) is better,
// worse or no difference for an objective; "" when it cannot say.
func verdict(o objective, x metrics.Difference) string {
	switch {
	case math.IsNaN(x.Value):
		return ""
	case !x.Significant:
		return "no difference"
	case (x.Value < 0) == o.lower:
		return "better"
	}
	return "worse"
}

// againstRulesText sets each learned spec against its counterparts, one
// table of paired differences each.
func (d *reportData) againstRulesText() string {
	l := d.learned
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The network against the rules\n\nEach learned spec against %s with the same options, with the Threshold rule "+
		"(+migrate: move a waiting job when the predicted gain exceeds schedule.migration.min_gain) and with no migration. "+
		"Both ran the same %d jobs with the same ground-truth draws (replication 1), so each difference is paired job by job: "+
		"learned minus the other, with its %.0f%% bootstrap interval; an interval that contains zero is no difference.\n",
		policy.LearnedBase, d.results[0].summary.Jobs, 100*d.cfg.Bootstrap.Confidence)
	var missing []string
	for _, c := range l.comparisons {
		if !c.simulated {
			counterpart := report.Escape(c.counterpart)
			missing = append(missing, fmt.Sprintf("%s (%s with %s's options; add %s to schedule.policies to compare)", counterpart, c.rule, report.Escape(c.learned), counterpart))
			continue
		}
		learned, counterpart := report.Escape(c.learned), report.Escape(c.counterpart)
		fmt.Fprintf(&b, "\n**%s against %s** (%s):\n\n", learned, counterpart, c.rule)
		t := report.NewTable("metric", ">"+learned, ">"+counterpart, ">difference (interval)", learned+" is")
		var better, worse, same []string
		for _, o := range headline() {
			i := slices.IndexFunc(c.diffs, func(x metrics.Difference) bool { return x.Metric == o.diff })
			if i < 0 {
				continue
			}
			x := c.diffs[i]
			v := verdict(o, x)
			name := lowerFirst(o.name)
			switch v {
			case "better":
				better = append(better, name)
			case "worse":
				worse = append(worse, name)
			case "no difference":
				same = append(same, name)
			default:
				v = "–"
			}
			t.Add(o.name, o.format(x.PolicyValue), o.format(x.BaselineValue), diffText(x, o.delta), v)
		}
		b.WriteString(t.String())
		fmt.Fprintf(&b, "\n%s\n", judged(learned, better, worse, same, "no different on"))
	}
	switch len(missing) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "\nNot simulated: %s.\n", missing[0])
	default:
		fmt.Fprintf(&b, "\nNot simulated:\n\n- %s\n", strings.Join(missing, "\n- "))
	}
	return b.String()
}

// judged says what a comparison found, plainly: "learned is better on
// a and b; worse on c; no different on d."
func judged(subject string, better, worse, same []string, sameWord string) string {
	var parts []string
	if len(better) > 0 {
		parts = append(parts, "better on "+report.AndList(better))
	}
	if len(worse) > 0 {
		parts = append(parts, "worse on "+report.AndList(worse))
	}
	if len(same) > 0 {
		parts = append(parts, sameWord+" "+report.AndList(same))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is %s.", subject, strings.Join(parts, "; "))
}

// servingText tabulates serving.parquet and the noted wall-clock figures
// of every learned run.
func (l *learnedRuns) servingText() string {
	var b strings.Builder
	b.WriteString("\n### Serving\n\nWhat serving the network's decisions did in each learned simulation (serving.parquet): the decisions it asked, " +
		"the migrations it made, how many decisions were answered together on average, the onnxruntime runs, the share of decisions the " +
		"decision cache answered and how many of those hits it got wrong against an exact evaluation (counted when schedule.learned.cache.audit " +
		"is on), and the time each decision was charged on the simulated clock.\n\n")
	t := report.NewTable("run", ">decisions", ">migrations", ">mean batch", ">onnxruntime calls", ">hit rate", ">changed by the cache", ">cost per decision")
	for _, spec := range l.specs {
		for k, s := range l.serving[spec] {
			changed := fmt.Sprintf("%d (%s of hits)", s.CacheChanged, report.Pct(float64(s.CacheChanged)/float64(s.CacheHits)))
			switch {
			case s.CacheHits == 0:
				changed = "0 (no hits)"
			case s.Evaluated < s.Decisions:
				changed = "– (not audited)" // the hits were not evaluated
			}
			t.Add(report.Escape(runName(spec, k+1)), fmt.Sprint(s.Decisions), fmt.Sprint(s.Migrations), fmt.Sprintf("%.2f", s.MeanBatch), fmt.Sprint(s.Calls),
				report.Pct(s.HitRate), changed, report.Secs(s.CostS))
		}
	}
	b.WriteString(t.String())

	b.WriteString("\n**Wall clock.** The schedule stage timed each decision as it served it and left the figures in its manifest's notes " +
		"(`serving:<run>:<figure>`). They come from this run's notes: they measure this machine while the other simulations ran beside it, " +
		"and differ from run to run, unlike every other number of this report. Uncached is one decision alone through onnxruntime; " +
		"batched is a decision of a batch (the call's time over its decisions); a cache hit includes standardising the inputs and " +
		"computing the key. Only the uncached path is measured here as its target is; the batched and cache-hit targets are benchmark " +
		"figures (a decision at batch " + strconv.Itoa(targetBatch) + ", the lookup alone), given for scale.\n\n")
	t = report.NewTable("run", "path", ">decisions", ">P50", ">P99", "the issue's target")
	var none, inference []string
	for _, spec := range l.specs {
		for k := range l.serving[spec] {
			run := runName(spec, k+1)
			w, ok := l.wall[run]
			if !ok {
				none = append(none, report.Escape(run))
				continue
			}
			for i, p := range w.paths {
				if !p.taken {
					continue
				}
				var path, target string
				switch servingPaths[i] {
				case "uncached":
					path = "uncached: one decision"
					target = fmt.Sprintf("P50 ≤ %s: %s; P99 ≤ %s: %s", report.Secs(targetUncachedP50), metText(p.p50 <= targetUncachedP50),
						report.Secs(targetUncachedP99), metText(p.p99 <= targetUncachedP99))
				case "batched":
					path = "batched: per decision"
					target = fmt.Sprintf("≤ %s at batch %d (benchmark); batches here average %.2f decisions", report.Secs(targetBatched), targetBatch, l.serving[spec][k].MeanBatch)
				case "cached":
					path = "cache hit, with standardising and the key"
					target = fmt.Sprintf("≤ %.0f ns for the lookup alone (benchmark)", targetCached*1e9)
				}
				t.Add(report.Escape(run), path, fmt.Sprint(p.n), report.Secs(p.p50), report.Secs(p.p99), target)
			}
			if !math.IsNaN(w.inference) {
				inference = append(inference, fmt.Sprintf("%s %s", report.Escape(run), report.Secs(w.inference)))
			}
		}
	}
	if t.Len() > 0 {
		b.WriteString(t.String())
	}
	if len(inference) > 0 {
		fmt.Fprintf(&b, "\nTime in onnxruntime in all: %s.\n", strings.Join(inference, ", "))
	}
	if len(none) > 0 {
		fmt.Fprintf(&b, "\nThe schedule artifact's manifest notes no wall-clock serving figures for %s.\n", report.AndList(none))
	}
	return b.String()
}

func metText(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

// studyMetric is a study's metric the report charts or tabulates.
type studyMetric struct {
	name, axis string
	value      func(schedulespec.StudyRow) float64
	higher     bool // higher is better
	format     func(float64) string
}

var (
	studyInteractive = studyMetric{"interactive SLO attainment", "interactive jobs within SLO",
		func(r schedulespec.StudyRow) float64 { return r.InteractiveSLOAttainment }, true, report.Pct}
	studySLO = studyMetric{"SLO attainment", "jobs within SLO",
		func(r schedulespec.StudyRow) float64 { return r.SLOAttainment }, true, report.Pct}
	studyMean = studyMetric{"mean end-to-end latency", "mean end-to-end latency (s)",
		func(r schedulespec.StudyRow) float64 { return r.MeanE2ES }, false, report.Secs}
	studyP99 = studyMetric{"P99 end-to-end latency", "P99 end-to-end latency (s)",
		func(r schedulespec.StudyRow) float64 { return r.P99E2ES }, false, report.Secs}
)

// condition is one predictor and error of the prediction-error study.
type condition struct {
	predictor string
	err       float64
}

func (c condition) String() string {
	switch {
	case c.predictor == schedulespec.PredictorLearned && c.err == 0:
		return "train's predictor"
	case c.predictor == schedulespec.PredictorTable && c.err == 0:
		return "exact"
	case c.predictor == schedulespec.PredictorTable:
		return "±" + strconv.FormatFloat(100*c.err, 'g', 3, 64) + "%"
	}
	return fmt.Sprintf("%s ±%g%%", c.predictor, 100*c.err)
}

// predictionError is the prediction-error study laid out: its policies in
// schedule's order, its conditions (the table's errors ascending, then
// train's predictor), and each policy's row under each.
type predictionError struct {
	policies   []string
	conditions []condition
	at         map[string]map[condition]schedulespec.StudyRow
	jobs       int64
}

func newPredictionError(rows []schedulespec.StudyRow, policies []string) *predictionError {
	s := &predictionError{at: map[string]map[condition]schedulespec.StudyRow{}}
	for _, r := range rows {
		c := condition{r.Predictor, r.PredictionError}
		if s.at[r.Policy] == nil {
			s.at[r.Policy] = map[condition]schedulespec.StudyRow{}
		}
		s.at[r.Policy][c] = r
		if !slices.Contains(s.conditions, c) {
			s.conditions = append(s.conditions, c)
		}
		s.jobs = r.Jobs
	}
	for _, p := range policies {
		if s.at[p] != nil {
			s.policies = append(s.policies, p)
		}
	}
	slices.SortStableFunc(s.conditions, func(a, b condition) int {
		// The table's errors first, ascending; other predictors after.
		ta, tb := a.predictor == schedulespec.PredictorTable, b.predictor == schedulespec.PredictorTable
		switch {
		case ta && !tb:
			return -1
		case tb && !ta:
			return 1
		case a.err < b.err:
			return -1
		case a.err > b.err:
			return 1
		}
		return strings.Compare(a.predictor, b.predictor)
	})
	return s
}

// tableErrors are the table's errors, ascending.
func (s *predictionError) tableErrors() []condition {
	var out []condition
	for _, c := range s.conditions {
		if c.predictor == schedulespec.PredictorTable {
			out = append(out, c)
		}
	}
	return out
}

// mapeText is a condition's prediction MAPE, when every policy's rows
// share it (they do when the study draws the same errors for all).
func (s *predictionError) mapeText(c condition) (string, bool) {
	v := math.NaN()
	for _, p := range s.policies {
		r, ok := s.at[p][c]
		if !ok {
			continue
		}
		if !math.IsNaN(v) && r.PredictionMAPE != v {
			return "", false
		}
		v = r.PredictionMAPE
	}
	return report.Pct(v), !math.IsNaN(v)
}

// predictionErrorText charts the prediction-error study: per metric, a
// line per policy over the table's errors with train's predictor marked,
// a table of the values and a sentence on who degrades most.
func (d *reportData) predictionErrorText() (string, []report.Chart, error) {
	rows := d.learned.study(schedulespec.StudyPredictionError)
	if len(rows) == 0 {
		return "", nil, nil
	}
	s := newPredictionError(rows, d.policies)
	var b strings.Builder
	withTrain, crosses, alt := "", "", ""
	if slices.ContainsFunc(s.conditions, func(c condition) bool { return c.predictor != schedulespec.PredictorTable }) {
		withTrain = ", and with train's predictor"
		crosses = ", and its cross is its result with train's predictor"
		alt = ", a cross for each policy's result with train's predictor"
	}
	fmt.Fprintf(&b, "\n### Sensitivity to prediction error\n\nThe prediction-error study (schedule.studies) simulated every policy that reads predictions "+
		"on the first %d eval jobs at schedule.load, predicting with the profile's mean latencies, exact and scaled per job by 1 ± e for each "+
		"error e%s. The x axis is how far the predictions were from the means (their MAPE); each policy's line runs over the errors%s.\n",
		s.jobs, withTrain, crosses)
	first := studyInteractive
	if !s.hasFinite(studyInteractive) {
		first = studySLO // no interactive jobs
	}
	var charts []report.Chart
	for _, m := range []struct {
		metric studyMetric
		name   string
	}{{first, "prediction-error-slo.svg"}, {studyMean, "prediction-error-mean-e2e.svg"}} {
		c, err := s.chart(m.metric, m.name)
		if err != nil {
			return "", nil, err
		}
		if c != nil {
			charts = append(charts, *c)
			fmt.Fprintf(&b, "\n%s\n", c.Link(fmt.Sprintf("%s against the predictions' MAPE, one line per policy%s", capitalize(m.metric.name), alt)))
		}
		fmt.Fprintf(&b, "\n%s\n%s", s.table(m.metric), s.degradeText(m.metric))
	}
	return b.String(), charts, nil
}

// lowerFirst lowers a name's first letter for use inside a sentence,
// unless it starts an acronym or a symbol ("SLO", "P99").
func lowerFirst(s string) string {
	if len(s) < 2 || !unicode.IsLower(rune(s[1])) {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// hasFinite says whether any row has a finite value of m.
func (s *predictionError) hasFinite(m studyMetric) bool {
	for _, p := range s.policies {
		for _, r := range s.at[p] {
			if v := m.value(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
				return true
			}
		}
	}
	return false
}

// chart draws one metric of the study; nil when no policy has a value.
func (s *predictionError) chart(m studyMetric, name string) (*report.Chart, error) {
	var series []chart.Series
	var marks []chart.Mark
	lo := math.Inf(1)
	for _, p := range s.policies {
		sr := chart.Series{Name: p}
		for _, c := range s.tableErrors() {
			if r, ok := s.at[p][c]; ok && !math.IsNaN(m.value(r)) {
				sr.X, sr.Y = append(sr.X, r.PredictionMAPE), append(sr.Y, m.value(r))
				lo = math.Min(lo, m.value(r))
			}
		}
		var mk []chart.Mark
		for _, c := range s.conditions {
			if c.predictor == schedulespec.PredictorTable {
				continue
			}
			if r, ok := s.at[p][c]; ok && !math.IsNaN(m.value(r)) {
				mk = append(mk, chart.Mark{Series: len(series), X: r.PredictionMAPE, Y: m.value(r)})
				lo = math.Min(lo, m.value(r))
			}
		}
		if len(sr.X) == 0 {
			continue // a line needs a point; its crosses go with it
		}
		series = append(series, sr)
		marks = append(marks, mk...)
	}
	if len(series) == 0 {
		return nil, nil
	}
	opts := chart.LineOptions{Marks: marks, MarksLabel: "train's predictor"}
	if m.higher {
		// Attainment: up to 100%, down far enough below the lowest value
		// that the differences show, at least a percentage point.
		span := math.Max(1-lo, 0.01)
		opts.YMax, opts.YMin = ptr(1), ptr(math.Max(0, math.Floor(100*(1-1.25*span))/100))
	}
	svg, err := chart.Lines(fmt.Sprintf("%s against prediction error", capitalize(m.name)), "MAPE of the predictions against the profile's means (fraction)", m.axis, series, opts)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	return &report.Chart{Name: name, SVG: svg}, nil
}

// table gives one metric of every policy under every condition, under a
// first row of the conditions' prediction MAPE (in the cells instead
// where the policies' differ).
func (s *predictionError) table(m studyMetric) string {
	head := []string{"policy"}
	mape := []string{"*prediction MAPE*"}
	shared := map[condition]bool{}
	for _, c := range s.conditions {
		head = append(head, ">"+report.Escape(c.String()))
		v, ok := s.mapeText(c)
		if !ok {
			v = "varies"
		}
		mape = append(mape, "*"+v+"*")
		shared[c] = ok
	}
	t := report.NewTable(head...)
	t.Add(mape...)
	for _, p := range s.policies {
		row := []string{report.Escape(p)}
		for _, c := range s.conditions {
			r, ok := s.at[p][c]
			switch {
			case !ok:
				row = append(row, "–")
			case shared[c]:
				row = append(row, m.format(m.value(r)))
			default:
				row = append(row, fmt.Sprintf("%s (MAPE %s)", m.format(m.value(r)), report.Pct(r.PredictionMAPE)))
			}
		}
		t.Add(row...)
	}
	return t.String()
}

// change is how much a metric moved from one value to another, signed so
// that a positive change is worse: percentage points lost for an
// attainment, the relative growth of a latency.
func (m studyMetric) change(from, to float64) float64 {
	if m.higher {
		return from - to
	}
	return to/from - 1
}

func (m studyMetric) changeText(from, to float64) string {
	if m.higher {
		return report.Signed(to-from, report.PctPts)
	}
	return fmt.Sprintf("%+.1f%%", 100*(to/from-1))
}

// degradeText says, from the rows, which policies degrade most and least
// in m from exact predictions to the largest error.
func (s *predictionError) degradeText(m studyMetric) string {
	errs := s.tableErrors()
	if len(errs) < 2 || errs[0].err != 0 {
		return ""
	}
	exact, worst := errs[0], errs[len(errs)-1]
	type moved struct {
		policy   string
		from, to float64
		by       float64 // positive: worse
	}
	var ms []moved
	for _, p := range s.policies {
		a, okA := s.at[p][exact]
		z, okZ := s.at[p][worst]
		if !okA || !okZ {
			continue
		}
		from, to := m.value(a), m.value(z)
		by := m.change(from, to)
		if math.IsNaN(by) || math.IsInf(by, 0) {
			continue
		}
		ms = append(ms, moved{p, from, to, by})
	}
	if len(ms) == 0 {
		return ""
	}
	span := fmt.Sprintf("from exact predictions to %s", report.Escape(worst.String()))
	if v, ok := s.mapeText(worst); ok {
		span += " (MAPE " + v + ")"
	}
	// Most degraded first; ties keep schedule's order.
	slices.SortStableFunc(ms, func(a, b moved) int {
		switch {
		case a.by > b.by:
			return -1
		case a.by < b.by:
			return 1
		}
		return 0
	})
	top, bottom := ms[0], ms[len(ms)-1]
	names := func(by float64) string {
		var out []string
		for _, x := range ms {
			if x.by == by {
				out = append(out, "**"+report.Escape(x.policy)+"**")
			}
		}
		return report.AndList(out)
	}
	what := func(x moved) string {
		return fmt.Sprintf("%s → %s (%s)", m.format(x.from), m.format(x.to), m.changeText(x.from, x.to))
	}
	verb := "loses the most"
	if !m.higher {
		verb = "grows the most"
	}
	switch {
	case top.by == 0 && bottom.by == 0:
		return fmt.Sprintf("No policy's %s moves %s.\n", m.name, span)
	case top.by <= 0:
		return fmt.Sprintf("No policy's %s gets worse %s; %s improves the most: %s.\n", m.name, span, names(bottom.by), what(bottom))
	case top.by == bottom.by:
		return fmt.Sprintf("%s, every policy's %s moves alike: %s.\n", capitalize(span), m.name, what(top))
	}
	subject := names(top.by) + " " + verb
	if !m.higher {
		subject = names(top.by) + "'s " + m.name + " " + verb
		return fmt.Sprintf("%s, %s: %s; at the other end, %s: %s.\n", capitalize(span), subject, what(top), names(bottom.by), what(bottom))
	}
	return fmt.Sprintf("%s, %s %s: %s; at the other end, %s: %s.\n", capitalize(span), subject, m.name, what(top), names(bottom.by), what(bottom))
}

// decisionCostText tabulates the decision-cost study and says what the
// dearest decisions do to each learned policy against the cheapest.
func (l *learnedRuns) decisionCostText() string {
	rows := l.study(schedulespec.StudyDecisionCost)
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The cost of a decision\n\nThe decision-cost study (schedule.studies) simulated each learned policy on the first %d eval jobs "+
		"at schedule.load with its decisions costing schedule.learned.cost and each of schedule.studies.decision_costs on the simulated "+
		"clock. Per decision is what a batch of one decision costs: a duration is what any batch costs, and profile charges a batch the profiled "+
		"network's latency at its size.\n\n", rows[0].Jobs)
	t := report.NewTable("policy", "cost", ">per decision", ">SLO attainment", ">interactive SLO attainment", ">mean e2e", ">P99 e2e")
	for _, r := range rows {
		t.Add(report.Escape(r.Policy), report.Escape(r.DecisionCost), report.Secs(r.DecisionCostS), report.Pct(r.SLOAttainment), report.Pct(r.InteractiveSLOAttainment), report.Secs(r.MeanE2ES), report.Secs(r.P99E2ES))
	}
	b.WriteString(t.String())
	for _, spec := range l.specs {
		var own []schedulespec.StudyRow
		for _, r := range rows {
			if r.Policy == spec {
				own = append(own, r)
			}
		}
		if text := costText(spec, own); text != "" {
			b.WriteString("\n" + text + "\n")
		}
	}
	return b.String()
}

// costText compares a learned policy's dearest decisions with its
// cheapest (the first row of each cost, in the study's order).
func costText(spec string, rows []schedulespec.StudyRow) string {
	if len(rows) < 2 {
		return ""
	}
	cheap, dear := rows[0], rows[0]
	for _, r := range rows[1:] {
		if r.DecisionCostS < cheap.DecisionCostS {
			cheap = r
		}
		if r.DecisionCostS > dear.DecisionCostS {
			dear = r
		}
	}
	if cheap.DecisionCostS == dear.DecisionCostS {
		return ""
	}
	att := studyInteractive
	if math.IsNaN(cheap.InteractiveSLOAttainment) || math.IsNaN(dear.InteractiveSLOAttainment) {
		att = studySLO
	}
	var better, worse, same, parts []string
	for _, m := range []studyMetric{att, studyMean, studyP99} {
		from, to := m.value(cheap), m.value(dear)
		parts = append(parts, fmt.Sprintf("%s %s against %s (%s)", m.name, m.format(to), m.format(from), m.changeText(from, to)))
		switch by := m.change(from, to); {
		case by > 0:
			worse = append(worse, m.name)
		case by < 0:
			better = append(better, m.name)
		case by == 0:
			same = append(same, m.name)
		}
	}
	return fmt.Sprintf("**%s at %s a decision** (%s, the dearest) against %s (%s, the cheapest): %s. With the dearest decisions, %s",
		report.Escape(spec), report.Secs(dear.DecisionCostS), report.Escape(dear.DecisionCost), report.Secs(cheap.DecisionCostS), report.Escape(cheap.DecisionCost), strings.Join(parts, ", "),
		judged(report.Escape(spec), better, worse, same, "unchanged in"))
}
