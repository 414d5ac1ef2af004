package evaluate

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// trainArtifact is train's artifact as the predictor's and the placement
// network's sections show it, read once by whichever of them reads first.
type trainArtifact struct {
	read bool
	// trained is the artifact; nil without one (Evaluation.Train empty).
	trained *trained
}

// load reads the train artifact in dir, unless it is read already.
func (a *trainArtifact) load(dir string) (err error) {
	if a.read {
		return nil
	}
	a.trained, err = readTrained(dir)
	a.read = err == nil
	return err
}

// trained is what the report shows of the train artifact: the predictor
// candidate it kept, the scores of both models (metrics.parquet, in long
// form) and the predictor's held-out configurations (cv.parquet).
type trained struct {
	// kind is the kept candidate, as predictor.json names it.
	kind string
	rows []trainspec.MetricRow
	at   map[trainKey]float64
	cv   []trainspec.CVRow
	// features name the placement network's inputs by index, as
	// decisions.parquet's footer lists them; nil when it lists none.
	features []string
	// untrained is true when train trained no placement network, no
	// policy asking for one (trainspec.SectionTrained): the artifact then
	// holds no placement scores, curve or decision points.
	untrained bool
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
	if t.cv, err = parquetio.ReadAll[trainspec.CVRow](path); err != nil {
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

	if t.untrained {
		return t, nil
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
	v, ok := t.at[trainKey{model: trainspec.ModelPlacement, section: trainspec.SectionTrained, metric: trainspec.MetricTrained}]
	switch {
	case ok && v != 0 && v != 1:
		return fmt.Errorf("%s %s %s = %v, want 0 or 1", trainspec.ModelPlacement, trainspec.SectionTrained, trainspec.MetricTrained, v)
	case ok && v == 0:
		// No network: no placement row may claim one.
		for _, r := range t.rows {
			if r.Model == trainspec.ModelPlacement && r.Section != trainspec.SectionTrained {
				return fmt.Errorf("%s says no placement network was trained, yet holds its %s %s rows", trainspec.SectionTrained, r.Section, r.Metric)
			}
		}
		t.untrained = true
		return nil
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
	return t.placementScoreOn(trainspec.SplitTest, scorer, metric)
}

// placementScoreOn is a placement scorer's score on split's points (the
// test blocks, or the holdout workload's), NaN when there is none.
func (t *trained) placementScoreOn(split, scorer, metric string) float64 {
	if v, ok := t.value(trainspec.ModelPlacement, trainspec.SectionScore, split, scorer, metric); ok {
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
		if r.Model == trainspec.ModelPlacement && r.Section == trainspec.SectionROC && r.Split == trainspec.SplitTest && r.Candidate == scorer && r.Metric == "fpr" {
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

// count formats a count, which metrics.parquet holds as a float.
func count(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
