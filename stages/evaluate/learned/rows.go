package learned

import (
	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// metricRows are the learned specs' headline numbers for metrics.parquet
// (section.ScopeLearned): replication 1's serving counts and the paired
// differences from the counterparts that were simulated.
func metricRows(l *runs) []section.MetricRow {
	if l == nil {
		return nil
	}
	var rows []section.MetricRow
	for _, spec := range l.specs {
		s := l.serving[spec][0]
		for _, m := range []struct {
			name string
			v    float64
		}{{"decisions", float64(s.Decisions)}, {"batches", float64(s.Batches)}, {"mean_batch", s.MeanBatch},
			{"migrations", float64(s.Migrations)}, {"cache_hits", float64(s.CacheHits)}, {"hit_rate", s.HitRate},
			{"cache_changed", float64(s.CacheChanged)}, {"evaluated", float64(s.Evaluated)}, {"calls", float64(s.Calls)},
			{"cost_s", s.CostS}, {"cost_p99_s", chargeP99(s)}} {
			rows = append(rows, section.MetricRow{Scope: section.ScopeLearned, Policy: spec, Metric: m.name, Value: m.v})
		}
		for _, c := range l.comparisons {
			if c.learned != spec {
				continue
			}
			for _, d := range c.diffs {
				rows = append(rows, section.MetricRow{Scope: section.ScopeLearned, Policy: spec, Baseline: c.counterpart, Metric: d.Metric,
					Value: d.Value, Lo: new(d.Lo), Hi: new(d.Hi), Significant: d.Significant})
			}
		}
	}
	return rows
}
