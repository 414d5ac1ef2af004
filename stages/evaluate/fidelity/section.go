package fidelity

import (
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Section is the report's Fidelity section; the zero value is ready to
// read. It is left out when the schedule artifact holds no real run.
type Section struct {
	// f is what Read read; nil without real runs.
	f *comparison
}

var _ section.Section = (*Section)(nil)

// Name is "fidelity".
func (*Section) Name() string { return "fidelity" }

// Read reads the real runs of the schedule artifact and their
// simulations, repeats, replays and draws.
func (s *Section) Read(ev *section.Evaluation) (err error) {
	s.f, err = readRuns(ev.Schedule, ev.Devices)
	if err == nil && s.f != nil {
		if v := ev.ScheduleNotes[schedulespec.NoteRealSkipped]; v != "" {
			s.f.skipped = strings.Split(v, ",")
		}
	}
	return err
}

// Rows are each run's figures and each load's ranking
// (section.ScopeFidelity).
func (s *Section) Rows(*section.Evaluation) []section.MetricRow { return metricRows(s.f) }

// Render writes the section.
func (s *Section) Render(*section.Evaluation) (report.Section, error) { return render(s.f) }
