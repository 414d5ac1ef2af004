package generate

import (
	"context"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/memstat"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// benchConfig is DefaultConfig with jobs split between the workloads in the
// same 5:2 ratio.
func benchConfig(jobs int64) Config {
	cfg := DefaultConfig()
	cfg.Train.Jobs = jobs * 5 / 7
	cfg.Eval.Jobs = jobs - cfg.Train.Jobs
	return cfg
}

var benchMeta = map[string]string{parquetio.KeyStage: "generate", parquetio.KeyVersion: "bench"}

// BenchmarkGenerate measures the whole stage on 1M jobs: drawing them and
// writing both job files and the statistics.
func BenchmarkGenerate(b *testing.B) {
	const jobs = 1_000_000
	cfg := benchConfig(jobs)
	dir := b.TempDir()
	for b.Loop() {
		if err := Run(context.Background(), cfg, 42, catalog.Zoo(), Output{Dir: dir, Metadata: benchMeta}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkGenerate10M runs 10M jobs once per iteration and reports the peak
// heap, which must stay under heapBound: memory does not grow with the job
// count. Run it with -benchtime 1x.
func BenchmarkGenerate10M(b *testing.B) {
	const jobs = 10_000_000
	cfg := benchConfig(jobs)
	dir := b.TempDir()
	var peak uint64
	for b.Loop() {
		var err error
		peak = max(peak, memstat.PeakHeap(func() {
			err = Run(context.Background(), cfg, 42, catalog.Zoo(), Output{Dir: dir, Metadata: benchMeta})
		}))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	if peak > heapBound {
		b.Errorf("peak heap = %d MiB, want at most %d MiB", peak>>20, heapBound>>20)
	}
}
