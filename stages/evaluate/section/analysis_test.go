package section

import (
	"math"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
)

// repsOf makes summaries whose metrics are the given per-replication
// values (P99 and SLO violations), and series whose latencies have the
// given means, flat (no transient for MSER to cut).
func repsOf(p99 []float64, slo []float64, mean []float64, jobs int) ([]metrics.Summary, []Series) {
	var reps []metrics.Summary
	var series []Series
	for k := range p99 {
		reps = append(reps, metrics.Summary{E2E: metrics.Latency{Mean: mean[k], P99: p99[k]}, SLOViolation: slo[k], Goodput: 10, Makespan: 100})
		e2e := make([]float64, jobs)
		missed := make([]float64, jobs)
		for i := range e2e {
			e2e[i] = mean[k] + 0.001*float64(i%5-2) // mean[k] exactly, over every five
		}
		series = append(series, Series{E2E: e2e, Missed: missed, InteractiveMissed: missed})
	}
	return reps, series
}

// TestAnalysisAcrossReplications checks the estimates and paired
// differences against the t intervals over the replications' values, and
// that multiple comparisons name a clear best and leave two close ones
// together.
func TestAnalysisAcrossReplications(t *testing.T) {
	a1, s1 := repsOf([]float64{1.0, 1.1, 0.9, 1.05}, []float64{0.10, 0.12, 0.08, 0.11}, []float64{0.5, 0.55, 0.45, 0.52}, 1000)
	a2, s2 := repsOf([]float64{2.0, 2.2, 1.9, 2.1}, []float64{0.30, 0.31, 0.29, 0.33}, []float64{0.9, 0.95, 0.85, 0.92}, 1000)
	a3, s3 := repsOf([]float64{2.01, 2.19, 1.92, 2.08}, []float64{0.31, 0.30, 0.30, 0.32}, []float64{0.91, 0.94, 0.86, 0.93}, 1000)
	a, err := NewAnalysis([][]metrics.Summary{a1, a2, a3}, [][]Series{s1, s2, s3}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range a.Deletions {
		if a.Reps != 4 || d.Deleted != 0 || !d.OK {
			t.Errorf("policy %d: reps %d, deletion %+v: want 4 and none on flat series", i, a.Reps, d)
		}
	}
	want := outputanalysis.TInterval([]float64{1.0, 1.1, 0.9, 1.05}, 0.95)
	if got := a.Estimate(0, metrics.MetricP99E2E); got.Mean != want.Mean || got.Lo != want.Lo || got.Hi != want.Hi {
		t.Errorf("P99 estimate %+v, want %+v", got, want)
	}
	if got := a.Estimate(0, metrics.MetricMeanE2E); math.Abs(got.Mean-0.505) > 1e-12 {
		t.Errorf("mean latency %v, want 0.505", got.Mean)
	}
	d := a.Paired(0, 1, metrics.MetricSLOViolation, "p", "q")
	pw, _ := outputanalysis.PairedTInterval([]float64{0.10, 0.12, 0.08, 0.11}, []float64{0.30, 0.31, 0.29, 0.33}, 0.95)
	if math.Abs(d.Value-pw.Mean) > 1e-15 || d.Lo != pw.Lo || d.Hi != pw.Hi || !d.Significant || d.Policy != "p" || d.Baseline != "q" {
		t.Errorf("paired difference %+v, want %+v, significant", d, pw)
	}
	o, _ := ObjectiveOf(metrics.MetricSLOViolation)
	c, err := a.Best(o, 0)
	if err != nil || c.Verdict != outputanalysis.Separated || c.Best != 0 {
		t.Errorf("MCB on SLO violations = %+v, %v: want policy 0 separated", c, err)
	}
	// Without policy 0, the two others are within noise of each other.
	b, err := NewAnalysis([][]metrics.Summary{a2, a3}, [][]Series{s2, s3}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := b.Best(o, 0); c.Verdict != outputanalysis.Inseparable || len(c.Set) != 2 {
		t.Errorf("MCB of two close policies = %+v, want both inseparable", c)
	}
	if c, _ := b.Best(o, 0.05); c.Verdict != outputanalysis.WithinDelta {
		t.Errorf("MCB of two close policies with a 5 pp indifference zone = %+v, want one within it", c)
	}
	if r := a.Ranked(o); r[0] != 0 {
		t.Errorf("Ranked = %v, want policy 0 first", r)
	}
}

// TestAnalysisOneReplication: batch means over the one run give the mean
// latency and the SLO violations an interval, the P99 none, and multiple
// comparisons no verdict.
func TestAnalysisOneReplication(t *testing.T) {
	a1, s1 := repsOf([]float64{1}, []float64{0.1}, []float64{0.5}, 4000)
	a2, s2 := repsOf([]float64{2}, []float64{0.3}, []float64{0.9}, 4000)
	a, err := NewAnalysis([][]metrics.Summary{a1, a2}, [][]Series{s1, s2}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if iv := a.Estimate(0, metrics.MetricMeanE2E); !(iv.Lo < 0.5 && 0.5 < iv.Hi) || iv.Method != outputanalysis.MethodBatchMeans {
		t.Errorf("mean latency by batch means %+v, want an interval around 0.5", iv)
	}
	if iv := a.Estimate(0, metrics.MetricP99E2E); iv.Mean != 1 || !math.IsNaN(iv.Lo) {
		t.Errorf("P99 of one run %+v, want 1 and no interval", iv)
	}
	if d := a.Paired(1, 0, metrics.MetricMeanE2E, "q", "p"); !(d.Lo < 0.4 && 0.4 < d.Hi) || !d.Significant {
		t.Errorf("paired mean latency %+v, want an interval around 0.4", d)
	}
	o, _ := ObjectiveOf(metrics.MetricMeanE2E)
	if c, _ := a.Best(o, 0); c.Verdict != outputanalysis.NoVerdict {
		t.Errorf("MCB of one replication = %+v, want no verdict", c)
	}
}
