package learned

import (
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// Section is the report's "Learned decisions" section; the zero value is
// ready to read. It is left out when schedule simulated no learned policy.
type Section struct {
	// l is what Read read; nil without a learned policy.
	l *runs
}

var (
	_ section.Section  = (*Section)(nil)
	_ section.Comparer = (*Section)(nil)
)

// Name is "learned".
func (*Section) Name() string { return "learned" }

// Read reads each learned run's serving.parquet, the wall-clock figures
// the schedule manifest notes and studies.parquet.
func (s *Section) Read(ev *section.Evaluation) (err error) {
	s.l, err = readRuns(ev.Schedule, ev.Policies, ev.Ablations, ev.Replications, ev.ScheduleNotes)
	return err
}

// Pairs are each learned spec and those of its counterparts that
// schedule simulated.
func (s *Section) Pairs(*section.Evaluation) []section.Pair {
	if s.l == nil {
		return nil
	}
	var pairs []section.Pair
	for _, c := range s.l.comparisons {
		if c.simulated {
			pairs = append(pairs, section.Pair{Policy: c.learned, Other: c.counterpart})
		}
	}
	return pairs
}

// Compared keeps the differences of the simulated comparisons, in the
// order of Pairs.
func (s *Section) Compared(diffs [][]metrics.Difference) {
	if s.l == nil {
		return
	}
	k := 0
	for i, c := range s.l.comparisons {
		if c.simulated {
			s.l.comparisons[i].diffs = diffs[k]
			k++
		}
	}
}

// Rows are each learned spec's serving counts and its differences from
// its counterparts (section.ScopeLearned).
func (s *Section) Rows(*section.Evaluation) []section.MetricRow { return metricRows(s.l) }

// Render writes the section.
func (s *Section) Render(ev *section.Evaluation) (report.Section, error) { return render(ev, s.l) }
