package predictorfit

import (
	"math"

	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// ScoreRow is one score of one candidate on one split, in long form: a row
// of metrics.parquet. Scores pool every fold's held-out configurations.
type ScoreRow struct {
	Split     string  `parquet:"split,dict"`
	Candidate string  `parquet:"candidate,dict"`
	Metric    string  `parquet:"metric,dict"`
	Value     float64 `parquet:"value"`
}

// The metrics of ScoreRow: trainspec's.
const (
	MetricN                  = trainspec.MetricN
	MetricCoverage           = trainspec.MetricCoverage
	MetricR2                 = trainspec.MetricR2
	MetricR2Log              = trainspec.MetricR2Log
	MetricMAE                = trainspec.MetricMAE
	MetricMAPE               = trainspec.MetricMAPE
	MetricWithin10           = trainspec.MetricWithin10
	MetricNWhereTable        = trainspec.MetricNWhereTable
	MetricMAPEWhereTable     = trainspec.MetricMAPEWhereTable
	MetricWithin10WhereTable = trainspec.MetricWithin10WhereTable
	MetricChosen             = trainspec.MetricChosen
)

// CVRow is a row of cv.parquet (trainspec.CVRow).
type CVRow = trainspec.CVRow

// within10 is nn-Meter's tolerance.
const within10 = 0.10

// scoreRows scores every candidate on every split from the CV rows.
func scoreRows(rows []CVRow, splits, candidates []string) []ScoreRow {
	type key struct{ split, cand string }
	by := map[key][]CVRow{}
	for _, r := range rows {
		by[key{r.Split, r.Candidate}] = append(by[key{r.Split, r.Candidate}], r)
	}
	var out []ScoreRow
	for _, s := range splits {
		table := by[key{s, KindTable}]
		for _, c := range candidates {
			rs := by[key{s, c}]
			if len(rs) == 0 {
				continue
			}
			add := func(metric string, v float64) {
				out = append(out, ScoreRow{s, c, metric, v})
			}
			var covered []CVRow
			for _, r := range rs {
				if r.HasPrediction {
					covered = append(covered, r)
				}
			}
			add(MetricN, float64(len(rs)))
			add(MetricCoverage, float64(len(covered))/float64(len(rs)))
			if len(covered) > 0 {
				add(MetricR2, r2(covered, func(x float64) float64 { return x }))
				add(MetricR2Log, r2(covered, math.Log))
				var mae float64
				for _, r := range covered {
					mae += math.Abs(r.PredictedS - r.MeasuredS)
				}
				add(MetricMAE, mae/float64(len(covered)))
				mape, within := accuracy(covered)
				add(MetricMAPE, mape)
				add(MetricWithin10, within)
			}
			if len(table) == len(rs) {
				// Rows of one split come in the same configuration
				// order for every candidate.
				var both []CVRow
				for i, r := range rs {
					if r.HasPrediction && table[i].HasPrediction {
						both = append(both, r)
					}
				}
				add(MetricNWhereTable, float64(len(both)))
				if len(both) > 0 {
					mape, within := accuracy(both)
					add(MetricMAPEWhereTable, mape)
					add(MetricWithin10WhereTable, within)
				}
			}
		}
	}
	return out
}

// r2 is 1 − SS_res/SS_tot of the predictions against the measurements,
// both transformed by f.
func r2(rows []CVRow, f func(float64) float64) float64 {
	var mean float64
	for _, r := range rows {
		mean += f(r.MeasuredS)
	}
	mean /= float64(len(rows))
	var res, tot float64
	for _, r := range rows {
		d := f(r.PredictedS) - f(r.MeasuredS)
		res += d * d
		e := f(r.MeasuredS) - mean
		tot += e * e
	}
	return 1 - res/tot
}

// accuracy returns the MAPE of rows and the share within ±10%.
func accuracy(rows []CVRow) (mape, within float64) {
	for _, r := range rows {
		e := math.Abs(r.PredictedS-r.MeasuredS) / r.MeasuredS
		mape += e
		if e <= within10 {
			within++
		}
	}
	n := float64(len(rows))
	return mape / n, within / n
}

// ImportanceRow is one input's permutation importance for one candidate:
// how much worse the candidate predicts the held-out configurations of the
// grouped k-fold split when that input is shuffled among each fold's
// held-out configurations, averaged over Options.Repeats seeded shuffles.
type ImportanceRow struct {
	Candidate string `parquet:"candidate,dict"`
	// Level is "query" for a field of the Query (model, precision, batch,
	// threads, device: every derived feature moves with it), which every
	// candidate has, or "feature" for one column of the feature vector,
	// which the table has not.
	Level string `parquet:"level,dict"`
	Input string `parquet:"input,dict"`
	// LogErrorIncrease is the mean absolute error of the log latency,
	// |ln predicted − ln measured|, with the input shuffled minus the same
	// without, over the configurations predicted both ways. (MAPE would
	// let the few shuffles that give a microsecond MLP a ResNet's
	// latency, errors of 10⁴, drown everything else.)
	LogErrorIncrease float64 `parquet:"log_error_increase"`
}

// The levels of ImportanceRow.
const (
	LevelQuery   = "query"
	LevelFeature = "feature"
)

// queryInputs are the Query fields permuted at LevelQuery.
var queryInputs = []string{"model", "precision", "batch", "threads", "device"}

// withInput returns q with its field named input set from p's.
func withInput(q, p Query, input string) Query {
	switch input {
	case "model":
		q.Model = p.Model
	case "precision":
		q.Precision = p.Precision
	case "batch":
		q.Batch = p.Batch
	case "threads":
		q.Threads = p.Threads
	case "device":
		q.Device = p.Device
	}
	return q
}

// TimingRow is the measured cost of one candidate on one split: wall-clock
// times, which vary from run to run, so kept apart from every row that
// must be reproducible.
type TimingRow struct {
	Split     string `parquet:"split,dict"`
	Candidate string `parquet:"candidate,dict"`
	// Fits is the number of folds fitted.
	Fits int32 `parquet:"fits"`
	// TrainS is the mean time of one fit in seconds.
	TrainS float64 `parquet:"train_s"`
	// PredictSPerRow is the mean time of one Predict call in seconds.
	PredictSPerRow float64 `parquet:"predict_s_per_row"`
}
