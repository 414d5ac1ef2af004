package evaluate

import (
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// TestLatencyChartsWideIntervals renders the latency section of two
// policies whose P99 varies so much over two replications that its
// interval reaches below zero: the log-axis chart leaves that bar out
// rather than failing the stage (a real run did).
func TestLatencyChartsWideIntervals(t *testing.T) {
	ev := &section.Evaluation{Config: DefaultConfig(), Policies: []string{"fifo", "edf"}, Replications: 2}
	var reps [][]metrics.Summary
	var series [][]section.Series
	for _, p99 := range [][2]float64{{0.01, 1}, {0.02, 0.03}} {
		var r []metrics.Summary
		var s []section.Series
		for _, v := range p99 {
			r = append(r, metrics.Summary{E2E: metrics.Latency{Mean: v / 2, P50: v / 4, P95: v / 1.5, P99: v}})
			s = append(s, section.Series{E2E: []float64{v / 2, v / 2}, Missed: []float64{0, 0}})
		}
		reps, series = append(reps, r), append(series, s)
		ev.Results = append(ev.Results, section.Result{Summary: metrics.MeanSummary(r), Reps: r,
			E2ESketch: []float64{p99[0] / 4, p99[0]}, InteractiveSketch: []float64{p99[0] / 4, p99[0]}, WaitSketch: []float64{p99[0] / 8, p99[0] / 2}})
	}
	var err error
	if ev.Analysis, err = section.NewAnalysis(reps, series, 0.95); err != nil {
		t.Fatal(err)
	}
	if iv := ev.Analysis.Estimate(0, metrics.MetricP99E2E); !(iv.Lo < 0) {
		t.Fatalf("fifo's P99 interval %+v does not reach below zero: the test shows nothing", iv)
	}
	if _, err := (latencySection{}).Render(ev); err != nil {
		t.Errorf("Render: %v", err)
	}
}
