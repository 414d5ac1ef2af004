package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// trained is what the report shows of the train artifact: the predictor
// candidate it kept, the scores of both models (metrics.parquet, in long
// form) and the predictor's held-out configurations (cv.parquet).
type trained struct {
	// kind is the kept candidate, as predictor.json names it.
	kind string
	rows []trainspec.MetricRow
	at   map[trainKey]float64
	cv   []predictor.CVRow
	// features name the placement network's inputs by index, as
	// decisions.parquet's footer lists them; nil when it lists none.
	features []string
}

// trainKey names one number of train's metrics.parquet: every field of a
// row but its value.
type trainKey struct {
	model, section, split, candidate, feature, metric string
	index                                             int32
}

func keyOf(r trainspec.MetricRow) trainKey {
	return trainKey{r.Model, r.Section, r.Split, r.Candidate, r.Feature, r.Metric, r.Index}
}

// readTrained reads the train artifact in dir; nil without one (no
// directory), when the report leaves its sections out. Every error names
// the file at fault.
func readTrained(dir string) (*trained, error) {
	if dir == "" {
		return nil, nil
	}
	t := &trained{at: map[trainKey]float64{}}
	path := filepath.Join(dir, trainspec.PredictorFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read train predictor: %w", err)
	}
	m, err := predictor.Load(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	t.kind = m.Kind()

	path = filepath.Join(dir, trainspec.MetricsFile)
	if t.rows, err = parquetio.ReadAll[trainspec.MetricRow](path); err != nil {
		return nil, fmt.Errorf("read train metrics: %w", err)
	}
	if err := t.index(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !slices.Contains(t.candidates(), t.kind) {
		return nil, fmt.Errorf("read %s: no predictor scores of %s, the candidate %s keeps (scored: %s)",
			path, t.kind, trainspec.PredictorFile, strings.Join(t.candidates(), ", "))
	}

	path = filepath.Join(dir, trainspec.CVFile)
	if t.cv, err = parquetio.ReadAll[predictor.CVRow](path); err != nil {
		return nil, fmt.Errorf("read train held-out predictions: %w", err)
	}
	for i, r := range t.cv {
		bad := ""
		switch {
		case !(r.MeasuredS > 0) || math.IsInf(r.MeasuredS, 1):
			bad = fmt.Sprintf("measured_s = %g", r.MeasuredS)
		case r.HasPrediction && (!(r.PredictedS > 0) || math.IsInf(r.PredictedS, 1)):
			bad = fmt.Sprintf("predicted_s = %g", r.PredictedS)
		}
		if bad != "" {
			return nil, fmt.Errorf("read %s: row %d (%s fold %d, %s, %s %s batch %d): %s, want a positive, finite latency",
				path, i+1, r.Split, r.Fold, r.Candidate, r.Model, r.Precision, r.Batch, bad)
		}
	}

	// The decision points' file is read for its footer only: the names of
	// the network's inputs, which the best single-feature rule refers to
	// by index.
	path = filepath.Join(dir, trainspec.DecisionsFile)
	if t.features, err = footerList(path, "features"); err != nil {
		return nil, fmt.Errorf("read train decisions: %w", err)
	}
	return t, nil
}

// footerList returns the comma-separated list under key in the footer of
// the Parquet file at path; nil when the footer has no such key. Its
// errors name the file.
func footerList(path, key string) (list []string, err error) {
	defer func() {
		// parquet-go panics on some malformed files.
		if r := recover(); r != nil {
			list, err = nil, fmt.Errorf("%s: not a readable Parquet file: %v", path, r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, ok := pf.Lookup(key)
	if !ok || v == "" {
		return nil, nil
	}
	return strings.Split(v, ","), nil
}

// index checks the rows and indexes their values: each number once, the
// predictor's and the placement scores present, a curve's epochs and a
// ROC curve's points each complete.
func (t *trained) index() error {
	first := map[trainKey]int{}
	for i, r := range t.rows {
		k := keyOf(r)
		if j, ok := first[k]; ok {
			return fmt.Errorf("rows %d and %d hold the same number (model %q, section %q, split %q, candidate %q, feature %q, metric %q, index %d)",
				j+1, i+1, r.Model, r.Section, r.Split, r.Candidate, r.Feature, r.Metric, r.Index)
		}
		first[k] = i
		t.at[k] = r.Value
	}
	if len(t.splits()) == 0 {
		return fmt.Errorf("no %s %s rows", trainspec.ModelPredictor, trainspec.SectionScore)
	}
	if len(t.scorers()) == 0 {
		return fmt.Errorf("no %s %s rows", trainspec.ModelPlacement, trainspec.SectionScore)
	}
	pairs := []struct{ section, a, b string }{
		{trainspec.SectionCurve, "train_loss", "val_loss"},
		{trainspec.SectionROC, "fpr", "tpr"},
	}
	for _, r := range t.rows {
		for _, p := range pairs {
			if r.Model != trainspec.ModelPlacement || r.Section != p.section || r.Metric != p.a && r.Metric != p.b {
				continue
			}
			other := p.a
			if r.Metric == p.a {
				other = p.b
			}
			k := keyOf(r)
			k.metric = other
			if _, ok := t.at[k]; !ok {
				return fmt.Errorf("%s %s %s index %d has %s but no %s", r.Model, r.Section, r.Candidate, r.Index, r.Metric, other)
			}
		}
	}
	if len(t.epochs()) == 0 {
		return fmt.Errorf("no %s %s rows (the network's training curve)", trainspec.ModelPlacement, trainspec.SectionCurve)
	}
	return nil
}

// value returns a number of metrics.parquet and whether it is there.
func (t *trained) value(model, section, split, candidate, metric string) (float64, bool) {
	v, ok := t.at[trainKey{model: model, section: section, split: split, candidate: candidate, metric: metric}]
	return v, ok
}

// score returns a predictor score, NaN when there is none.
func (t *trained) score(split, candidate, metric string) float64 {
	if v, ok := t.value(trainspec.ModelPredictor, trainspec.SectionScore, split, candidate, metric); ok {
		return v
	}
	return math.NaN()
}

// placementScore returns a placement scorer's score, NaN when there is
// none.
func (t *trained) placementScore(scorer, metric string) float64 {
	if v, ok := t.value(trainspec.ModelPlacement, trainspec.SectionScore, trainspec.SplitTest, scorer, metric); ok {
		return v
	}
	return math.NaN()
}

// distinct returns field's values over the rows that keep says, in the
// order they first appear: train writes them in its own order, which the
// report keeps.
func (t *trained) distinct(keep func(trainspec.MetricRow) bool, field func(trainspec.MetricRow) string) []string {
	var out []string
	for _, r := range t.rows {
		if keep(r) && !slices.Contains(out, field(r)) {
			out = append(out, field(r))
		}
	}
	return out
}

func isPredictorScore(r trainspec.MetricRow) bool {
	return r.Model == trainspec.ModelPredictor && r.Section == trainspec.SectionScore
}

// splits are the predictor's splits.
func (t *trained) splits() []string {
	return t.distinct(isPredictorScore, func(r trainspec.MetricRow) string { return r.Split })
}

// candidates are the predictor's candidates.
func (t *trained) candidates() []string {
	return t.distinct(isPredictorScore, func(r trainspec.MetricRow) string { return r.Candidate })
}

// scorers are the placement scorers: the network and the rules beside it.
func (t *trained) scorers() []string {
	return t.distinct(func(r trainspec.MetricRow) bool {
		return r.Model == trainspec.ModelPlacement && r.Section == trainspec.SectionScore
	}, func(r trainspec.MetricRow) string { return r.Candidate })
}

// epoch is one epoch of the network's training curve.
type epoch struct {
	n                        int32
	trainLoss, valLoss, best float64
	valAccuracy              float64
}

// epochs are the training curve's epochs in order.
func (t *trained) epochs() []epoch {
	var out []epoch
	for _, r := range t.rows {
		if r.Model != trainspec.ModelPlacement || r.Section != trainspec.SectionCurve || r.Metric != "train_loss" {
			continue
		}
		at := func(metric string) float64 {
			v, ok := t.at[trainKey{model: r.Model, section: r.Section, split: r.Split, candidate: r.Candidate, metric: metric, index: r.Index}]
			if !ok {
				return math.NaN()
			}
			return v
		}
		out = append(out, epoch{n: r.Index, trainLoss: r.Value, valLoss: at("val_loss"), valAccuracy: at("val_accuracy"), best: at("best")})
	}
	slices.SortStableFunc(out, func(a, b epoch) int { return cmp.Compare(a.n, b.n) })
	return out
}

// roc returns a scorer's ROC curve, its points in order.
func (t *trained) roc(scorer string) (fpr, tpr []float64) {
	type point struct {
		i        int32
		fpr, tpr float64
	}
	var pts []point
	for _, r := range t.rows {
		if r.Model == trainspec.ModelPlacement && r.Section == trainspec.SectionROC && r.Candidate == scorer && r.Metric == "fpr" {
			k := keyOf(r)
			k.metric = "tpr"
			pts = append(pts, point{r.Index, r.Value, t.at[k]})
		}
	}
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.i, b.i) })
	for _, p := range pts {
		fpr, tpr = append(fpr, p.fpr), append(tpr, p.tpr)
	}
	return fpr, tpr
}

// splitNames say what the predictor's splits hold out.
var splitNames = map[string]string{
	predictor.SplitKFold: "grouped k-fold",
	predictor.SplitBatch: "leave one batch size out",
	predictor.SplitModel: "leave one model out",
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
	{"grouped k-fold R²", predictor.SplitKFold, predictor.MetricR2, true, 0.97, report.Num},
	{"grouped k-fold MAPE", predictor.SplitKFold, predictor.MetricMAPE, false, 0.10, report.Pct},
	{"grouped k-fold share within ±10%", predictor.SplitKFold, predictor.MetricWithin10, true, 0.90, report.Pct},
	{"leave-one-batch-size-out MAPE", predictor.SplitBatch, predictor.MetricMAPE, false, 0.15, report.Pct},
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

func predictorSection(d *reportData) (report.Section, error) {
	t := d.train
	if t == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	fmt.Fprintf(&md, "The train stage's service-time predictor: every candidate is trained on some of the profile's configurations "+
		"(device, model, precision, batch, threads) and scored on the others, on three splits: grouped k-fold deals the configurations "+
		"into folds at random, leave one batch size out holds out every configuration of one batch size in turn, leave one model out "+
		"every configuration of one model. The scores pool each split's folds. Train kept **%s** (%s).\n\n", report.Escape(t.kind), trainspec.PredictorFile)
	md.WriteString(targetsText(t))

	tb := report.NewTable("split", "candidate", ">configs", ">coverage", ">R²", ">R² (ln)", ">MAPE", ">within ±10%", ">MAE", ">MAPE where the table predicts")
	for _, s := range t.splits() {
		for _, c := range t.candidates() {
			if _, ok := t.value(trainspec.ModelPredictor, trainspec.SectionScore, s, c, predictor.MetricN); !ok {
				continue
			}
			name := report.Escape(c)
			if c == t.kind {
				name = "**" + name + "** (kept)"
			}
			sc := func(metric string) float64 { return t.score(s, c, metric) }
			tb.Add(report.Escape(splitName(s)), name, count(sc(predictor.MetricN)), report.Pct(sc(predictor.MetricCoverage)), report.Num(sc(predictor.MetricR2)),
				report.Num(sc(predictor.MetricR2Log)), report.Pct(sc(predictor.MetricMAPE)), report.Pct(sc(predictor.MetricWithin10)), report.Secs(sc(predictor.MetricMAE)),
				report.Pct(sc(predictor.MetricMAPEWhereTable)))
		}
	}
	md.WriteString("\n" + tb.String())
	md.WriteString("\nConfigs is the number of held-out configurations, coverage the share the candidate predicts (the table has no curve " +
		"of a configuration it never measured); every other score is over those it predicts. R² is on seconds, R² (ln) on the log of " +
		"the latencies, which weighs a microsecond model like a second-long one. The last column restricts MAPE to the configurations " +
		"the table predicts too, where each candidate meets the table on its own ground.\n")

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

// predictedSeries are the kept candidate's predictions on grouped k-fold,
// one series per model (sorted, so that a model keeps its colour from run
// to run), and how many held-out configurations it has no prediction for.
func predictedSeries(cv []predictor.CVRow, kind string) ([]chart.Series, int) {
	by := map[string]*chart.Series{}
	missing := 0
	for _, r := range cv {
		if r.Split != predictor.SplitKFold || r.Candidate != kind {
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

// scorerNames say what the placement scorers are.
var scorerNames = map[string]string{
	trainspec.ScorerNetwork:     "network",
	trainspec.ScorerThreshold:   "threshold rule",
	trainspec.ScorerBestFeature: "best single feature",
}

func scorerName(s string) string { return cmp.Or(scorerNames[s], s) }

// scorerRules say what a rule that metrics.parquet does not describe
// does.
var scorerRules = map[string]string{
	trainspec.ScorerThreshold: "migrate when the predicted gain exceeds schedule.migration.min_gain",
}

// ruleRow matches the best single-feature rule's description, as
// placement.Rule.String writes it: "x[3] < 0.05".
var ruleRow = regexp.MustCompile(`^x\[(\d+)\] ([<>]) `)

// rules returns each scorer's rule, in words and as Markdown, from the rows whose metric
// describes it ("rule: x[3] < 5e-05", the value its threshold); the
// feature is named from decisions.parquet's footer where it lists it.
func (t *trained) rules() map[string]string {
	out := map[string]string{}
	for _, r := range t.rows {
		text, ok := strings.CutPrefix(r.Metric, "rule: ")
		if r.Model != trainspec.ModelPlacement || r.Section != trainspec.SectionScore || !ok {
			continue
		}
		if m := ruleRow.FindStringSubmatch(text); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(t.features) {
				// The comparison stays as written: "<" before a space
				// starts no tag.
				out[r.Candidate] = fmt.Sprintf("migrate when %s %s %s", report.Escape(t.features[i]), m[2], report.Num(r.Value))
				continue
			}
		}
		out[r.Candidate] = report.Escape(text)
	}
	return out
}

// count formats a count, which metrics.parquet holds as a float.
func count(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func placementSection(d *reportData) (report.Section, error) {
	t := d.train
	if t == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	add := func(name, alt string, svg []byte, err error) error {
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&md, "\n%s\n", c.Link(alt))
		return nil
	}
	scorers := t.scorers()
	rules := t.rules()
	md.WriteString("The placement network (ten inputs, two hidden layers of 64, a sigmoid output) says whether to move a waiting job to another device. " +
		"It learns from decision points of simulations of the train workload, each labelled by playing it both ways in forked simulations: " +
		"migrate when moving did better than staying. It is scored on held-out test points beside rules that need no network")
	var others []string
	for _, s := range scorers {
		if s == trainspec.ScorerNetwork {
			continue
		}
		o := report.Escape(scorerName(s))
		switch r, ok := rules[s]; {
		case ok:
			o += " (" + r + ", fitted to the training points)"
		case scorerRules[s] != "":
			o += " (" + scorerRules[s] + ")"
		}
		others = append(others, o)
	}
	switch n := len(others); {
	case n == 1:
		md.WriteString(": the " + others[0])
	case n > 1:
		md.WriteString(": the " + strings.Join(others[:n-1], ", the ") + " and the " + others[n-1])
	}
	md.WriteString(".\n\n")
	md.WriteString(labelsText(t))

	// The training curve.
	eps := t.epochs()
	var train, val chart.Series
	train.Name, val.Name = "training loss", "validation loss"
	best := -1
	for i, e := range eps {
		train.X, train.Y = append(train.X, float64(e.n)), append(train.Y, e.trainLoss)
		val.X, val.Y = append(val.X, float64(e.n)), append(val.Y, e.valLoss)
		if e.best == 1 && best < 0 {
			best = i
		}
	}
	fmt.Fprintf(&md, "\n### Training\n\nTraining ran %d epochs", len(eps))
	opts := chart.LineOptions{YMin: ptr(0), NoMarkers: true}
	if best >= 0 {
		b := eps[best]
		opts.VLine, opts.VLineLabel = ptr(float64(b.n)), fmt.Sprintf("best epoch (%d)", b.n)
		fmt.Fprintf(&md, "; the lowest validation loss, %s at epoch %d, gives the weights the network keeps (validation accuracy there %s)",
			report.Num(b.valLoss), b.n, report.Pct(b.valAccuracy))
	}
	md.WriteString(".\n")
	svg, err := chart.Lines("Placement network: loss per epoch", "epoch", "cross-entropy loss", []chart.Series{train, val}, opts)
	if err := add("placement-training.svg", "Training and validation loss of the placement network per epoch, the best epoch marked", svg, err); err != nil {
		return report.Section{}, err
	}

	// The scores.
	n, pos := t.placementScore(scorers[0], "n"), t.placementScore(scorers[0], "positives")
	fmt.Fprintf(&md, "\n### Scores on the test points\n\nThe %s test points include %s labelled migrate (%s): a scorer that never migrates is right on %s of them.\n\n",
		count(n), count(pos), report.Pct(pos/n), report.Pct(1-pos/n))
	tb := report.NewTable("scorer", ">accuracy", ">AUC", ">log loss", ">ECE", ">TP", ">FP", ">FN", ">TN")
	for _, s := range scorers {
		sc := func(metric string) float64 { return t.placementScore(s, metric) }
		tb.Add(report.Escape(scorerName(s)), report.Pct(sc("accuracy")), report.Num(sc("auc")), report.Num(sc("log_loss")), report.Num(sc("ece")),
			count(sc("tp")), count(sc("fp")), count(sc("fn")), count(sc("tn")))
	}
	md.WriteString(tb.String())
	md.WriteString("\nThe last four columns are each scorer's confusion matrix: TP migrated where moving did better, FP migrated where staying did, " +
		"FN stayed where moving did better, TN stayed where staying did. AUC is the chance that a point labelled migrate scores above one " +
		"labelled stay (0.5: no better than chance); log loss and ECE (the expected calibration error) judge the probability of migrate " +
		"each scorer gives.\n")
	var roc []chart.Series
	for _, s := range scorers {
		fpr, tpr := t.roc(s)
		if len(fpr) > 0 {
			roc = append(roc, chart.Series{Name: fmt.Sprintf("%s (AUC %s)", scorerName(s), report.Num(t.placementScore(s, "auc"))), X: fpr, Y: tpr})
		}
	}
	if len(roc) > 0 {
		svg, err := chart.Lines("ROC on the test points", "false positive rate (stay points migrated)", "true positive rate (migrate points migrated)", roc,
			chart.LineOptions{YMin: ptr(0), YMax: ptr(1), Diagonal: true, DiagonalLabel: "chance", NoMarkers: true})
		if err := add("placement-roc.svg", "ROC curves of the network and the rules on the test points", svg, err); err != nil {
			return report.Section{}, err
		}
	}
	return report.Section{Title: "Placement network", Markdown: md.String(), Charts: charts}, nil
}

// labelsText describes the labelled decision points: each split's points
// and share labelled migrate, and the labeller's own counts.
func labelsText(t *trained) string {
	isCount := func(r trainspec.MetricRow) bool {
		return r.Model == trainspec.ModelLabels && r.Section == trainspec.SectionCounts
	}
	at := func(split, metric string) float64 {
		if v, ok := t.value(trainspec.ModelLabels, trainspec.SectionCounts, split, "", metric); ok {
			return v
		}
		return math.NaN()
	}
	var b strings.Builder
	splits := t.distinct(func(r trainspec.MetricRow) bool { return isCount(r) && r.Split != "" }, func(r trainspec.MetricRow) string { return r.Split })
	if len(splits) > 0 {
		tb := report.NewTable("split", ">points", ">migrate", ">share migrate")
		var points, migrate float64
		for _, s := range splits {
			p, m := at(s, "points"), at(s, "migrate")
			points, migrate = points+p, migrate+m
			tb.Add(report.Escape(s), count(p), count(m), report.Pct(m/p))
		}
		fmt.Fprintf(&b, "**Labels.** %s decision points, %s of them (%s) labelled migrate:\n\n%s", count(points), count(migrate), report.Pct(migrate/points), tb.String())
	}
	var counts []string
	for _, r := range t.rows {
		if isCount(r) && r.Split == "" {
			counts = append(counts, fmt.Sprintf("%s %s", report.Escape(strings.ReplaceAll(r.Metric, "_", " ")), count(r.Value)))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&b, "\nThe labeller's counts: %s.\n", strings.Join(counts, ", "))
	}
	return b.String()
}

// trainRows are the trained models' headline numbers for metrics.parquet:
// the kept predictor's scores on each split (metric split_score, e.g.
// grouped_kfold_mape) and the network's on the test points.
func trainRows(t *trained) []MetricRow {
	if t == nil {
		return nil
	}
	var rows []MetricRow
	for _, s := range t.splits() {
		for _, m := range []string{predictor.MetricN, predictor.MetricCoverage, predictor.MetricR2, predictor.MetricR2Log,
			predictor.MetricMAE, predictor.MetricMAPE, predictor.MetricWithin10} {
			if v, ok := t.value(trainspec.ModelPredictor, trainspec.SectionScore, s, t.kind, m); ok {
				rows = append(rows, MetricRow{Scope: ScopePredictor, Metric: s + "_" + m, Value: v})
			}
		}
	}
	for _, m := range []string{"accuracy", "auc", "log_loss", "ece"} {
		if v, ok := t.value(trainspec.ModelPlacement, trainspec.SectionScore, trainspec.SplitTest, trainspec.ScorerNetwork, m); ok {
			rows = append(rows, MetricRow{Scope: ScopePlacement, Metric: m, Value: v})
		}
	}
	return rows
}
