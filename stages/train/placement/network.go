package placement

import (
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// Inputs is the number of features the network reads per decision point.
// It will become sim.NumFeatures once the simulator declares its features.
const Inputs = 10

// Threshold is the probability above which the network says migrate
// (trainspec.PlacementThreshold).
const Threshold = trainspec.PlacementThreshold

// Layer is one fully connected layer, y = Weight·x + Bias.
type Layer struct {
	// In and Out are the layer's input and output widths.
	In, Out int
	// Weight is [Out, In], row-major: nn.Linear's layout, which the ONNX
	// Gemm reads with transB = 1 (as stages/lib/zoo's mlp does).
	Weight []float32
	// Bias has Out elements.
	Bias []float32
}

// Network is a trained placement network: a warp and a standardisation of
// its inputs, two hidden layers with ReLU and a sigmoid output. Its
// parameters are float32, the exact values the ONNX export writes, so that
// Predict and the exported graph compute the same function.
type Network struct {
	// Scale warps each feature as asinh(x × Scale): about linear within
	// 1/Scale of zero and logarithmic beyond, either sign. Decision
	// features span microseconds to minutes; without the warp, the long
	// tail sets the standard deviation and every short time is squeezed
	// near zero, where the decisions are made.
	Scale [Inputs]float32
	// Mean and Std standardise the warped features, from the training
	// split: the first layer sees (asinh(x × Scale) − Mean) / Std,
	// computed in float32 as the graph computes it. A feature that is
	// constant on the training split has Std 1, so it reaches the first
	// layer as zero.
	Mean, Std [Inputs]float32
	// Layers are the hidden layers (each followed by ReLU) and the output
	// layer (followed by a sigmoid), in order.
	Layers [3]Layer
}

// Hidden returns the width of the hidden layers.
func (n *Network) Hidden() int { return n.Layers[0].Out }

// Predict returns the probability of migrate for each row of x. The
// standardisation is computed in float32 and the layers in float64 from the
// float32 parameters, which agrees with onnxruntime's float32 graph to
// about 1e-7.
func (n *Network) Predict(x [][Inputs]float32) []float64 {
	p := make([]float64, len(x))
	f := n.newForward()
	for i := range x {
		p[i] = sigmoid(f.logit(&x[i]))
	}
	return p
}

// forward holds the scratch space of Predict's forward pass, so that rows
// cost no allocation.
type forward struct {
	n      *Network
	u      [Inputs]float64
	h1, h2 []float64
}

func (n *Network) newForward() *forward {
	return &forward{n: n, h1: make([]float64, n.Layers[0].Out), h2: make([]float64, n.Layers[1].Out)}
}

// logit returns the output layer's value for one row, before the sigmoid.
func (f *forward) logit(x *[Inputs]float32) float64 {
	n := f.n
	for k := range Inputs {
		f.u[k] = float64((warp(x[k], n.Scale[k]) - n.Mean[k]) / n.Std[k])
	}
	dense(f.h1, &n.Layers[0], f.u[:])
	relu(f.h1)
	dense(f.h2, &n.Layers[1], f.h1)
	relu(f.h2)
	var out [1]float64
	dense(out[:], &n.Layers[2], f.h2)
	return out[0]
}

// warp is asinh(x × scale) in float32, as the graph's Mul and Asinh
// compute it (to the last bit or so: onnxruntime's asinh is its own).
func warp(x, scale float32) float32 { return float32(math.Asinh(float64(x * scale))) }

// dense writes l applied to x into y.
func dense(y []float64, l *Layer, x []float64) {
	for j := range y {
		w := l.Weight[j*l.In : (j+1)*l.In]
		s := float64(l.Bias[j])
		for k, v := range x {
			s += float64(w[k]) * v
		}
		y[j] = s
	}
}

// relu sets the negative elements of x to zero, without a branch: half
// of them are negative, at random, which defeats branch prediction.
func relu(x []float64) {
	for i, v := range x {
		b := math.Float64bits(v)
		x[i] = math.Float64frombits(b &^ -(b >> 63))
	}
}

// sigmoid is 1/(1+e^−z), written so that neither branch overflows.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// check reports a network whose shapes do not chain Inputs → hidden →
// hidden → 1, or whose parameters are not finite, as one built by hand or
// changed after training might be.
func (n *Network) check() error {
	in := Inputs
	for i := range n.Layers {
		l := &n.Layers[i]
		switch {
		case l.In != in:
			return fmt.Errorf("layer %d reads %d inputs, want %d", i+1, l.In, in)
		case l.Out < 1 || (i == len(n.Layers)-1 && l.Out != 1):
			return fmt.Errorf("layer %d has %d outputs", i+1, l.Out)
		case len(l.Weight) != l.In*l.Out || len(l.Bias) != l.Out:
			return fmt.Errorf("layer %d has %d weights and %d biases for %d×%d", i+1, len(l.Weight), len(l.Bias), l.Out, l.In)
		}
		for _, vs := range [][]float32{l.Weight, l.Bias} {
			for _, v := range vs {
				if !finite32(v) {
					return fmt.Errorf("layer %d has a parameter %v", i+1, v)
				}
			}
		}
		in = l.Out
	}
	for k := range Inputs {
		if !finite32(n.Scale[k]) || n.Scale[k] <= 0 {
			return fmt.Errorf("feature %d is warped with scale %v", k, n.Scale[k])
		}
		if !finite32(n.Mean[k]) || !finite32(n.Std[k]) || n.Std[k] <= 0 {
			return fmt.Errorf("feature %d is standardised with mean %v and std %v", k, n.Mean[k], n.Std[k])
		}
	}
	return nil
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
