package fidelity

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
)

// charts draws each run's end-to-end latency CDF, real against simulated,
// and one scatter of every compared job's simulated latency against its
// real one.
func (f *comparison) charts() (string, []report.Chart, error) {
	var b strings.Builder
	var charts []report.Chart
	b.WriteString("\n### Distributions\n\n")
	used := map[string]bool{}
	for _, r := range f.runs {
		measured, simulated := chart.Positive(r.realE2E), chart.Positive(r.simE2E)
		if len(measured) == 0 || len(simulated) == 0 {
			fmt.Fprintf(&b, "%s has no completed job with a positive latency in one of its traces: no distribution to draw.\n\n", r.label())
			continue
		}
		name := chartFileName(used, "fidelity-cdf", r.row.Policy, strconv.FormatFloat(r.row.Load, 'g', -1, 64))
		svg, err := chart.CDF(fmt.Sprintf("%s: end-to-end latency, real and simulated", r.name()), "latency (s)",
			[]chart.Series{{Name: "real", X: measured}, {Name: "simulated", X: simulated}}, true)
		if err != nil {
			return "", nil, fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&b, "%s\n\n", c.Link(fmt.Sprintf("CDF of end-to-end latency of %s, the real run against its simulation", r.label())))
	}
	var series []chart.Series
	for _, r := range f.runs {
		s := chart.Series{Name: r.name()}
		for k := range r.pairedReal {
			if r.pairedSim[k] > 0 {
				s.X, s.Y = append(s.X, r.pairedReal[k]), append(s.Y, r.pairedSim[k])
			}
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	if len(series) > 0 {
		name := chartFileName(used, "fidelity-scatter")
		svg, err := chart.Scatter("Per-job end-to-end latency, simulated against real", "real latency (s)", "simulated latency (s)",
			series, chart.ScatterOptions{LogX: true, LogY: true, Diagonal: true, DiagonalLabel: "simulated = real"})
		if err != nil {
			return "", nil, fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&b, "%s\n\nEach point is a job both completed, at its real and its simulated end-to-end latency; on the dashed line the simulation is exact, below it the simulation is faster.\n",
			c.Link("Simulated against real end-to-end latency of every job, log-log, one colour per run"))
	}
	return b.String(), charts, nil
}

// chartFileName makes a chart's file name from parts: lower case, a
// hyphen for any run of other characters, unique among used.
func chartFileName(used map[string]bool, parts ...string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.Join(parts, "-")) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	base := strings.TrimSuffix(b.String(), "-")
	name := base
	for k := 2; used[name]; k++ {
		name = fmt.Sprintf("%s-%d", base, k)
	}
	used[name] = true
	return name + ".svg"
}
