package outputanalysis_test

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
)

// Three policies' mean latency (ms) in three replications, each
// replication a workload that every policy saw: MCB names the set that
// cannot be separated from the best and, given an indifference zone of
// 1.5 ms, the policy that is within it of the best.
func ExampleMCB() {
	latency := [][]float64{
		{1, 2, 3}, // fifo
		{2, 4, 3}, // edf
		{5, 5, 8}, // random
	}
	for _, zone := range []float64{0, 1.5} {
		c, err := outputanalysis.MCB(latency, outputanalysis.Minimize, 0.95, zone)
		if err != nil {
			panic(err)
		}
		fmt.Printf("zone %.1f ms: %v, best %d, set %v\n", zone, c.Verdict, c.Best, c.Set)
	}
	// Output:
	// zone 0.0 ms: inseparable, best -1, set [0 1]
	// zone 1.5 ms: within delta, best 0, set [0 1]
}

// The same metric over five replications, and the paired difference of
// two policies: the workload's effect, common to both, cancels.
func ExamplePairedTInterval() {
	edf := []float64{102, 151, 98, 120, 131}
	fifo := []float64{110, 160, 105, 126, 140}
	iv, err := outputanalysis.PairedTInterval(edf, fifo, 0.95)
	if err != nil {
		panic(err)
	}
	fmt.Printf("edf − fifo: %.1f ms [%.1f, %.1f] over %d replications\n", iv.Mean, iv.Lo, iv.Hi, iv.N)
	// Output:
	// edf − fifo: -7.8 ms [-9.4, -6.2] over 5 replications
}
