package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/learned"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// predictorSection shows the train stage's service-time predictor: its
// candidates scored on each split, the kept one held to its targets, its
// predictions against the measurements and its feature importances; left
// out without the train artifact.
type predictorSection struct {
	train *trainArtifact
	// inUse is the kept predictor's error in use (inUseOf), nil without
	// the studies' figure.
	inUse *inUse
}

// inUse is the predictor's error over the configurations the eval
// workload asks, each as often as its jobs ask it: studies.parquet's
// prediction MAPE of the learned predictor with no error added, over the
// first jobs of the first replication on every device each fits,
// against the profile's means (the service model's, interpolated between
// the measured batch sizes).
type inUse struct {
	mape float64
	jobs int64
	// reps is how many replications the MAPE is the mean over.
	reps int
}

var _ section.Section = (*predictorSection)(nil)

func (*predictorSection) Name() string { return "predictor" }

// Read reads the train artifact, which the placement network's section
// shows too, and the studies' figure of the predictor in use.
func (s *predictorSection) Read(ev *section.Evaluation) error {
	if err := s.train.load(ev.Train); err != nil {
		return err
	}
	rows, err := learned.ReadStudies(ev.Schedule, ev.Policies)
	if err != nil {
		return err
	}
	s.inUse = inUseOf(rows)
	return nil
}

// inUseOf finds the learned predictor's exact rows of the
// prediction-error study, one policy's, and gives their MAPE's mean over
// the replications (every policy's rows of one replication share it);
// nil where the study did not run it.
func inUseOf(rows []schedulespec.StudyRow) *inUse {
	exact := func(r schedulespec.StudyRow) bool {
		return r.Study == schedulespec.StudyPredictionError && r.Predictor == schedulespec.PredictorLearned && r.PredictionError == 0
	}
	first := slices.IndexFunc(rows, exact)
	if first < 0 {
		return nil
	}
	use := &inUse{jobs: rows[first].Jobs}
	for _, r := range rows {
		if exact(r) && r.Policy == rows[first].Policy {
			use.mape += r.PredictionMAPE
			use.reps++
		}
	}
	use.mape /= float64(use.reps)
	return use
}

// Rows are the kept predictor's scores on each split, the selection's
// nested score and its error in use.
func (s *predictorSection) Rows(*section.Evaluation) []MetricRow {
	rows := predictorRows(s.train.trained)
	if t := s.train.trained; t != nil {
		if v := t.score(trainspec.SplitNested, predictor.KindAuto, trainspec.MetricMAPE); !math.IsNaN(v) {
			rows = append(rows, MetricRow{Scope: section.ScopePredictor, Metric: trainspec.SplitNested + "_" + trainspec.MetricMAPE, Value: v})
		}
		if s.inUse != nil {
			rows = append(rows, MetricRow{Scope: section.ScopePredictor, Metric: "in_use_mape", Value: s.inUse.mape})
		}
	}
	return rows
}

// Render tabulates and charts the predictor.
func (s *predictorSection) Render(*section.Evaluation) (report.Section, error) {
	return renderPredictor(s.train.trained, s.inUse)
}

// predictorRows are the predictor's headline numbers for metrics.parquet:
// the kept candidate's scores on each split (metric split_score, e.g.
// grouped_kfold_mape).
func predictorRows(t *trained) []MetricRow {
	if t == nil {
		return nil
	}
	var rows []MetricRow
	for _, s := range t.splits() {
		for _, m := range []string{trainspec.MetricN, trainspec.MetricCoverage, trainspec.MetricR2, trainspec.MetricR2Log,
			trainspec.MetricMAE, trainspec.MetricMAPE, trainspec.MetricWithin10} {
			if v, ok := t.value(trainspec.ModelPredictor, trainspec.SectionScore, s, t.kind, m); ok {
				rows = append(rows, MetricRow{Scope: section.ScopePredictor, Metric: s + "_" + m, Value: v})
			}
		}
	}
	return rows
}

// splitNames say what the predictor's splits hold out.
var splitNames = map[string]string{
	trainspec.SplitKFold:  "grouped k-fold",
	trainspec.SplitBatch:  "leave one batch size out",
	trainspec.SplitModel:  "leave one model out",
	trainspec.SplitNested: "nested grouped k-fold",
}

func splitName(s string) string { return cmp.Or(splitNames[s], s) }

// predictorTarget is a score the kept predictor is held to: at least or at
// most bound on a split.
type predictorTarget struct {
	name          string
	split, metric string
	atLeast       bool
	bound         float64
	format        func(float64) string
}

// predictorTargets are the accuracy the predictor is meant to reach: close
// enough to the measurements, on configurations it never saw, that the
// simulator could draw service times from it rather than from the table.
var predictorTargets = []predictorTarget{
	{"grouped k-fold R²", trainspec.SplitKFold, trainspec.MetricR2, true, 0.97, report.Num},
	{"grouped k-fold MAPE", trainspec.SplitKFold, trainspec.MetricMAPE, false, 0.10, report.Pct},
	{"grouped k-fold share within ±10%", trainspec.SplitKFold, trainspec.MetricWithin10, true, 0.90, report.Pct},
	{"leave-one-batch-size-out MAPE", trainspec.SplitBatch, trainspec.MetricMAPE, false, 0.15, report.Pct},
}

// targetsText states the kept candidate's scores against every target,
// met or missed.
func targetsText(t *trained) string {
	var parts []string
	var met, missed, absent int
	for _, g := range predictorTargets {
		v := t.score(g.split, t.kind, g.metric)
		op := "≤"
		if g.atLeast {
			op = "≥"
		}
		want := fmt.Sprintf("target %s %s", op, g.format(g.bound))
		switch {
		case math.IsNaN(v):
			absent++
			parts = append(parts, fmt.Sprintf("%s not measured (%s)", g.name, want))
		case g.atLeast && v >= g.bound || !g.atLeast && v <= g.bound:
			met++
			parts = append(parts, fmt.Sprintf("%s %s (%s): met", g.name, g.format(v), want))
		default:
			missed++
			parts = append(parts, fmt.Sprintf("%s %s (%s): **missed**", g.name, g.format(v), want))
		}
	}
	var verdict string
	switch {
	case met == len(predictorTargets):
		verdict = fmt.Sprintf("It meets all %d targets.", met)
	case missed == len(predictorTargets):
		verdict = fmt.Sprintf("It misses all %d targets.", missed)
	case absent == 0:
		verdict = fmt.Sprintf("It meets %d of the %d targets and misses %d.", met, len(predictorTargets), missed)
	default:
		verdict = fmt.Sprintf("It meets %d of the %d targets, misses %d, and %d could not be measured.", met, len(predictorTargets), missed, absent)
	}
	return fmt.Sprintf("**Targets.** The kept candidate, %s: %s. %s\n", report.Escape(t.kind), strings.Join(parts, "; "), verdict)
}

// honestText sets the kept candidate's grouped k-fold score beside two
// that nothing chose on: nested cross-validation of the selection, and
// the error over the configurations the eval workload asks.
func honestText(t *trained, use *inUse) string {
	var parts []string
	kfold := t.score(trainspec.SplitKFold, t.kind, trainspec.MetricMAPE)
	if v := t.score(trainspec.SplitNested, predictor.KindAuto, trainspec.MetricMAPE); !math.IsNaN(v) {
		var chose []string
		for _, c := range t.candidates() {
			if n := t.score(trainspec.SplitNested, c, trainspec.MetricChosen); n > 0 {
				chose = append(chose, fmt.Sprintf("%s in %.0f", report.Escape(c), n))
			}
		}
		parts = append(parts, fmt.Sprintf("Nested cross-validation, which chooses a candidate inside each outer fold's training configurations "+
			"alone and scores that choice on the fold (Varma and Simon, BMC Bioinformatics 7:91, 2006), gives the selection a MAPE of %s "+
			"(the outer folds chose %s)", report.Pct(v), strings.Join(chose, ", ")))
	}
	switch {
	case use != nil && t.kind == predictor.KindTable:
		// The table is the profile's means: in use it cannot miss them,
		// and its k-fold score is the only one that says how it predicts
		// a configuration it was not given.
		parts = append(parts, fmt.Sprintf("in use, over the first %d eval jobs, the predictions are %s from the profile's means: "+
			"the kept table is those means (interpolated between measured batch sizes), so it is exact on every configuration the profile measured, "+
			"and its error on one it did not is the k-fold figure", use.jobs, report.Pct(use.mape)))
	case use != nil:
		parts = append(parts, fmt.Sprintf("in use, over the first %d eval jobs on every device each fits, so that each configuration counts "+
			"as often as the workload asks it, the predictions are %s from the profile's means (interpolated between measured batch sizes; "+
			"%s, the prediction-error study's exact rows, %s)", use.jobs, report.Pct(use.mape), schedulespec.StudiesFile, repsMean(use.reps)))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\n**Scores nothing chose on.** The kept candidate's grouped k-fold MAPE, %s, is also the figure that chose it, which flatters it. %s.\n",
		report.Pct(kfold), report.Capitalize(strings.Join(parts, "; ")))
}

// renderPredictor is the Predictor section; untitled without the train
// artifact.
func renderPredictor(t *trained, use *inUse) (report.Section, error) {
	if t == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	fmt.Fprintf(&md, "The train stage's service-time predictor: every candidate is trained on some of the profile's configurations "+
		"(device, model, precision, batch, threads) and scored on the others, on three splits: grouped k-fold deals the configurations "+
		"into folds at random, leave one batch size out holds out every configuration of one batch size in turn, leave one model out "+
		"every configuration of one model. The scores pool each split's folds; nested grouped k-fold scores the selection itself (candidate auto, below). Train kept **%s** (%s).\n\n", report.Escape(t.kind), trainspec.PredictorFile)
	md.WriteString(targetsText(t))
	md.WriteString(honestText(t, use))

	tb := report.NewTable("split", "candidate", ">configs", ">coverage", ">R²", ">R² (ln)", ">MAPE", ">within ±10%", ">MAE", ">MAPE where the table predicts")
	for _, s := range t.splits() {
		for _, c := range t.candidates() {
			if _, ok := t.value(trainspec.ModelPredictor, trainspec.SectionScore, s, c, trainspec.MetricN); !ok {
				continue
			}
			name := report.Escape(c)
			if c == t.kind {
				name = "**" + name + "** (kept)"
			}
			sc := func(metric string) float64 { return t.score(s, c, metric) }
			tb.Add(report.Escape(splitName(s)), name, count(sc(trainspec.MetricN)), report.Pct(sc(trainspec.MetricCoverage)), report.Num(sc(trainspec.MetricR2)),
				report.Num(sc(trainspec.MetricR2Log)), report.Pct(sc(trainspec.MetricMAPE)), report.Pct(sc(trainspec.MetricWithin10)), report.Secs(sc(trainspec.MetricMAE)),
				report.Pct(sc(trainspec.MetricMAPEWhereTable)))
		}
	}
	md.WriteString("\n" + tb.String())
	md.WriteString("\nConfigs is the number of held-out configurations, coverage the share the candidate predicts (the table has no curve " +
		"of a configuration it never measured); every other score is over those it predicts. R² is on seconds, R² (ln) on the log of " +
		"the latencies, which weighs a microsecond model like a second-long one. The last column restricts MAPE to the configurations " +
		"the table predicts too, where each candidate meets the table on its own ground.\n")
	md.WriteString(opCostText(t))

	var charts []report.Chart
	series, missing := predictedSeries(t.cv, t.kind)
	if len(series) > 0 {
		svg, err := chart.Scatter(fmt.Sprintf("%s, grouped k-fold: predicted against measured latency", t.kind), "measured latency (s)", "predicted latency (s)",
			series, chart.ScatterOptions{LogX: true, LogY: true, Diagonal: true, DiagonalLabel: "predicted = measured"})
		if err != nil {
			return report.Section{}, fmt.Errorf("chart predictor-scatter: %w", err)
		}
		c := report.Chart{Name: "predictor-scatter.svg", SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&md, "\n%s\n\nEach point is a configuration held out of grouped k-fold, at its measured median latency and %s's prediction from the other folds; "+
			"on the dashed line the prediction is exact.", c.Link("Predicted against measured latency of the kept candidate on grouped k-fold, log-log, one colour per model"), report.Escape(t.kind))
		switch {
		case missing == 1:
			md.WriteString(" 1 held-out configuration has no prediction and is not drawn.")
		case missing > 1:
			fmt.Fprintf(&md, " %d held-out configurations have no prediction and are not drawn.", missing)
		}
		md.WriteString("\n")
	} else {
		fmt.Fprintf(&md, "\n%s has no prediction for any configuration held out of grouped k-fold in %s, so there is nothing to draw.\n", report.Escape(t.kind), trainspec.CVFile)
	}
	md.WriteString(importanceText(t))
	return report.Section{Title: "Predictor", Markdown: md.String(), Charts: charts}, nil
}

// opCostText says what the per-operator cost model's row is and sets it
// beside the kept candidate on the same held-out configurations; empty
// where train fitted none (profile.operators off).
func opCostText(t *trained) string {
	type key struct {
		device, model, precision string
		batch, threads           int32
	}
	ops := map[key]bool{}
	for _, r := range t.cv {
		if r.Split == trainspec.SplitModel && r.Candidate == trainspec.CandidateOpCost {
			ops[key{r.Device, r.Model, r.Precision, r.Batch, r.Threads}] = true
		}
	}
	mape := t.score(trainspec.SplitModel, trainspec.CandidateOpCost, trainspec.MetricMAPE)
	if len(ops) == 0 || math.IsNaN(mape) {
		return ""
	}
	var kept, n float64
	for _, r := range t.cv {
		if r.Split == trainspec.SplitModel && r.Candidate == t.kind && r.HasPrediction && ops[key{r.Device, r.Model, r.Precision, r.Batch, r.Threads}] {
			kept += math.Abs(r.PredictedS-r.MeasuredS) / r.MeasuredS
			n++
		}
	}
	same := ""
	if n > 0 {
		same = fmt.Sprintf("; on the %.0f of them it predicts, %s's leave-one-model-out MAPE is %s", n, report.Escape(t.kind), report.Pct(kept/n))
	}
	return fmt.Sprintf("\n**Per-operator model.** %s is the per-operator cost model (%s; the kernel-level approach of nn-Meter, Zhang et al., MobiSys 2021), "+
		"fitted where the profile timed each node (profile.operators): it predicts a model from its graph's nodes alone, and mlsched predict shows it "+
		"beside %s for a model never profiled. It is scored leave one model out only, over the %d configurations timed node by node: MAPE %s, %s within ±10%%%s.\n",
		trainspec.CandidateOpCost, trainspec.OpCostFile, report.Escape(t.kind), len(ops),
		report.Pct(mape), report.Pct(t.score(trainspec.SplitModel, trainspec.CandidateOpCost, trainspec.MetricWithin10)), same)
}

// predictedSeries are the kept candidate's predictions on grouped k-fold,
// one series per model (sorted, so that a model keeps its colour from run
// to run), and how many held-out configurations it has no prediction for.
func predictedSeries(cv []trainspec.CVRow, kind string) ([]chart.Series, int) {
	by := map[string]*chart.Series{}
	missing := 0
	for _, r := range cv {
		if r.Split != trainspec.SplitKFold || r.Candidate != kind {
			continue
		}
		if !r.HasPrediction {
			missing++
			continue
		}
		s := by[r.Model]
		if s == nil {
			s = &chart.Series{Name: r.Model}
			by[r.Model] = s
		}
		s.X, s.Y = append(s.X, r.MeasuredS), append(s.Y, r.PredictedS)
	}
	var out []chart.Series
	for _, m := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[m])
	}
	return out, missing
}

// importanceText tabulates the kept candidate's permutation importances,
// the largest first.
func importanceText(t *trained) string {
	type imp struct {
		level, input string
		v            float64
	}
	var imps []imp
	for _, r := range t.rows {
		if r.Model != trainspec.ModelPredictor || r.Section != trainspec.SectionImportance || r.Candidate != t.kind {
			continue
		}
		level, input, ok := strings.Cut(r.Feature, ":")
		if !ok {
			level, input = "", r.Feature
		}
		imps = append(imps, imp{level, input, r.Value})
	}
	if len(imps) == 0 {
		return fmt.Sprintf("\n%s records no feature importances for %s.\n", trainspec.MetricsFile, report.Escape(t.kind))
	}
	slices.SortStableFunc(imps, func(a, b imp) int { return cmp.Compare(b.v, a.v) })
	tb := report.NewTable("input", "level", ">log error increase")
	for _, m := range imps {
		tb.Add(report.Escape(m.input), report.Escape(m.level), report.Num(m.v))
	}
	return fmt.Sprintf("\n### What %s leans on\n\nPermutation importances on the grouped k-fold folds: how much the mean absolute error of ln latency "+
		"grows when one input is shuffled among a fold's held-out configurations. A query input (model, precision, batch, threads, device) "+
		"moves every feature derived from it; a feature is one column of the feature vector. Zero or below: %s does not lean on it.\n\n%s",
		report.Escape(t.kind), report.Escape(t.kind), tb.String())
}

// repsMean says what a figure of the studies is over.
func repsMean(reps int) string {
	if reps == 1 {
		return "one replication"
	}
	return fmt.Sprintf("the mean over %d replications", reps)
}
