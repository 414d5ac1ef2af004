package outputanalysis_test

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
)

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
