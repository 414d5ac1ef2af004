package placementnet

import (
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// benchEval times Eval at batch size batch, each call on its own with
// time.Now, and reports the median and 99th percentile of a call in µs
// besides the mean per decision. Held-out points are cycled so that the
// inputs change between calls, as decisions' do.
func benchEval(b *testing.B, batch int) {
	n, f := mustLoad(b, Options{})
	timeEval(b, n, f.held, batch)
}

// benchGoEval is benchEval for the Go forward pass.
func benchGoEval(b *testing.B, batch int) {
	f := mustTrained(b)
	n, err := LoadGo(f.model, Options{})
	if err != nil {
		b.Fatal(err)
	}
	timeEval(b, n, f.held, batch)
}

// timeEval is benchEval's timing of n on the points held.
func timeEval(b *testing.B, n Evaluator, held [][sim.NumFeatures]float32, batch int) {
	x := held[:len(held)/batch*batch]
	p := make([]float32, batch)
	eval := func(i int) {
		j := i * batch % len(x)
		if err := n.Eval(x[j:j+batch], p); err != nil {
			b.Fatal(err)
		}
	}
	// Let onnxruntime and the caches settle before the timed calls.
	for i := range 2000 {
		eval(i)
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		eval(i)
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	slices.Sort(lat)
	us := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(us(0.5), "p50-µs")
	b.ReportMetric(us(0.99), "p99-µs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/decision")
}

// BenchmarkEvalBatch1 is one uncached decision through onnxruntime: the
// simulator's cost of a decision the cache does not answer.
func BenchmarkEvalBatch1(b *testing.B) { benchEval(b, 1) }

// BenchmarkEvalBatch32 is 32 decisions in one onnxruntime call.
func BenchmarkEvalBatch32(b *testing.B) { benchEval(b, 32) }

// BenchmarkGoEvalBatch1 is one uncached decision through the Go forward
// pass, standardisation included, beside onnxruntime's
// BenchmarkEvalBatch1.
func BenchmarkGoEvalBatch1(b *testing.B) { benchGoEval(b, 1) }

// BenchmarkGoEvalBatch32 is 32 decisions in one GoNetwork.Eval: per
// decision, what one costs alone, as batching saves the Go pass nothing.
func BenchmarkGoEvalBatch32(b *testing.B) { benchGoEval(b, 32) }

// BenchmarkForward is the Go forward pass alone, from standardized
// points, with each kernel the machine has: AVX2's and Go's.
func BenchmarkForward(b *testing.B) {
	f := mustTrained(b)
	n, err := LoadGo(f.model, Options{})
	if err != nil {
		b.Fatal(err)
	}
	z := make([][sim.NumFeatures]float32, len(f.held))
	for i := range z {
		n.Standardize(&f.held[i], &z[i])
	}
	kernels := []struct {
		name string
		avx2 bool
	}{{"avx2", true}, {"go", false}}
	for _, k := range kernels {
		b.Run(k.name, func(b *testing.B) {
			if k.avx2 && !hasAVX2 {
				b.Skip("no AVX2 on this machine")
			}
			was := hasAVX2
			hasAVX2 = k.avx2
			defer func() { hasAVX2 = was }()
			var i int
			for b.Loop() {
				n.forward(&z[i%len(z)])
				i++
			}
		})
	}
}

// benchCache returns a full cache of the default size and the keys it
// holds.
func benchCache(b *testing.B) (*Cache, []Key) {
	c := mustCache(b, CacheOptions{})
	keys := make([]Key, DefaultCacheSize)
	for i := range keys {
		keys[i] = Key{int32(i % 7), int32(i / 7 % 5), int32(i / 35), -3, 0, 1, int32(i % 3), 2, -1, int32(i % 2)}
		c.Put(keys[i], float32(i)/DefaultCacheSize)
	}
	return c, keys
}

// BenchmarkCacheHit is a Get that finds its cell, cycling over all the
// cells of a full cache so that the table and slots are not all in L1.
func BenchmarkCacheHit(b *testing.B) {
	c, keys := benchCache(b)
	var i int
	for b.Loop() {
		if _, ok := c.Get(keys[i%len(keys)]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

// BenchmarkCachePut is a Put of a new cell into a full cache: a miss's
// bookkeeping, an eviction included.
func BenchmarkCachePut(b *testing.B) {
	c, _ := benchCache(b)
	k := Key{1 << 20}
	for b.Loop() {
		c.Put(k, 0.5)
		k[1]++
	}
}

// BenchmarkStandardizeKey is the cost of finding a decision's cell:
// Standardize (ten asinh) and Key.
func BenchmarkStandardizeKey(b *testing.B) {
	n, f := mustLoad(b, Options{MaxBatch: 1})
	c := mustCache(b, CacheOptions{})
	var z [sim.NumFeatures]float32
	var i int
	for b.Loop() {
		n.Standardize(&f.held[i%len(f.held)], &z)
		if _, ok := c.Key(&z); !ok {
			b.Fatal("no key")
		}
		i++
	}
}

// BenchmarkCachedDecision is a decision the cache answers, end to end:
// Standardize, Key and a Get that hits.
func BenchmarkCachedDecision(b *testing.B) {
	n, f := mustLoad(b, Options{MaxBatch: 1})
	c := mustCache(b, CacheOptions{})
	var z [sim.NumFeatures]float32
	for i := range f.held {
		n.Standardize(&f.held[i], &z)
		k, _ := c.Key(&z)
		c.Put(k, 0.5)
	}
	var i int
	for b.Loop() {
		n.Standardize(&f.held[i%len(f.held)], &z)
		k, _ := c.Key(&z)
		if _, ok := c.Get(k); !ok {
			b.Fatal("miss")
		}
		i++
	}
}
