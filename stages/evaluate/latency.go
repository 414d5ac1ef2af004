package evaluate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// latencySection charts the policies' latency distributions from the
// sketches the stage keeps of each trace.
type latencySection struct{}

var _ section.Section = latencySection{}

func (latencySection) Name() string { return "latency" }

// Read reads nothing: the sketches are the stage's.
func (latencySection) Read(*section.Evaluation) error { return nil }

// Rows are none: the percentiles it charts are the policies' section's
// rows.
func (latencySection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render draws the CDFs, the percentiles and the waits. A distribution
// chart of many policies shows the featured few (the recommendation, the
// runner-up and the baselines) and offers every policy's folded beneath.
func (latencySection) Render(ev *section.Evaluation) (report.Section, error) {
	var all, inter, waits []chart.Series
	var showAll, showInter, showWaits []chart.Series
	few := ev.Featured()
	cats := slices.Clone(ev.Policies)
	p50 := chart.BarSeries{Name: "P50"}
	p95 := chart.BarSeries{Name: "P95"}
	p99 := chart.BarSeries{Name: "P99"}
	for i, p := range ev.Policies {
		r := ev.Results[i]
		keep := func(to, shown *[]chart.Series, s chart.Series) {
			*to = append(*to, s)
			if slices.Contains(few, i) {
				*shown = append(*shown, s)
			}
		}
		if len(r.E2ESketch) > 0 {
			keep(&all, &showAll, chart.Series{Name: p, X: r.E2ESketch, Style: ev.Style(p)})
		}
		if len(r.InteractiveSketch) > 0 {
			keep(&inter, &showInter, chart.Series{Name: p, X: r.InteractiveSketch, Style: ev.Style(p)})
		}
		if w := chart.Positive(r.WaitSketch); len(w) > 0 {
			keep(&waits, &showWaits, chart.Series{Name: p, X: w, Style: ev.Style(p)})
		}
		s := r.Summary.E2E
		p50.Values = append(p50.Values, s.P50)
		p95.Values = append(p95.Values, s.P95)
		p99.Values = append(p99.Values, s.P99)
		// An interval reaching zero or below runs off the log axis: no
		// bar for it (the tables give it in full).
		iv := ev.Analysis.Estimate(i, metrics.MetricP99E2E)
		if !(iv.Lo > 0) {
			iv.Lo, iv.Hi = math.NaN(), math.NaN()
		}
		p99.Lo = append(p99.Lo, iv.Lo)
		p99.Hi = append(p99.Hi, iv.Hi)
	}
	var charts []report.Chart
	var md strings.Builder
	add := func(name string, link func(report.Chart) string, svg []byte, err error) error {
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&md, "%s\n\n", link(c))
		return nil
	}
	shown := func(alt string) func(report.Chart) string {
		return func(c report.Chart) string { return c.Link(alt) }
	}
	folded := func(text string) func(report.Chart) string {
		return func(c report.Chart) string { return c.Detail(text) }
	}
	// distribution draws one distribution: every policy's where they are
	// few enough to tell apart, or else the featured policies', with every
	// policy's folded beneath.
	distribution := func(name, alt string, every, few []chart.Series, draw func(title string, s []chart.Series) ([]byte, error), title string) error {
		if len(every) <= section.Crowded || len(few) == 0 || len(few) == len(every) {
			svg, err := draw(title, every)
			return add(name+".svg", shown(alt+", every policy"), svg, err)
		}
		names := make([]string, len(few))
		for i, s := range few {
			names[i] = report.Escape(s.Name)
		}
		svg, err := draw(title, few)
		if err := add(name+".svg", shown(fmt.Sprintf("%s: %s (the recommendation, the runner-up and the baselines)", alt, strings.Join(names, ", "))), svg, err); err != nil {
			return err
		}
		svg, err = draw(title+", every policy", every)
		return add(name+"-all.svg", folded(fmt.Sprintf("%s, every policy (%d)", alt, len(every))), svg, err)
	}
	cdf := func(title string, s []chart.Series) ([]byte, error) { return chart.CDF(title, "latency (s)", s, true) }
	if err := distribution("latency-cdf", "CDF of end-to-end latency", all, showAll, cdf, "End-to-end latency, all jobs"); err != nil {
		return report.Section{}, err
	}
	if len(inter) > 0 {
		if err := distribution("interactive-cdf", "CDF of the interactive jobs' end-to-end latency", inter, showInter, cdf, "End-to-end latency, interactive jobs"); err != nil {
			return report.Section{}, err
		}
	}
	svg, err := chart.Bars("End-to-end latency percentiles", "latency (s)", cats, []chart.BarSeries{p50, p95, p99}, true)
	if err := add("latency-percentiles.svg", shown("P50, P95 and P99 end-to-end latency per policy; the P99 bars carry their interval"), svg, err); err != nil {
		return report.Section{}, err
	}
	if len(waits) > 0 {
		hist := func(title string, s []chart.Series) ([]byte, error) {
			return chart.Histogram(title, "wait (s)", s, 40, true)
		}
		if err := distribution("wait-histogram", "Histograms of the wait of the jobs that waited at all", waits, showWaits, hist, "Wait before starting (jobs that waited)"); err != nil {
			return report.Section{}, err
		}
	}
	md.WriteString(fmt.Sprintf("The charts draw each policy's distribution from %d equally spaced quantiles of its jobs' latencies.\n", sketchPoints))
	return report.Section{Title: "Latency", Markdown: md.String(), Charts: charts}, nil
}
