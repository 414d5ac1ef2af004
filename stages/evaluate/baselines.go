package evaluate

import (
	"fmt"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// baselinesSection sets every policy against each baseline: the paired
// differences on the same jobs, whose rows the policies' section adds.
type baselinesSection struct{}

var _ section.Section = baselinesSection{}

func (baselinesSection) Name() string { return "baselines" }

// Read reads nothing: the differences are the stage's.
func (baselinesSection) Read(*section.Evaluation) error { return nil }

// Rows are none: the differences are the policies' section's rows.
func (baselinesSection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render gives one table per baseline.
func (baselinesSection) Render(ev *section.Evaluation) (report.Section, error) {
	var b strings.Builder
	b.WriteString("Each policy minus the baseline on the same jobs (negative latency and violations are better; positive goodput is better). " +
		"Speedup is the baseline's value over the policy's.\n")
	for _, base := range ev.Config.Baselines {
		fmt.Fprintf(&b, "\n### Against %s\n\n", report.Escape(base))
		t := report.NewTable("policy", ">Δ mean e2e", ">speedup", ">Δ P99 e2e", ">Δ SLO viol.", ">Δ interactive SLO viol.", ">Δ goodput /s", ">makespan speedup")
		for i, p := range ev.Policies {
			if p == base {
				continue
			}
			cell := func(metric string, f func(float64) string) string {
				if x, ok := ev.Diff(i, base, metric); ok {
					return section.DiffText(x, f)
				}
				return "–"
			}
			speed := func(metric string) string {
				if x, ok := ev.Diff(i, base, metric); ok {
					return report.Ratio(x.Ratio)
				}
				return "–"
			}
			t.Add(report.Escape(p), cell(metrics.MetricMeanE2E, report.Secs), speed(metrics.MetricMeanE2E), cell(metrics.MetricP99E2E, report.Secs), cell(metrics.MetricSLOViolation, report.PctPts),
				cell(metrics.MetricInteractiveSLOViolation, report.PctPts), cell(metrics.MetricGoodput, report.Num), speed(metrics.MetricMakespan))
		}
		b.WriteString(t.String())
	}
	return report.Section{Title: "Against the baselines", Markdown: b.String()}, nil
}
