package placement

import (
	"fmt"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// The names of the exported graph's input and output.
const (
	// InputName is the [N, Inputs] float32 input, one decision point a row.
	InputName = "features"
	// OutputName is the [N, 1] float32 output, the probability of migrate.
	OutputName = "p"
)

// ONNX returns the network as an ONNX model (IR 8, opset 17, built with
// stages/lib/zoo's Graph): input "features" [N, 10] float32 with a symbolic
// batch dimension N, output "p" [N, 1] float32. The graph warps its input
// with a Mul and an Asinh node and standardises it with a Sub and a Div
// node, then runs three Gemm layers (nn.Linear's
// layout, transB = 1) with Relu, Relu and Sigmoid. featureNames names the
// input's columns, in order; the model's doc string and those of the mean
// and std initializers list them. The same network and names give the
// same bytes.
func (n *Network) ONNX(featureNames []string) ([]byte, error) {
	b, err := n.onnx(featureNames)
	if err != nil {
		return nil, fmt.Errorf("placement: export onnx: %w", err)
	}
	return b, nil
}

func (n *Network) onnx(names []string) ([]byte, error) {
	if err := checkNames(names); err != nil {
		return nil, err
	}
	if err := n.check(); err != nil {
		return nil, err
	}
	g, err := zoo.NewGraph("placement", zoo.FP32, 0)
	if err != nil {
		return nil, err
	}
	cols := strings.Join(names, ", ")
	h := n.Hidden()
	g.SetDoc(fmt.Sprintf("mlsched placement network: migrate when p > %g. "+
		"Input %s [N, %d] float32, columns: %s. "+
		"Warped as asinh(x * scale) and standardised as (. - mean) / std with the training split's statistics, "+
		"then %d -> %d -> %d -> 1 with ReLU, ReLU and a sigmoid; output %s [N, 1] float32.",
		Threshold, InputName, Inputs, cols, Inputs, h, h, OutputName))

	x := g.Input(InputName, []int64{zoo.Batch, Inputs})
	scale := g.Weights("scale", []int64{Inputs}, n.Scale[:])
	g.Describe(scale, "per-feature scale of the warp asinh(x * scale): linear within 1/scale of zero, logarithmic beyond; columns: "+cols)
	x = g.Op("Asinh", g.Op("Mul", x, scale))
	mean := g.Weights("mean", []int64{Inputs}, n.Mean[:])
	g.Describe(mean, "per-feature mean of the warped training split, subtracted from the warped input; columns: "+cols)
	std := g.Weights("std", []int64{Inputs}, n.Std[:])
	g.Describe(std, "per-feature standard deviation of the warped training split (1 for a feature constant there), dividing the centred input; columns: "+cols)
	x = g.Op("Div", g.Op("Sub", x, mean), std)
	for i := range n.Layers {
		l := &n.Layers[i]
		name := fmt.Sprintf("fc%d", i+1)
		w := g.Weights(name+".weight", []int64{int64(l.Out), int64(l.In)}, l.Weight)
		b := g.Weights(name+".bias", []int64{int64(l.Out)}, l.Bias)
		x = g.Node("Gemm", []string{x, w, b}, zoo.AttrInt("transB", 1))
		if i < len(n.Layers)-1 {
			x = g.Op("Relu", x)
		}
	}
	g.Output(OutputName, g.Op("Sigmoid", x), []int64{zoo.Batch, 1})
	return g.Bytes()
}

// checkNames requires one distinct, non-empty name per input column.
func checkNames(names []string) error {
	if len(names) != Inputs {
		return fmt.Errorf("%d feature names for %d inputs", len(names), Inputs)
	}
	seen := map[string]int{}
	for i, s := range names {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("feature %d has an empty name", i)
		}
		if j, ok := seen[s]; ok {
			return fmt.Errorf("features %d and %d are both named %q", j, i, s)
		}
		seen[s] = i
	}
	return nil
}
