package predictorfit

import (
	"slices"
	"testing"
)

// TestNested checks the nested cross-validation against its definition:
// each outer fold's rows are the k-fold predictions of the candidate its
// inner folds chose, one row per configuration the grouped k-fold holds
// out; and, on the measured testdata profile, what the selection scores
// when it never sees the configurations it is scored on.
func TestNested(t *testing.T) {
	r := trained(t)
	if len(r.Nested) != DefaultFolds {
		t.Fatalf("%d outer folds chose %v, want %d", len(r.Nested), r.Nested, DefaultFolds)
	}
	for i, k := range r.Nested {
		if !slices.Contains(Kinds, k) {
			t.Errorf("outer fold %d chose %q, not a candidate", i, k)
		}
	}
	type at struct {
		fold int32
		cfg  Query
	}
	kfold := map[at]map[string]CVRow{}
	var nested []CVRow
	for _, c := range r.CV {
		switch c.Split {
		case SplitKFold:
			k := at{c.Fold, queryOf(c)}
			if kfold[k] == nil {
				kfold[k] = map[string]CVRow{}
			}
			kfold[k][c.Candidate] = c
		case SplitNested:
			nested = append(nested, c)
		}
	}
	if len(nested) != len(kfold) {
		t.Errorf("%d nested rows, want one per configuration the grouped k-fold holds out (%d)", len(nested), len(kfold))
	}
	for _, c := range nested {
		want, ok := kfold[at{c.Fold, queryOf(c)}][r.Nested[c.Fold]]
		switch {
		case c.Candidate != KindAuto:
			t.Errorf("nested row of candidate %q, want %q", c.Candidate, KindAuto)
		case !ok:
			t.Errorf("nested row %+v: no grouped k-fold row of fold %d", c, c.Fold)
		case c.PredictedS != want.PredictedS || c.HasPrediction != want.HasPrediction || c.MeasuredS != want.MeasuredS:
			t.Errorf("nested row %+v, want the prediction of %s in fold %d, %+v", c, r.Nested[c.Fold], c.Fold, want)
		}
	}
	t.Logf("chosen %v; nested MAPE %.4f, coverage %.4f", r.Nested, score(t, r, SplitNested, KindAuto, MetricMAPE), score(t, r, SplitNested, KindAuto, MetricCoverage))
}

// queryOf is the configuration a CV row holds out.
func queryOf(c CVRow) Query {
	return Query{Device: c.Device, Model: c.Model, Precision: c.Precision, Batch: int(c.Batch), Threads: int(c.Threads)}
}
