package evaluate

import (
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// classSection gives each policy's SLO violations and latencies by job
// class.
type classSection struct{}

var _ section.Section = classSection{}

func (classSection) Name() string { return "classes" }

// Read reads nothing: the summaries are the stage's.
func (classSection) Read(*section.Evaluation) error { return nil }

// Rows are none: the classes' numbers are the policies' section's rows.
func (classSection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render tabulates and charts the classes.
func (classSection) Render(ev *section.Evaluation) (report.Section, error) {
	classes := []string{generatespec.ClassInteractive, generatespec.ClassBatch}
	t := report.NewTable("policy", "class", ">jobs", ">SLO viol.", ">goodput /s", ">mean e2e", ">P99 e2e", ">mean wait")
	bars := make([]chart.BarSeries, len(classes))
	for k, c := range classes {
		bars[k].Name = c
	}
	for i, p := range ev.Policies {
		for k, c := range classes {
			cs := section.ClassOf(ev.Results[i].Summary, c)
			bars[k].Values = append(bars[k].Values, cs.SLOViolation)
			if cs.Jobs == 0 {
				continue
			}
			t.Add(report.Escape(p), report.Escape(c), fmt.Sprint(cs.Jobs), report.Pct(cs.SLOViolation), report.Num(cs.Goodput), report.Secs(cs.E2E.Mean), report.Secs(cs.E2E.P99), report.Secs(cs.Wait.Mean))
		}
	}
	for k := range bars {
		for j, v := range bars[k].Values {
			if math.IsNaN(v) {
				bars[k].Values[j] = 0
			}
		}
	}
	svg, err := chart.Bars("SLO violations by class", "fraction of the class's jobs", ev.Policies, bars, false)
	if err != nil {
		return report.Section{}, fmt.Errorf("chart slo-by-class: %w", err)
	}
	c := report.Chart{Name: "slo-by-class.svg", SVG: svg}
	md := t.String() + "\n" + c.Link("Fraction of each class's jobs that missed their SLO, per policy") + "\n\nA rejected job counts as a violation.\n"
	return report.Section{Title: "SLOs by class", Markdown: md, Charts: []report.Chart{c}}, nil
}
