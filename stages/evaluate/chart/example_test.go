package chart_test

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
)

// A load sweep: SLO attainment per policy against offered load, with the
// 99% target as a reference line and the y axis fixed to [0, 1].
func ExampleLines() {
	target, lo, hi := 0.99, 0.0, 1.0
	load := []float64{0.2, 0.4, 0.6, 0.8, 1.0}
	svg, err := chart.Lines("SLO attainment", "offered load", "SLO attainment",
		[]chart.Series{
			{Name: "fifo", X: load, Y: []float64{1, 0.98, 0.81, 0.42, 0.12}},
			{Name: "edf", X: load, Y: []float64{1, 1, 0.97, 0.77, 0.35}},
		},
		chart.LineOptions{HLine: &target, HLineLabel: "99% target", YMin: &lo, YMax: &hi})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(svg[:21]))
	// Output: <?xml version="1.0"?>
}

// Errors name the chart and the series at fault.
func ExampleCDF_error() {
	_, err := chart.CDF("Latency", "latency (s)", []chart.Series{{Name: "fifo", X: []float64{0.1, 0}}}, true)
	fmt.Println(err)
	// Output: chart "Latency": series "fifo": X[1] = 0: value on a log axis is not positive
}
