package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// reportData is what the report's sections are built from.
type reportData struct {
	cfg      Config
	devices  []schedulespec.ClusterRow // cluster.parquet, as simulated
	policies []string
	results  []policyResult
	bounds   metrics.Bounds
	cluster  metrics.Cluster
	sweep    *sweepResult
	timeline *timeline
	profile  []profileCurve
	since    *change
	// train is what the report shows of the train artifact; nil without
	// one, when its sections are left out.
	train *trained
	// learned is what the report shows of the learned policies; nil when
	// none was simulated, when their section is left out.
	learned *learnedRuns
	// fidelity is what the report shows of the real runs against their
	// simulations; nil when schedule ran none, when its section is left
	// out.
	fidelity *fidelity
	// replications are the rows across schedule.replications; none for
	// a single run.
	replications []MetricRow
	prov         Provenance
}

// section builds one part of the report, or returns a section without a
// title when it has nothing to say in this run. Each is a small unit: a
// later stage's section is one more function in sections.
type section func(*reportData) (report.Section, error)

var sections = []section{
	summarySection,
	policiesSection,
	baselinesSection,
	replicationSection,
	latencySection,
	classSection,
	devicesSection,
	sweepSection,
	fidelitySection,
	profileSection,
	predictorSection,
	placementSection,
	learnedSection,
	changeSection,
	provenanceSection,
}

func (d *reportData) document() (*report.Document, error) {
	doc := &report.Document{
		Title: "mlsched evaluation",
		Intro: fmt.Sprintf("%d policies simulated on the same %d eval jobs on a cluster of %s. "+
			"Intervals are %.0f%% percentile-bootstrap intervals over jobs (%d resamples); a difference whose interval "+
			"contains zero is reported as no difference.",
			len(d.policies), d.results[0].summary.Jobs, clusterText(d.devices), 100*d.cfg.Bootstrap.Confidence, d.cfg.Bootstrap.Resamples),
	}
	for _, s := range sections {
		sec, err := s(d)
		if err != nil {
			return nil, err
		}
		if sec.Title == "" {
			continue // nothing to say in this run
		}
		doc.Sections = append(doc.Sections, sec)
	}
	return doc, nil
}

func clusterText(devices []schedulespec.ClusterRow) string {
	var parts []string
	for _, d := range devices {
		what := "measured"
		if d.Kind == schedulespec.KindDeclared {
			what = fmt.Sprintf("declared, %g× the profiled %s", d.Speed, report.Escape(d.ProfileDevice))
		}
		lanes := "lanes"
		if d.Lanes == 1 {
			lanes = "lane"
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s, %s)", report.Escape(d.Device), d.Lanes, lanes, what))
	}
	return strings.Join(parts, ", ")
}

// objective is one thing a policy can be best at.
type objective struct {
	name   string
	value  func(r policyResult) float64
	lower  bool   // lower is better
	diff   string // the Difference metric that gives its interval, if any
	format func(float64) string
	// delta formats a difference (percentage points for a fraction).
	delta func(float64) string
}

var objectives = []objective{
	{"Mean end-to-end latency", func(r policyResult) float64 { return r.summary.E2E.Mean }, true, metrics.MetricMeanE2E, report.Secs, report.Secs},
	{"P99 end-to-end latency", func(r policyResult) float64 { return r.summary.E2E.P99 }, true, metrics.MetricP99E2E, report.Secs, report.Secs},
	{"SLO violations", func(r policyResult) float64 { return r.summary.SLOViolation }, true, metrics.MetricSLOViolation, report.Pct, report.PctPts},
	{"Interactive SLO violations", func(r policyResult) float64 { return classOf(r.summary, generatespec.ClassInteractive).SLOViolation }, true, metrics.MetricInteractiveSLOViolation, report.Pct, report.PctPts},
	{"Goodput (jobs/s within SLO)", func(r policyResult) float64 { return r.summary.Goodput }, false, metrics.MetricGoodput, report.Num, report.Num},
	{"Makespan", func(r policyResult) float64 { return r.summary.Makespan }, true, metrics.MetricMakespan, report.Secs, report.Secs},
}

func classOf(s metrics.Summary, class string) metrics.ClassSummary {
	for _, c := range s.Classes {
		if c.Class == class {
			return c
		}
	}
	return metrics.ClassSummary{Class: class, SLOViolation: math.NaN(), Goodput: math.NaN()}
}

// ranked returns the policy indices ordered best first for an objective
// (NaN last, ties by listing order).
func (d *reportData) ranked(o objective) []int {
	idx := make([]int, len(d.policies))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		va, vb := o.value(d.results[a]), o.value(d.results[b])
		switch {
		case math.IsNaN(va) && math.IsNaN(vb):
			return 0
		case math.IsNaN(va):
			return 1
		case math.IsNaN(vb):
			return -1
		}
		if o.lower {
			return cmp.Compare(va, vb)
		}
		return cmp.Compare(vb, va)
	})
	return idx
}

// diff finds policy i's difference in metric against baseline.
func (d *reportData) diff(i int, baseline, metric string) (metrics.Difference, bool) {
	for _, x := range d.results[i].diffs {
		if x.Baseline == baseline && x.Metric == metric {
			return x, true
		}
	}
	return metrics.Difference{}, false
}

// diffText formats a difference with its interval, or "no difference".
func diffText(x metrics.Difference, format func(float64) string) string {
	if x.Lo == x.Hi {
		return report.Signed(x.Value, format)
	}
	if !x.Significant {
		return fmt.Sprintf("no difference (%s … %s)", report.Signed(x.Lo, format), report.Signed(x.Hi, format))
	}
	return fmt.Sprintf("%s (%s … %s)", report.Signed(x.Value, format), report.Signed(x.Lo, format), report.Signed(x.Hi, format))
}

func summarySection(d *reportData) (report.Section, error) {
	t := report.NewTable("objective", "best policy", ">value", "runner-up", "against the best baseline")
	for _, o := range objectives {
		r := d.ranked(o)
		best, second := r[0], -1
		// Policies that tie with the best share the first place.
		tied := []string{report.Escape(d.policies[best])}
		for _, i := range r[1:] {
			if o.value(d.results[i]) != o.value(d.results[best]) {
				second = i
				break
			}
			tied = append(tied, report.Escape(d.policies[i]))
		}
		runner := "–"
		if second >= 0 {
			runner = fmt.Sprintf("%s (%s)", report.Escape(d.policies[second]), o.format(o.value(d.results[second])))
		}
		if len(tied) > 1 {
			t.Add(o.name, fmt.Sprintf("%d tie: %s", len(tied), strings.Join(tied, ", ")), o.format(o.value(d.results[best])), runner, "–")
			continue
		}
		against := "is a baseline"
		if !slices.Contains(d.cfg.Baselines, d.policies[best]) {
			against = "–"
			// The best baseline for this objective.
			for _, i := range r {
				if !slices.Contains(d.cfg.Baselines, d.policies[i]) {
					continue
				}
				if x, ok := d.diff(best, d.policies[i], o.diff); ok {
					against = fmt.Sprintf("%s vs %s", diffText(x, o.delta), report.Escape(d.policies[i]))
				}
				break
			}
		}
		t.Add(o.name, report.Escape(d.policies[best]), o.format(o.value(d.results[best])), runner, against)
	}
	var b strings.Builder
	b.WriteString(t.String())
	b.WriteString(capacitySummary(d.sweep, d.cfg.Baselines))
	return report.Section{Title: "Summary", Markdown: b.String()}, nil
}

func policiesSection(d *reportData) (report.Section, error) {
	t := report.NewTable("policy", ">jobs", ">rejected", ">mean e2e", ">P50", ">P95", ">P99 (interval)", ">max", ">mean wait",
		">SLO viol.", ">goodput /s", ">jobs/s", ">samples/s", ">makespan", ">gap to bound", ">Jain", ">fairness")
	for i, p := range d.policies {
		s := d.results[i].summary
		t.Add(report.Escape(p), fmt.Sprint(s.Jobs), fmt.Sprint(s.Rejected), report.Secs(s.E2E.Mean), report.Secs(s.E2E.P50), report.Secs(s.E2E.P95),
			fmt.Sprintf("%s (%s … %s)", report.Secs(s.E2E.P99), report.Secs(s.E2EP99CI.Lo), report.Secs(s.E2EP99CI.Hi)), report.Secs(s.E2E.Max), report.Secs(s.Wait.Mean),
			report.Pct(s.SLOViolation), report.Num(s.Goodput), report.Num(s.Throughput), report.Num(s.SampleThroughput), report.Secs(s.Makespan),
			report.Pct(s.MakespanGap), report.Num(s.Jain), report.Num(s.Fairness))
	}
	md := t.String() + fmt.Sprintf("\nLatencies are end to end (arrival to end) over the jobs that ran. Gap to bound is the makespan over "+
		"the lower bound (%s) less one; the mean latency's bound is %s. Jain is Jain's index over the devices' utilizations "+
		"(1: all equally busy). Fairness is the batch jobs' mean wait over the interactive jobs'.\n",
		report.Secs(d.bounds.MakespanLBS), report.Secs(d.bounds.MeanLatencyLBS))
	return report.Section{Title: "All policies", Markdown: md}, nil
}

func baselinesSection(d *reportData) (report.Section, error) {
	var b strings.Builder
	b.WriteString("Each policy minus the baseline on the same jobs (negative latency and violations are better; positive goodput is better). " +
		"Speedup is the baseline's value over the policy's.\n")
	for _, base := range d.cfg.Baselines {
		fmt.Fprintf(&b, "\n### Against %s\n\n", report.Escape(base))
		t := report.NewTable("policy", ">Δ mean e2e", ">speedup", ">Δ P99 e2e", ">Δ SLO viol.", ">Δ interactive SLO viol.", ">Δ goodput /s", ">makespan speedup")
		for i, p := range d.policies {
			if p == base {
				continue
			}
			cell := func(metric string, f func(float64) string) string {
				if x, ok := d.diff(i, base, metric); ok {
					return diffText(x, f)
				}
				return "–"
			}
			speed := func(metric string) string {
				if x, ok := d.diff(i, base, metric); ok {
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

func latencySection(d *reportData) (report.Section, error) {
	var all, inter, waits []chart.Series
	cats := slices.Clone(d.policies)
	p50 := chart.BarSeries{Name: "P50"}
	p95 := chart.BarSeries{Name: "P95"}
	p99 := chart.BarSeries{Name: "P99"}
	for i, p := range d.policies {
		r := d.results[i]
		if len(r.e2e) > 0 {
			all = append(all, chart.Series{Name: p, X: r.e2e})
		}
		if len(r.interactive) > 0 {
			inter = append(inter, chart.Series{Name: p, X: r.interactive})
		}
		if w := positive(r.wait); len(w) > 0 {
			waits = append(waits, chart.Series{Name: p, X: w})
		}
		s := r.summary.E2E
		p50.Values = append(p50.Values, s.P50)
		p95.Values = append(p95.Values, s.P95)
		p99.Values = append(p99.Values, s.P99)
		p99.Lo = append(p99.Lo, r.summary.E2EP99CI.Lo)
		p99.Hi = append(p99.Hi, r.summary.E2EP99CI.Hi)
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

// positive keeps the values above zero (a log axis cannot show the rest).
func positive(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}

func classSection(d *reportData) (report.Section, error) {
	classes := []string{generatespec.ClassInteractive, generatespec.ClassBatch}
	t := report.NewTable("policy", "class", ">jobs", ">SLO viol.", ">goodput /s", ">mean e2e", ">P99 e2e", ">mean wait")
	bars := make([]chart.BarSeries, len(classes))
	for k, c := range classes {
		bars[k].Name = c
	}
	for i, p := range d.policies {
		for k, c := range classes {
			cs := classOf(d.results[i].summary, c)
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
	svg, err := chart.Bars("SLO violations by class", "fraction of the class's jobs", d.policies, bars, false)
	if err != nil {
		return report.Section{}, fmt.Errorf("chart slo-by-class: %w", err)
	}
	c := report.Chart{Name: "slo-by-class.svg", SVG: svg}
	md := t.String() + "\n" + c.Link("Fraction of each class's jobs that missed their SLO, per policy") + "\n\nA rejected job counts as a violation.\n"
	return report.Section{Title: "SLOs by class", Markdown: md, Charts: []report.Chart{c}}, nil
}

func devicesSection(d *reportData) (report.Section, error) {
	head := []string{"policy"}
	for _, dev := range d.cluster.Devices {
		head = append(head, ">"+report.Escape(dev))
	}
	head = append(head, ">Jain")
	t := report.NewTable(head...)
	for i, p := range d.policies {
		row := []string{report.Escape(p)}
		for _, u := range d.results[i].summary.Devices {
			row = append(row, report.Pct(u.Utilization))
		}
		row = append(row, report.Num(d.results[i].summary.Jain))
		t.Add(row...)
	}
	md := "Utilization is a device's busy lane-seconds over its lanes times the policy's makespan.\n\n" + t.String()
	var charts []report.Chart
	if tl := d.timeline; tl != nil && len(tl.spans) > 0 {
		svg, err := chart.Gantt(fmt.Sprintf("%s: lanes from %s to %s", tl.policy, report.Secs(tl.from), report.Secs(tl.to)), tl.rows, tl.categories, tl.spans, tl.from, tl.to)
		if err != nil {
			return report.Section{}, fmt.Errorf("chart timeline: %w", err)
		}
		c := report.Chart{Name: "timeline.svg", SVG: svg}
		charts = append(charts, c)
		md += fmt.Sprintf("\n%s\n\nThe timeline shows every lane of the cluster under %s (best on SLO violations) for %s from %s, "+
			"batches coloured by their size in samples.\n",
			c.Link("Busy intervals of every lane in a window of time"), report.Escape(tl.policy), report.Secs(tl.to-tl.from), report.Secs(tl.from))
	}
	return report.Section{Title: "Devices", Markdown: md, Charts: charts}, nil
}

func sweepSection(d *reportData) (report.Section, error) {
	sw := d.sweep
	if !sw.on() {
		return report.Section{Title: "Load sweep", Markdown: "The sweep is off (schedule.sweep.loads is empty and schedule.sweep.tolerance is 0).\n"}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	if len(sw.loads) > 0 {
		var slo, inter, p99 []chart.Series
		for _, p := range d.policies {
			var a, b, c chart.Series
			a.Name, b.Name, c.Name = p, p, p
			for i, u := range sw.loads {
				a.X, a.Y = append(a.X, u), append(a.Y, sw.at(p, i, metricSLO))
				if v := sw.at(p, i, metricInteractiveSLO); !math.IsNaN(v) {
					b.X, b.Y = append(b.X, u), append(b.Y, v)
				}
				if v := sw.at(p, i, metricP99E2E); v > 0 {
					c.X, c.Y = append(c.X, u), append(c.Y, v)
				}
			}
			slo = append(slo, a)
			if len(b.X) > 0 {
				inter = append(inter, b)
			}
			if len(c.X) > 0 {
				p99 = append(p99, c)
			}
		}
		target := sw.target
		zero, one := 0.0, 1.0
		mean := ""
		if sw.reps > 1 {
			mean = fmt.Sprintf(" Each point is the mean over %d replications.", sw.reps)
		}
		fmt.Fprintf(&md, "The first %d eval jobs, offered at %s of the cluster's capacity (the lower bound's work over the span of the arrivals).%s\n\n",
			sw.jobs, strings.Join(mapf(sw.loads, report.Pct), ", "), mean)
		for _, c := range []struct {
			name, title, y, alt string
			series              []chart.Series
			opts                chart.LineOptions
		}{
			{"sweep-slo.svg", "SLO attainment vs offered load", "jobs within SLO", "SLO attainment of every job vs offered load", slo, chart.LineOptions{YMin: &zero, YMax: &one}},
			{"sweep-interactive-slo.svg", "Interactive SLO attainment vs offered load", "interactive jobs within SLO", "Interactive SLO attainment vs offered load, with the target", inter,
				chart.LineOptions{YMin: &zero, YMax: &one, HLine: &target, HLineLabel: "target " + report.Pct(target)}},
			{"sweep-p99.svg", "P99 end-to-end latency vs offered load", "P99 latency (s)", "P99 end-to-end latency vs offered load", p99, chart.LineOptions{LogY: true}},
		} {
			if len(c.series) == 0 {
				continue
			}
			svg, err := chart.Lines(c.title, "offered load (fraction of capacity)", c.y, c.series, c.opts)
			if err != nil {
				return report.Section{}, fmt.Errorf("chart %s: %w", c.name, err)
			}
			ch := report.Chart{Name: c.name, SVG: svg}
			charts = append(charts, ch)
			fmt.Fprintf(&md, "%s\n\n", ch.Link(c.alt))
		}
	}
	if len(sw.capacity) == 0 {
		return report.Section{Title: "Load sweep", Markdown: md.String(), Charts: charts}, nil
	}
	how := "the highest load of the grid at which it and every lower load keep"
	if sw.searched() {
		how = fmt.Sprintf("found by bisection on load to within %s of capacity, bracketed by the grid; the highest load found to keep", report.Pct(sw.tolerance))
	}
	fmt.Fprintf(&md, "The load each policy sustains: %s at least %s of its interactive jobs within SLO.", how, report.Pct(sw.target))
	if sw.reps > 1 {
		fmt.Fprintf(&md, " Mean over %d replications, with its %.0f%% Student-t interval.", sw.reps, 100*sw.confidence)
	}
	md.WriteString(" The search asks nothing of the batch jobs, which a policy may hold back to serve the interactive ones: " +
		"the last column says how many of all the jobs met their SLO at that load.\n\n")
	t := report.NewTable("policy", ">sustains", ">next load tried", ">all jobs within SLO there", ">search runs")
	for _, p := range d.policies {
		c := sw.capacity[p]
		if c == nil {
			continue
		}
		sus := loadText(sw.sustained(p))
		if slices.Max(c.sustained) == 0 {
			sus = "none"
		}
		t.Add(report.Escape(p), sus, loadText(estimateOf(c.failed, sw.confidence)), pctOrDash(meanOf(c.sloAtSustained)), fmt.Sprint(c.points))
	}
	md.WriteString(t.String())
	return report.Section{Title: "Load sweep", Markdown: md.String(), Charts: charts}, nil
}

// capacitySummary is the summary's sentence on capacity: the load the best
// policy sustains, and how much more that is than each baseline's.
func capacitySummary(sw *sweepResult, baselines []string) string {
	if len(sw.capacity) == 0 {
		return ""
	}
	var b strings.Builder
	what := fmt.Sprintf("the highest offered load, as a fraction of the cluster's capacity, at which at least %s of interactive jobs meet their SLO", report.Pct(sw.target))
	if sw.searched() {
		what += fmt.Sprintf(" (capacity search to within %s", report.Pct(sw.tolerance))
	} else {
		what += " (load sweep grid"
	}
	what += fmt.Sprintf(", first %d jobs", sw.jobs)
	if sw.reps > 1 {
		what += fmt.Sprintf(", mean of %d replications", sw.reps)
	}
	what += ")"
	best := sw.sustained(sw.best)
	if !(best.mean > 0) {
		fmt.Fprintf(&b, "\n**Capacity**, %s: no policy sustains any load tried.\n", what)
		return b.String()
	}
	fmt.Fprintf(&b, "\n**Capacity**, %s: **%s** sustains %s", what, report.Escape(sw.best), loadText(best))
	var against []string
	for _, base := range baselines {
		if base == sw.best || sw.capacity[base] == nil {
			continue
		}
		bs := sw.sustained(base)
		if !(bs.mean > 0) {
			c := sw.capacity[base]
			against = append(against, fmt.Sprintf("%s sustains none of the loads tried (at best %s of its interactive jobs within SLO, at %s)",
				report.Escape(base), report.Pct(c.peak), report.Pct(c.peakLoad)))
			continue
		}
		r := sw.ratios[base]
		text := fmt.Sprintf("%s %s's %s", report.Ratio(r.mean), report.Escape(base), loadText(bs))
		if r.hasInterval() && !math.IsInf(r.hi, 0) {
			text = fmt.Sprintf("%s (%s … %s) %s's %s", report.Ratio(r.mean), report.Ratio(r.lo), report.Ratio(r.hi), report.Escape(base), loadText(bs))
		}
		against = append(against, text)
	}
	if len(against) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(against, "; "))
	}
	b.WriteString(".\n")
	ranked := slices.Clone(sw.order)
	slices.SortStableFunc(ranked, func(x, y string) int { return cmp.Compare(sw.sustained(y).mean, sw.sustained(x).mean) })
	var each []string
	for _, p := range ranked {
		each = append(each, fmt.Sprintf("%s %s", report.Escape(p), loadText(sw.sustained(p))))
	}
	fmt.Fprintf(&b, "\nEvery policy's sustained load: %s.\n", strings.Join(each, ", "))
	return b.String()
}

// loadText writes a load estimate: a percentage of capacity, with its
// interval when it has one; "none" for 0.
func loadText(e estimate) string {
	switch {
	case math.IsInf(e.mean, 1):
		return "none failed"
	case e.mean == 0 && !e.hasInterval():
		return "none"
	case e.hasInterval():
		return fmt.Sprintf("%s (%s … %s)", report.Pct(e.mean), report.Pct(max(e.lo, 0)), report.Pct(e.hi))
	}
	return report.Pct(e.mean)
}

func pctOrDash(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return report.Pct(f)
}

func profileSection(d *reportData) (report.Section, error) {
	if len(d.profile) == 0 {
		return report.Section{Title: "Profile", Markdown: "The profile holds no inference samples.\n"}, nil
	}
	// Where the cluster's devices' runs come from: this machine, or a
	// profile imported from another (a GPU's, say).
	var devices []string
	from := map[string]string{}
	for _, c := range d.profile {
		if _, ok := from[c.device]; !ok {
			devices = append(devices, c.device)
			from[c.device] = c.source
		}
	}
	several := len(devices) > 1
	var series []chart.BandSeries
	cols := []string{"model", "precision", ">threads", ">batch", ">runs", ">P5", ">median", ">P95"}
	if several {
		cols = append([]string{"device"}, cols...)
	}
	t := report.NewTable(cols...)
	for _, c := range d.profile {
		name := c.label()
		if several {
			name = c.device + ": " + name
		}
		series = append(series, chart.BandSeries{Name: name, X: c.batch, Y: c.p50, Lo: c.p5, Hi: c.p95})
		for i := range c.batch {
			row := []string{report.Escape(c.model), report.Escape(c.precision), fmt.Sprint(c.threads), fmt.Sprint(c.batch[i]), fmt.Sprint(c.runs[i]), report.Secs(c.p5[i]), report.Secs(c.p50[i]), report.Secs(c.p95[i])}
			if several {
				row = append([]string{report.Escape(c.device)}, row...)
			}
			t.Add(row...)
		}
	}
	svg, err := chart.Band("Measured latency vs batch size", "batch size (samples)", "latency (s)", series, true, true)
	if err != nil {
		return report.Section{}, fmt.Errorf("chart profile: %w", err)
	}
	c := report.Chart{Name: "profile.svg", SVG: svg}
	origins := make([]string, len(devices))
	for i, dev := range devices {
		where := "measured on this machine"
		if file, ok := strings.CutPrefix(from[dev], "import:"); ok {
			where = "imported from " + report.Code(file)
		}
		origins[i] = report.Escape(dev) + " " + where
	}
	line := "one line per model and precision"
	if several {
		line = "one line per device, model and precision"
	}
	md := c.Link("Measured inference latency vs batch size per model: median, with the band from the 5th to the 95th percentile of the runs") +
		"\n\nThe profile's inference runs alone (no concurrent sessions), " + line + " at the thread count the cluster's devices use (" +
		strings.Join(origins, "; ") + "); the simulator draws every service time from these runs.\n\n" + t.String()
	return report.Section{Title: "Profile", Markdown: md, Charts: []report.Chart{c}}, nil
}

func provenanceSection(d *reportData) (report.Section, error) {
	var b strings.Builder
	b.WriteString("Artifacts:\n\n")
	for _, v := range d.prov.Versions {
		fmt.Fprintf(&b, "- %s\n", report.Code(v))
	}
	if len(d.prov.Machine) > 0 {
		b.WriteString("\nMachine profiled:\n\n")
		t := report.NewTable("property", "value")
		for _, k := range slices.Sorted(maps.Keys(d.prov.Machine)) {
			t.Add(report.Escape(k), report.Escape(d.prov.Machine[k]))
		}
		b.WriteString(t.String())
	}
	if len(d.prov.Commands) > 0 {
		b.WriteString("\nTo reproduce:\n\n" + report.Fence("", strings.Join(d.prov.Commands, "\n")))
	}
	if d.prov.Config != "" {
		b.WriteString("\nConfiguration as used:\n\n" + report.Fence("yaml", strings.TrimRight(d.prov.Config, "\n")))
	}
	return report.Section{Title: "Provenance", Markdown: b.String()}, nil
}

// mapf formats every element of v.
func mapf[T any](v []T, f func(T) string) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}
