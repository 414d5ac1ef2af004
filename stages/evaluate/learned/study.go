package learned

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
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

// predictionError is the prediction-error study laid out: its policies in
// schedule's order, its conditions (the table's errors ascending, then
// train's predictor), and each policy's row under each.
type predictionError struct {
	policies   []string
	conditions []condition
	at         map[string]map[condition]schedulespec.StudyRow
	jobs       int64
	// style is each policy's chart style (section.Evaluation.Style).
	style func(policy string) int
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

// change is how much a metric moved from one value to another, signed so
// that a positive change is worse: percentage points lost for an
// attainment, the relative growth of a latency.
func (m studyMetric) change(from, to float64) float64 {
	if m.higher {
		return from - to
	}
	return to/from - 1
}
