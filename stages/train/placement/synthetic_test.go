package placement

import (
	"math"
	"math/rand/v2"
)

// Columns of the synthetic decision points.
const (
	colSrcLoad = iota
	colDstLoad
	colGain // src − dst load: the threshold rule's gain
	colIdle
	colBusy
	colCost
	colCPU
	colQueued
	colPad // always 0, as the seed's padding columns are
	colNoise
)

var syntheticNames = []string{"src_load", "dst_load", "gain", "idle_cpus", "busy_cpus", "cost", "cpu", "queued", "pad", "noise"}

// minGain is the threshold rule's setting on the synthetic points.
const minGain = 0.1

// synthetic is a seeded set of decision points labelled by a known
// nonlinear rule with noise near its boundary: the margin is
// m = gain − cost − τ(idle), with τ(idle) = 0.8·(1 − idle/8)² − 0.3, and a
// point migrates with probability σ(m/noise). The Bayes classifier is
// m > 0, and σ(m/noise) is the Bayes posterior.
type synthetic struct {
	x     [][Inputs]float32
	y     []bool
	clean []bool    // m > 0
	post  []float64 // σ(m/noise)
}

func makeSynthetic(n int, noise float64, seed uint64) synthetic {
	r := rand.New(rand.NewPCG(seed, 1))
	s := synthetic{x: make([][Inputs]float32, n), y: make([]bool, n), clean: make([]bool, n), post: make([]float64, n)}
	for i := range n {
		x := &s.x[i]
		src, dst := r.Float64(), r.Float64()
		idle := float64(r.IntN(9))
		x[colSrcLoad] = float32(src)
		x[colDstLoad] = float32(dst)
		x[colGain] = float32(src - dst)
		x[colIdle] = float32(idle)
		x[colBusy] = float32(8 - idle)
		x[colCost] = float32(0.3 * r.Float64())
		x[colCPU] = float32(r.IntN(64))
		x[colQueued] = float32(r.IntN(20))
		x[colNoise] = float32(r.NormFloat64())
		m := margin(x)
		s.clean[i] = m > 0
		s.post[i] = sigmoid(m / noise)
		s.y[i] = r.Float64() < s.post[i]
	}
	return s
}

// margin is the rule's m, on the float32 features the network sees.
func margin(x *[Inputs]float32) float64 {
	tau := 0.8*math.Pow(1-float64(x[colIdle])/8, 2) - 0.3
	return float64(x[colGain]) - float64(x[colCost]) - tau
}

// pick returns the rows idx of s.
func (s synthetic) pick(idx []int) synthetic {
	out := synthetic{x: make([][Inputs]float32, len(idx)), y: make([]bool, len(idx)), clean: make([]bool, len(idx)), post: make([]float64, len(idx))}
	for j, i := range idx {
		out.x[j], out.y[j], out.clean[j], out.post[j] = s.x[i], s.y[i], s.clean[i], s.post[i]
	}
	return out
}

// bayes returns the Bayes classifier's predictions: the true posterior
// as score and probability, and the rule's decision.
func (s synthetic) bayes() Predictions {
	return Predictions{Scorer: "bayes", Score: s.post, P: s.post, Migrate: s.clean}
}
