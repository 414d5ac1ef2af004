package train

import (
	"testing"

	"github.com/mlsched/mlsched/pipeline/memstat"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// BenchmarkTrainStage is the whole train stage with its default
// configuration on the measured default profile in testdata and
// generate's default train workload (500,000 jobs): its time and its peak
// heap. The stage must take at most two minutes on a two-core machine.
// Run it with -benchtime 1x.
func BenchmarkTrainStage(b *testing.B) {
	jobs := trainJobs(b, 500_000)
	var peak uint64
	for b.Loop() {
		peak = max(peak, memstat.PeakHeap(func() { run(b, trainspec.DefaultConfig(), jobs) }))
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
