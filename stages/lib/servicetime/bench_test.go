package servicetime

import (
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// benchCurve is a curve shaped like the profile stage's default: batch
// sizes 1, 4 and 16, 20 samples each, latency about 2 ms + 0.5 ms per item
// with a few per cent of noise.
func benchCurve(b *testing.B) *Curve {
	r := rand.New(rand.NewPCG(7, 8))
	var s []profilespec.Sample
	for _, batch := range []int{1, 4, 16} {
		lat := make([]float64, 20)
		for i := range lat {
			lat[i] = (2 + 0.5*float64(batch)) * (1 + 0.05*r.NormFloat64()*r.NormFloat64())
		}
		s = append(s, inference("cpu", "resnet18", profilespec.FP32, batch, 1, lat...)...)
	}
	return mustCurve(b, mustTable(b, s), "cpu", "resnet18", profilespec.FP32, 1)
}

// benchUs are the quantile levels the benchmarks cycle through, drawn in
// advance so that the generator's cost is not counted; a power-of-two
// count lets the loop index them with a mask rather than a division.
func benchUs() []float64 {
	r := rand.New(rand.NewPCG(9, 10))
	us := make([]float64, 1024)
	for i := range us {
		us[i] = r.Float64()
	}
	return us
}

var sink float64

// BenchmarkQuantile measures one ground-truth draw at a measured size, a
// size between two, one above the largest, and sizes 1..32 in turn (the
// mix a simulator sees).
func BenchmarkQuantile(b *testing.B) {
	c := benchCurve(b)
	us := benchUs()
	for _, bc := range []struct {
		name string
		mask int // batch = base + i&mask
		base int
	}{
		{"measured", 0, 4},
		{"between", 0, 9},
		{"above", 0, 30},
		{"mixed", 31, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var acc float64
			i := 0
			for b.Loop() {
				acc += c.Quantile(bc.base+i&bc.mask, us[i&(len(us)-1)])
				i++
			}
			sink = acc
		})
	}
}

// BenchmarkMean measures one prediction, over batch sizes 1..32.
func BenchmarkMean(b *testing.B) {
	c := benchCurve(b)
	var acc float64
	i := 0
	for b.Loop() {
		acc += c.Mean(1 + i&31)
		i++
	}
	sink = acc
}

// BenchmarkFactor measures one contention lookup, over k = 1..8 against
// measured k = 1, 2, 4.
func BenchmarkFactor(b *testing.B) {
	con, err := mustTable(b, fixture()).Contention("cpu")
	if err != nil {
		b.Fatal(err)
	}
	var acc float64
	i := 0
	for b.Loop() {
		acc += con.Factor(1 + i&7)
		i++
	}
	sink = acc
}
