package evaluate

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// policiesSection tabulates every policy's summary. Its rows are every
// policy's numbers that the sections after it show too (the differences
// from the baselines, the classes', the devices'), beside the workload's
// lower bounds.
type policiesSection struct{}

var _ section.Section = policiesSection{}

func (policiesSection) Name() string { return "policies" }

// Read reads nothing: the summaries are the stage's.
func (policiesSection) Read(*section.Evaluation) error { return nil }

// Rows lay out the bounds, then each policy's summary, classes, devices
// and differences.
func (policiesSection) Rows(ev *section.Evaluation) []MetricRow {
	return metricRows(ev.Policies, ev.Results, ev.Bounds, ev.Analysis)
}

// Render tabulates the summaries: the objectives as the analysis
// estimates them, with their intervals, the rest as the mean over the
// replications.
func (policiesSection) Render(ev *section.Evaluation) (report.Section, error) {
	// Two tables of a few columns each, rather than one of seventeen that
	// a page cut off at its right edge: what each job saw, then what the
	// cluster did.
	lat := report.NewTable("policy", ">mean e2e", ">P50", ">P95", ">P99", ">max", ">mean wait", ">SLO viol.", ">interactive SLO viol.")
	work := report.NewTable("policy", ">jobs", ">rejected", ">goodput /s", ">jobs/s", ">samples/s", ">makespan", ">gap to bound", ">Jain", ">fairness")
	for i, p := range ev.Policies {
		s := ev.Results[i].Summary
		est := func(metric string, f func(float64) string) string {
			return section.IntervalText(ev.Analysis.Estimate(i, metric), f)
		}
		name := report.Escape(p)
		lat.Add(name, est(metrics.MetricMeanE2E, report.Secs), report.Secs(s.E2E.P50), report.Secs(s.E2E.P95),
			est(metrics.MetricP99E2E, report.Secs), report.Secs(s.E2E.Max), report.Secs(s.Wait.Mean),
			est(metrics.MetricSLOViolation, report.Pct), est(metrics.MetricInteractiveSLOViolation, report.Pct))
		work.Add(name, fmt.Sprint(s.Jobs), fmt.Sprint(s.Rejected), est(metrics.MetricGoodput, report.Num), report.Num(s.Throughput), report.Num(s.SampleThroughput),
			est(metrics.MetricMakespan, report.Secs), report.Pct(s.MakespanGap), report.Num(s.Jain), report.Num(s.Fairness))
	}
	what := "the mean over the replications"
	if ev.Analysis.Reps == 1 {
		what = "the one replication's"
	}
	md := fmt.Sprintf("Every number is %s; an interval follows each estimate that has one (the first paragraph says how they are computed).\n\n", what) +
		"What the jobs saw: latencies are end to end (arrival to end) over the jobs that ran.\n\n" + lat.String() +
		fmt.Sprintf("\nWhat the cluster did. Gap to bound is the makespan over the lower bound (%s, the first replication's) less one; "+
			"the mean latency's bound is %s. Jain is Jain's index over the devices' utilizations (1: all equally busy). "+
			"Fairness is the batch jobs' mean wait over the interactive jobs'.\n\n",
			report.Secs(ev.Bounds.MakespanLBS), report.Secs(ev.Bounds.MeanLatencyLBS)) + work.String()
	return report.Section{Title: "All policies", Markdown: md}, nil
}

// latencyRows adds a latency's five statistics as metrics prefix_mean_s,
// prefix_p50_s and so on.
func latencyRows(base MetricRow, prefix string, l metrics.Latency) []MetricRow {
	var out []MetricRow
	for _, m := range []struct {
		name string
		v    float64
	}{{"mean", l.Mean}, {"p50", l.P50}, {"p95", l.P95}, {"p99", l.P99}, {"max", l.Max}} {
		r := base
		r.Metric, r.Value = m.name+"_"+prefix+"_s", m.v
		out = append(out, r)
	}
	return out
}

// metricRows lays the policies' numbers out as metrics.parquet's rows,
// in a fixed order: bounds, then each policy's summary, classes, devices
// and differences.
func metricRows(policies []string, results []section.Result, b metrics.Bounds, a *section.Analysis) []MetricRow {
	rows := []MetricRow{
		{Scope: section.ScopeBound, Metric: "makespan_lb_s", Value: b.MakespanLBS},
		{Scope: section.ScopeBound, Metric: "mean_latency_lb_s", Value: b.MeanLatencyLBS},
	}
	for i, p := range policies {
		s := results[i].Summary
		first := len(rows)
		pr := MetricRow{Scope: section.ScopePolicy, Policy: p}
		add := func(metric string, v float64) {
			r := pr
			r.Metric, r.Value = metric, v
			rows = append(rows, r)
		}
		add("jobs", float64(s.Jobs))
		add("rejected", float64(s.Rejected))
		rows = append(rows, latencyRows(pr, "e2e", s.E2E)...)
		rows = append(rows, latencyRows(pr, "wait", s.Wait)...)
		rows = append(rows, latencyRows(pr, "service", s.Service)...)
		add(metrics.MetricSLOViolation, s.SLOViolation)
		add(section.MetricGoodputRate, s.Goodput)
		add("throughput_jobs_per_s", s.Throughput)
		add("throughput_samples_per_s", s.SampleThroughput)
		add("makespan_s", s.Makespan)
		add("makespan_gap", s.MakespanGap)
		add("latency_gap", s.LatencyGap)
		add("jain_index", s.Jain)
		add("fairness_batch_over_interactive_wait", s.Fairness)
		for _, c := range s.Classes {
			cr := MetricRow{Scope: section.ScopeClass, Policy: p, Class: c.Class}
			r := cr
			r.Metric, r.Value = "jobs", float64(c.Jobs)
			rows = append(rows, r)
			rows = append(rows, latencyRows(cr, "e2e", c.E2E)...)
			rows = append(rows, latencyRows(cr, "wait", c.Wait)...)
			rows = append(rows, latencyRows(cr, "service", c.Service)...)
			r.Metric, r.Value = metrics.MetricSLOViolation, c.SLOViolation
			rows = append(rows, r)
			r.Metric, r.Value = section.MetricGoodputRate, c.Goodput
			rows = append(rows, r)
		}
		for _, d := range s.Devices {
			dr := MetricRow{Scope: section.ScopeDevice, Policy: p, Device: d.Device}
			r := dr
			r.Metric, r.Value = "busy_lane_s", d.BusyLaneS
			rows = append(rows, r)
			r.Metric, r.Value = "utilization", d.Utilization
			rows = append(rows, r)
		}
		for _, d := range results[i].Diffs {
			r := MetricRow{Scope: section.ScopeDifference, Policy: p, Baseline: d.Baseline, Metric: d.Metric, Value: d.Value,
				Lo: new(d.Lo), Hi: new(d.Hi), Significant: d.Significant}
			rows = append(rows, r)
			r = MetricRow{Scope: section.ScopeDifference, Policy: p, Baseline: d.Baseline, Metric: "ratio_" + d.Metric, Value: d.Ratio}
			rows = append(rows, r)
		}
		estimates(rows[first:], i, a)
	}
	return rows
}

// estimates gives each objective's row among rows, policy i's
// (Objective.Where), the analysis's estimate and its interval, as the
// report's tables give them; NaN bounds where the estimate has none.
func estimates(rows []MetricRow, i int, a *section.Analysis) {
	for _, o := range section.Objectives() {
		scope, class, metric := o.Where()
		for k := range rows {
			if r := &rows[k]; r.Scope == scope && r.Class == class && r.Metric == metric {
				iv := a.Estimate(i, o.Diff)
				r.Value, r.Lo, r.Hi = iv.Mean, new(iv.Lo), new(iv.Hi)
			}
		}
	}
}
