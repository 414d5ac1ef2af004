package servicetime_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// sample is one measured inference latency, given in milliseconds.
func sample(batch int, latMS float64) profilespec.Sample {
	return profilespec.Sample{Kind: profilespec.KindInference, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
		Device: "cpu", Model: "resnet18", Precision: profilespec.FP32, Batch: int32(batch), Threads: 1,
		Concurrency: 1, LatencyS: latMS / 1000, Source: profilespec.SourceMeasured}
}

// A simulator draws ground-truth service times with u from its own seeded
// generator; policies predict with Mean. Batch 4 lies between the measured
// 1 and 8, batch 16 beyond them.
func ExampleCurve_Quantile() {
	tab, err := servicetime.NewTable([]profilespec.Sample{
		sample(1, 2), sample(1, 3), sample(1, 4),
		sample(8, 9), sample(8, 10), sample(8, 11),
	})
	if err != nil {
		log.Fatal(err)
	}
	c, err := tab.Curve("cpu", "resnet18", profilespec.FP32, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range []int{1, 4, 8, 16} {
		fmt.Printf("batch %2d: median %5.2f ms, mean %5.2f ms\n", b, 1000*c.Quantile(b, 0.5), 1000*c.Mean(b))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		fmt.Printf("draw at batch 4: %.4f ms\n", 1000*c.Quantile(4, r.Float64()))
	}
	// Output:
	// batch  1: median  3.00 ms, mean  3.00 ms
	// batch  4: median  6.00 ms, mean  6.00 ms
	// batch  8: median 10.00 ms, mean 10.00 ms
	// batch 16: median 18.00 ms, mean 18.00 ms
	// draw at batch 4: 6.5294 ms
	// draw at batch 4: 5.8842 ms
	// draw at batch 4: 6.0256 ms
}

// Lanes that share a device each run slower by the measured factor.
func ExampleContention_Factor() {
	rows := []profilespec.Sample{sample(1, 3)}
	for k, medianMS := range map[int]float64{1: 2, 2: 2.4, 4: 4.8} {
		for range k {
			rows = append(rows, profilespec.Sample{Kind: profilespec.KindContention, Backend: "onnxruntime",
				Provider: "CPUExecutionProvider", Device: "cpu", Model: "resnet18", Precision: profilespec.FP32,
				Batch: 1, Threads: 1, Concurrency: int32(k), LatencyS: medianMS / 1000, Source: profilespec.SourceMeasured})
		}
	}
	tab, err := servicetime.NewTable(rows)
	if err != nil {
		log.Fatal(err)
	}
	con, err := tab.Contention("cpu")
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range []int{1, 2, 3, 4, 6} {
		fmt.Printf("%d lanes: each %.2f× slower\n", k, con.Factor(k))
	}
	// Output:
	// 1 lanes: each 1.00× slower
	// 2 lanes: each 1.20× slower
	// 3 lanes: each 1.80× slower
	// 4 lanes: each 2.40× slower
	// 6 lanes: each 3.60× slower
}
