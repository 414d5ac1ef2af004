package fidelity

import (
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// metricRows are the section's numbers for metrics.parquet
// (section.ScopeFidelity): each run's, then each load's ranking.
func metricRows(f *comparison) []section.MetricRow {
	if f == nil {
		return nil
	}
	var rows []section.MetricRow
	for i, r := range f.runs {
		add := func(metric string, v float64) {
			rows = append(rows, section.MetricRow{Scope: section.ScopeFidelity, Policy: r.row.Policy, Load: r.row.Load, Metric: metric, Value: v})
		}
		add("jobs", float64(r.row.Jobs))
		add("jobs_compared", float64(len(r.pairedReal)))
		if r.faster != nil {
			add("sensitivity", r.row.Sensitivity)
			add("sim_faster_p50_e2e_s", r.faster.E2E.P50)
			add("sim_faster_p99_e2e_s", r.faster.E2E.P99)
			add("sim_slower_p50_e2e_s", r.slower.E2E.P50)
			add("sim_slower_p99_e2e_s", r.slower.E2E.P99)
		}
		if len(r.draws) > 0 {
			lo50, hi50 := r.drawSpread(e2eP50)
			lo99, hi99 := r.drawSpread(e2eP99)
			add("draws", float64(len(r.draws)+1))
			add("sim_draws_min_p50_e2e_s", lo50)
			add("sim_draws_max_p50_e2e_s", hi50)
			add("sim_draws_min_p99_e2e_s", lo99)
			add("sim_draws_max_p99_e2e_s", hi99)
		}
		add("variation", r.row.Variation)
		for _, st := range statistics {
			name := strings.ToLower(st.name)
			lo, hi := r.band(st)
			add("band_lo_"+name+"_e2e_s", lo)
			add("band_hi_"+name+"_e2e_s", hi)
			if f.judged(r, st) {
				v := st.of(r.real)
				add("in_band_"+name+"_e2e", boolValue(lo <= v && v <= hi))
			}
		}
		if len(r.repeats) > 0 {
			p50, p99 := r.realPercentiles()
			m50, s50, _ := repeatStats(p50, r.sim.E2E.P50)
			m99, s99, _ := repeatStats(p99, r.sim.E2E.P99)
			add("real_runs", float64(len(p50)))
			add("real_median_p50_e2e_s", m50)
			add("real_median_p99_e2e_s", m99)
			add("real_spread_p50_e2e", s50)
			add("real_spread_p99_e2e", s99)
			add("error_vs_real_median_p50_e2e", relErr(r.sim.E2E.P50, m50))
			add("error_vs_real_median_p99_e2e", relErr(r.sim.E2E.P99, m99))
		}
		for _, q := range []struct {
			name      string
			real, sim float64
		}{{"mean", r.real.E2E.Mean, r.sim.E2E.Mean}, {"p50", r.real.E2E.P50, r.sim.E2E.P50},
			{"p95", r.real.E2E.P95, r.sim.E2E.P95}, {"p99", r.real.E2E.P99, r.sim.E2E.P99}} {
			add("real_"+q.name+"_e2e_s", q.real)
			add("sim_"+q.name+"_e2e_s", q.sim)
			add("error_"+q.name+"_e2e", relErr(q.sim, q.real))
		}
		if p := r.replay; p != nil {
			add("replay_p50_e2e_s", p.E2E.P50)
			add("replay_p99_e2e_s", p.E2E.P99)
			add("error_replay_p50_e2e", relErr(p.E2E.P50, r.real.E2E.P50))
			add("error_replay_p99_e2e", relErr(p.E2E.P99, r.real.E2E.P99))
			add("replay_missed_batches", float64(r.row.ReplayMissed))
		}
		add("real_slo_attainment", 1-r.real.SLOViolation)
		add("sim_slo_attainment", 1-r.sim.SLOViolation)
		add("real_utilization", r.realUtil)
		add("sim_utilization", r.simUtil)
		add("job_median_abs_error", r.jobErr.median)
		add("job_p90_abs_error", r.jobErr.p90)
		add("job_within_10pct", r.jobErr.within)
		switch o, _ := f.verdict(i); o {
		case met, missed:
			add("target_met", boolValue(o == met))
		}
		s := r.src
		add("dispatch_overhead_p50_s", s.dispatchP50)
		add("dispatch_overhead_p99_s", s.dispatchP99)
		add("notice_lag_p50_s", s.lagP50)
		add("notice_lag_p99_s", s.lagP99)
		add("alone_run_over_model", s.alone)
		add("beside_run_over_model", s.contended)
		add("beside_model_over_profile", s.factor)
		add("late_events", float64(r.row.LateEvents))
		add("late_p50_s", r.row.LateP50S)
		add("late_p99_s", r.row.LateP99S)
		add("pages_faulted_in", float64(s.faults))
		add("warm_runs", float64(r.row.WarmRuns))
		add("mean_e2e_gap_s", s.gap)
		for k, info := range sourceInfo {
			add(info.metric, s.contrib[k])
		}
	}
	for _, rk := range f.rankings {
		if !rk.ranked() {
			continue
		}
		rows = append(rows,
			section.MetricRow{Scope: section.ScopeFidelity, Load: rk.load, Metric: "same_winner", Value: boolValue(rk.sameWinner())},
			section.MetricRow{Scope: section.ScopeFidelity, Load: rk.load, Metric: "same_order", Value: boolValue(rk.sameOrder())})
	}
	return rows
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
