package evaluate

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// replicationSection gives each headline metric's mean over
// schedule.replications with its Student-t interval, and each policy's
// difference from each baseline paired by replication; left out for a
// single run.
type replicationSection struct {
	// rows are the section's, which it renders; none for a single run.
	rows []MetricRow
}

var _ section.Section = (*replicationSection)(nil)

func (*replicationSection) Name() string { return "replications" }

// Read computes the means and differences across the replications from
// their summaries, which the stage keeps.
func (s *replicationSection) Read(ev *section.Evaluation) error {
	s.rows = replicationRows(ev.Policies, ev.Results, ev.Config.Baselines, ev.Config.Bootstrap.Confidence)
	return nil
}

// Rows are the means and the paired differences.
func (s *replicationSection) Rows(*section.Evaluation) []MetricRow { return s.rows }

// replicated is what the report gives across replications: each of these
// metrics of a summary.
var replicated = []struct {
	metric string
	value  func(metrics.Summary) float64
	format func(float64) string
	delta  func(float64) string
}{
	{metrics.MetricMeanE2E, func(s metrics.Summary) float64 { return s.E2E.Mean }, report.Secs, report.Secs},
	{metrics.MetricP99E2E, func(s metrics.Summary) float64 { return s.E2E.P99 }, report.Secs, report.Secs},
	{metrics.MetricSLOViolation, func(s metrics.Summary) float64 { return s.SLOViolation }, report.Pct, report.PctPts},
	{metrics.MetricInteractiveSLOViolation, func(s metrics.Summary) float64 {
		return section.ClassOf(s, generatespec.ClassInteractive).SLOViolation
	}, report.Pct, report.PctPts},
	{metrics.MetricGoodput, func(s metrics.Summary) float64 { return s.Goodput }, report.Num, report.Num},
	{metrics.MetricMakespan, func(s metrics.Summary) float64 { return s.Makespan }, report.Secs, report.Secs},
}

// tInterval is the mean of x and its Student-t interval at the given
// confidence: mean ± t(1-(1-c)/2, n-1)·sd/√n. With fewer than two values
// the interval is NaN.
func tInterval(x []float64, confidence float64) (mean, lo, hi float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	if len(x) < 2 {
		return mean, math.NaN(), math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(1 - (1-confidence)/2)
	half := t * sd / math.Sqrt(n)
	return mean, mean - half, mean + half
}

// replicationRows are the means over the replications, with their
// intervals, and each policy's paired difference from each baseline.
func replicationRows(policies []string, results []section.Result, baselines []string, confidence float64) []MetricRow {
	if len(results) == 0 || len(results[0].Reps) < 2 {
		return nil
	}
	var rows []MetricRow
	index := map[string]int{}
	for i, p := range policies {
		index[p] = i
	}
	for i, p := range policies {
		for _, m := range replicated {
			x := make([]float64, len(results[i].Reps))
			for k, s := range results[i].Reps {
				x[k] = m.value(s)
			}
			mean, lo, hi := tInterval(x, confidence)
			rows = append(rows, MetricRow{Scope: section.ScopeReplications, Policy: p, Metric: m.metric, Value: mean, Lo: new(lo), Hi: new(hi)})
			for _, b := range baselines {
				j, ok := index[b]
				if !ok || b == p {
					continue
				}
				d := make([]float64, len(x))
				for k := range x {
					d[k] = x[k] - m.value(results[j].Reps[k])
				}
				mean, lo, hi := tInterval(d, confidence)
				rows = append(rows, MetricRow{Scope: section.ScopeReplicationDiff, Policy: p, Baseline: b, Metric: m.metric, Value: mean,
					Lo: new(lo), Hi: new(hi), Significant: lo > 0 || hi < 0})
			}
		}
	}
	return rows
}

// Render shows the replication rows: each metric's mean over
// the replications with its interval, and the paired differences.
func (s *replicationSection) Render(ev *section.Evaluation) (report.Section, error) {
	if len(s.rows) == 0 {
		return report.Section{}, nil
	}
	n := len(ev.Results[0].Reps)
	var b strings.Builder
	fmt.Fprintf(&b, "Each policy was simulated %d times on the same jobs with other seeds (ground-truth draws and random placement; "+
		"schedule.replications). Each cell is the mean over the runs with its %.0f%% Student-t interval; "+
		"a difference is paired by run and reads \"no difference\" when its interval contains zero.\n\n", n, 100*ev.Config.Bootstrap.Confidence)
	head := []string{"policy"}
	for _, m := range replicated {
		head = append(head, ">"+report.Escape(m.metric))
	}
	t := report.NewTable(head...)
	find := func(scope, p, base, metric string) (MetricRow, bool) {
		for _, r := range s.rows {
			if r.Scope == scope && r.Policy == p && r.Baseline == base && r.Metric == metric {
				return r, true
			}
		}
		return MetricRow{}, false
	}
	for _, p := range ev.Policies {
		row := []string{report.Escape(p)}
		for _, m := range replicated {
			r, _ := find(section.ScopeReplications, p, "", m.metric)
			row = append(row, fmt.Sprintf("%s (%s … %s)", m.format(r.Value), m.format(*r.Lo), m.format(*r.Hi)))
		}
		t.Add(row...)
	}
	b.WriteString(t.String())
	for _, base := range ev.Config.Baselines {
		fmt.Fprintf(&b, "\n### Against %s, across runs\n\n", report.Escape(base))
		t := report.NewTable(head...)
		for _, p := range ev.Policies {
			if p == base {
				continue
			}
			row := []string{report.Escape(p)}
			for _, m := range replicated {
				r, ok := find(section.ScopeReplicationDiff, p, base, m.metric)
				if !ok {
					row = append(row, "–")
					continue
				}
				row = append(row, section.DiffText(metrics.Difference{Value: r.Value, Lo: *r.Lo, Hi: *r.Hi, Significant: r.Significant}, m.delta))
			}
			t.Add(row...)
		}
		b.WriteString(t.String())
	}
	return report.Section{Title: "Across replications", Markdown: b.String()}, nil
}
