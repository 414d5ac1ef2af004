package learned

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

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

// cell is one policy's rows under one condition of a study, one per
// replication, in the order of their replications.
type cell []schedulespec.StudyRow

// mean is m's mean over the cell's replications.
func (c cell) mean(m studyMetric) float64 {
	return meanOf(c, m.value)
}

// mape is the predictions' MAPE, the mean over the cell's replications.
func (c cell) mape() float64 {
	return meanOf(c, func(r schedulespec.StudyRow) float64 { return r.PredictionMAPE })
}

func meanOf(c cell, v func(schedulespec.StudyRow) float64) float64 {
	if len(c) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, r := range c {
		sum += v(r)
	}
	return sum / float64(len(c))
}

// change is m's change from cell a to cell z, z − a in m's unit, with
// its paired Student t interval over the replications both ran (each
// pair saw the same jobs and draws: common random numbers). The
// interval is NaN with fewer than two such replications.
func change(m studyMetric, a, z cell, confidence float64) outputanalysis.Interval {
	at := map[int32]float64{}
	for _, r := range a {
		at[r.Replication] = m.value(r)
	}
	var x, y []float64
	for _, r := range z {
		if v, ok := at[r.Replication]; ok {
			x, y = append(x, m.value(r)), append(y, v)
		}
	}
	iv, err := outputanalysis.PairedTInterval(x, y, confidence)
	if err != nil { // unreachable: x and y grow together
		return outputanalysis.Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return iv
}

// predictionError is the prediction-error study laid out: its policies in
// schedule's order, its conditions (the table's errors ascending, then
// train's predictor), and each policy's cell under each.
type predictionError struct {
	policies   []string
	conditions []condition
	at         map[string]map[condition]cell
	jobs       int64
	// reps is the most replications any cell has.
	reps int
	// confidence is the intervals' (evaluate.confidence).
	confidence float64
	// style is each policy's chart style (section.Evaluation.Style).
	style func(policy string) int
}

func newPredictionError(rows []schedulespec.StudyRow, policies []string, confidence float64) *predictionError {
	s := &predictionError{at: map[string]map[condition]cell{}, confidence: confidence}
	for _, r := range rows {
		c := condition{r.Predictor, r.PredictionError}
		if s.at[r.Policy] == nil {
			s.at[r.Policy] = map[condition]cell{}
		}
		s.at[r.Policy][c] = append(s.at[r.Policy][c], r)
		s.reps = max(s.reps, len(s.at[r.Policy][c]))
		if !slices.Contains(s.conditions, c) {
			s.conditions = append(s.conditions, c)
		}
		s.jobs = r.Jobs
	}
	for _, byCond := range s.at {
		for _, c := range byCond {
			slices.SortFunc(c, func(a, b schedulespec.StudyRow) int { return cmp.Compare(a.Replication, b.Replication) })
		}
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

// mapeText is a condition's prediction MAPE, when every policy's cells
// share it (they do when the study draws the same errors for all).
func (s *predictionError) mapeText(c condition) (string, bool) {
	v := math.NaN()
	for _, p := range s.policies {
		r, ok := s.at[p][c]
		if !ok {
			continue
		}
		if !math.IsNaN(v) && r.mape() != v {
			return "", false
		}
		v = r.mape()
	}
	return report.Pct(v), !math.IsNaN(v)
}

// hasFinite says whether any cell has a finite mean of m.
func (s *predictionError) hasFinite(m studyMetric) bool {
	for _, p := range s.policies {
		for _, r := range s.at[p] {
			if v := r.mean(m); !math.IsNaN(v) && !math.IsInf(v, 0) {
				return true
			}
		}
	}
	return false
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
