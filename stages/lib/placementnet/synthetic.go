package placementnet

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// SyntheticHidden is the width of a Synthetic network's hidden layers: the
// train stage's placement network's (stages/train/placement's
// DefaultHidden), and the zoo's mlp's.
const SyntheticHidden = 64

// Synthetic returns the ONNX bytes of a placement network with seeded
// random weights, in the shape the train stage exports and Load requires:
// the standardisation Div(Sub(Asinh(Mul(features, scale)), mean), std)
// ahead of 10 → 64 → 64 → 1 Gemm layers with ReLU, ReLU and a sigmoid. It
// is what the profile stage times the serving path on before any network
// is trained: its answers mean nothing, but what a call costs depends on
// the graph's shape and the batch, not on the weights. The same seed gives
// the same bytes.
//
// scale and std are drawn from [0.5, 2) and mean from [-1, 1), never the
// ones and zeros onnxruntime's optimiser could remove as no-ops: the
// graph it runs is then the trained network's, node for node.
func Synthetic(seed int64) ([]byte, error) {
	b, err := synthetic(seed)
	if err != nil {
		return nil, fmt.Errorf("placementnet: synthetic network: %w", err)
	}
	return b, nil
}

func synthetic(seed int64) ([]byte, error) {
	g, err := zoo.NewGraph("placement-synthetic", zoo.FP32, seed)
	if err != nil {
		return nil, err
	}
	g.SetDoc(fmt.Sprintf("mlsched placement network with random weights (seed %d), for timing the serving path: "+
		"input %s [N, %d] float32, standardised as (asinh(x * scale) - mean) / std, then %d -> %d -> %d -> 1 with ReLU, ReLU and a sigmoid; output %s [N, 1].",
		seed, InputName, sim.NumFeatures, sim.NumFeatures, SyntheticHidden, SyntheticHidden, OutputName))
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed5e7))
	vector := func(lo, hi float64) []float32 {
		v := make([]float32, sim.NumFeatures)
		for k := range v {
			v[k] = float32(lo + (hi-lo)*r.Float64())
		}
		return v
	}
	dims := []int64{sim.NumFeatures}
	x := g.Input(InputName, []int64{zoo.Batch, sim.NumFeatures})
	x = g.Op("Asinh", g.Op("Mul", x, g.Weights(scaleName, dims, vector(0.5, 2))))
	x = g.Op("Div", g.Op("Sub", x, g.Weights(meanName, dims, vector(-1, 1))), g.Weights(stdName, dims, vector(0.5, 2)))
	widths := []int64{sim.NumFeatures, SyntheticHidden, SyntheticHidden, 1}
	for i := 1; i < len(widths); i++ {
		in, out := widths[i-1], widths[i]
		name := fmt.Sprintf("fc%d", i)
		// nn.Linear's initialisation, as the zoo's mlp has it.
		bound := 1 / math.Sqrt(float64(in))
		w := g.Uniform(name+".weight", []int64{out, in}, bound)
		b := g.Uniform(name+".bias", []int64{out}, bound)
		x = g.Node("Gemm", []string{x, w, b}, zoo.AttrInt("transB", 1))
		if i < len(widths)-1 {
			x = g.Op("Relu", x)
		}
	}
	g.Output(OutputName, g.Op("Sigmoid", x), []int64{zoo.Batch, 1})
	return g.Bytes()
}
