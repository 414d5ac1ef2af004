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

// Render draws the CDFs, the percentiles and the waits.
func (latencySection) Render(ev *section.Evaluation) (report.Section, error) {
	var all, inter, waits []chart.Series
	cats := slices.Clone(ev.Policies)
	p50 := chart.BarSeries{Name: "P50"}
	p95 := chart.BarSeries{Name: "P95"}
	p99 := chart.BarSeries{Name: "P99"}
	for i, p := range ev.Policies {
		r := ev.Results[i]
		if len(r.E2ESketch) > 0 {
			all = append(all, chart.Series{Name: p, X: r.E2ESketch, Style: ev.Style(p)})
		}
		if len(r.InteractiveSketch) > 0 {
			inter = append(inter, chart.Series{Name: p, X: r.InteractiveSketch, Style: ev.Style(p)})
		}
		if w := chart.Positive(r.WaitSketch); len(w) > 0 {
			waits = append(waits, chart.Series{Name: p, X: w, Style: ev.Style(p)})
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
	add := func(name, alt string, svg []byte, err error) error {
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&md, "%s\n\n", c.Link(alt))
		return nil
	}
	svg, err := chart.CDF("End-to-end latency, all jobs", "latency (s)", all, true)
	if err := add("latency-cdf.svg", "CDF of end-to-end latency, every policy", svg, err); err != nil {
		return report.Section{}, err
	}
	if len(inter) > 0 {
		svg, err = chart.CDF("End-to-end latency, interactive jobs", "latency (s)", inter, true)
		if err := add("interactive-cdf.svg", "CDF of the interactive jobs' end-to-end latency", svg, err); err != nil {
			return report.Section{}, err
		}
	}
	svg, err = chart.Bars("End-to-end latency percentiles", "latency (s)", cats, []chart.BarSeries{p50, p95, p99}, true)
	if err := add("latency-percentiles.svg", "P50, P95 and P99 end-to-end latency per policy; the P99 bars carry their interval", svg, err); err != nil {
		return report.Section{}, err
	}
	if len(waits) > 0 {
		svg, err = chart.Histogram("Wait before starting (jobs that waited)", "wait (s)", waits, 40, true)
		if err := add("wait-histogram.svg", "Histograms of the wait of the jobs that waited at all", svg, err); err != nil {
			return report.Section{}, err
		}
	}
	md.WriteString(fmt.Sprintf("The charts draw each policy's distribution from %d equally spaced quantiles of its jobs' latencies.\n", sketchPoints))
	return report.Section{Title: "Latency", Markdown: md.String(), Charts: charts}, nil
}
