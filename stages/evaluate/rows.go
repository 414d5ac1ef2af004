package evaluate

import (
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

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

// metricRows lays out every number of the report as metrics.parquet's
// rows, in a fixed order: bounds, then each policy's summary, classes,
// devices and differences, then the sweep.
func metricRows(policies []string, results []policyResult, b metrics.Bounds, sw *sweepResult) []MetricRow {
	rows := []MetricRow{
		{Scope: ScopeBound, Metric: "makespan_lb_s", Value: b.MakespanLBS},
		{Scope: ScopeBound, Metric: "mean_latency_lb_s", Value: b.MeanLatencyLBS},
	}
	for i, p := range policies {
		s := results[i].summary
		pr := MetricRow{Scope: ScopePolicy, Policy: p}
		add := func(metric string, v float64) {
			r := pr
			r.Metric, r.Value = metric, v
			rows = append(rows, r)
		}
		add("jobs", float64(s.Jobs))
		add("rejected", float64(s.Rejected))
		for _, r := range latencyRows(pr, "e2e", s.E2E) {
			if r.Metric == "p99_e2e_s" {
				r.Lo, r.Hi = ptr(s.E2EP99CI.Lo), ptr(s.E2EP99CI.Hi)
			}
			rows = append(rows, r)
		}
		rows = append(rows, latencyRows(pr, "wait", s.Wait)...)
		rows = append(rows, latencyRows(pr, "service", s.Service)...)
		add("slo_violation", s.SLOViolation)
		add("goodput_jobs_per_s", s.Goodput)
		add("throughput_jobs_per_s", s.Throughput)
		add("throughput_samples_per_s", s.SampleThroughput)
		add("makespan_s", s.Makespan)
		add("makespan_gap", s.MakespanGap)
		add("latency_gap", s.LatencyGap)
		add("jain_index", s.Jain)
		add("fairness_batch_over_interactive_wait", s.Fairness)
		for _, c := range s.Classes {
			cr := MetricRow{Scope: ScopeClass, Policy: p, Class: c.Class}
			r := cr
			r.Metric, r.Value = "jobs", float64(c.Jobs)
			rows = append(rows, r)
			rows = append(rows, latencyRows(cr, "e2e", c.E2E)...)
			rows = append(rows, latencyRows(cr, "wait", c.Wait)...)
			rows = append(rows, latencyRows(cr, "service", c.Service)...)
			r.Metric, r.Value = "slo_violation", c.SLOViolation
			rows = append(rows, r)
			r.Metric, r.Value = "goodput_jobs_per_s", c.Goodput
			rows = append(rows, r)
		}
		for _, d := range s.Devices {
			dr := MetricRow{Scope: ScopeDevice, Policy: p, Device: d.Device}
			r := dr
			r.Metric, r.Value = "busy_lane_s", d.BusyLaneS
			rows = append(rows, r)
			r.Metric, r.Value = "utilization", d.Utilization
			rows = append(rows, r)
		}
		for _, d := range results[i].diffs {
			r := MetricRow{Scope: ScopeDifference, Policy: p, Baseline: d.Baseline, Metric: d.Metric, Value: d.Value,
				Lo: ptr(d.Lo), Hi: ptr(d.Hi), Significant: d.Significant}
			rows = append(rows, r)
			r = MetricRow{Scope: ScopeDifference, Policy: p, Baseline: d.Baseline, Metric: "ratio_" + d.Metric, Value: d.Ratio}
			rows = append(rows, r)
		}
	}
	return append(rows, sw.rows(policies)...)
}

// profileRows are the profile section's numbers: each curve's runs and
// percentiles at each batch size.
func profileRows(curves []profileCurve) []MetricRow {
	var rows []MetricRow
	for _, c := range curves {
		for i, b := range c.batch {
			base := MetricRow{Scope: ScopeProfile, Device: c.device, Model: c.model, Precision: c.precision, Threads: c.threads, Batch: int32(b)}
			for _, m := range []struct {
				name string
				v    float64
			}{{"runs", float64(c.runs[i])}, {"p5_latency_s", c.p5[i]}, {"p50_latency_s", c.p50[i]}, {"p95_latency_s", c.p95[i]}} {
				r := base
				r.Metric, r.Value = m.name, m.v
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func ptr(f float64) *float64 { return &f }
