package placementnet

import (
	"errors"
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// GoNetwork is the placement network evaluated by a forward pass in Go,
// from the same ONNX bytes as Network: the graph's standardisation
// (Standardize), then its Gemm layers with ReLU and the sigmoid, in
// float32 as the graph computes them. The products are onnxruntime's;
// the order of the sums and the sigmoid's rounding are not, so its
// probabilities agree with Network's to about 1e-7, and within 4e-6 on
// points far outside the training range (TestGoNetworkMatchesNetwork
// holds them to 1e-5), not to the bit. Guarded turns that into
// onnxruntime's decisions.
//
// It exists for speed: a decision costs about 0.2 µs of arithmetic
// (the hidden layers in AVX2 where the CPU has it, layer64) where
// onnxruntime's call costs 5 µs whatever the batch (docs/benchmarks.md).
// It calls no C and needs no library, allocates nothing per decision,
// and a batch costs its points one after another: batching decisions
// saves it nothing.
//
// A GoNetwork is used by one goroutine at a time.
type GoNetwork struct {
	norm *memoStandardisation
	// steps are the hidden layers' chunks (each layer followed by ReLU)
	// in the order forward computes them, each with its slices cut once,
	// at load: a point's pass is then the kernels' calls and little else.
	steps []chunkStep
	// out and outB are the output layer's weights, as long as the last
	// hidden layer's padded width (zeros past its own), and its bias;
	// the sigmoid follows. last is that layer's outputs, which out
	// weighs.
	out, last []float32
	outB      float32
	// z is the standardized point, and h holds two hidden layers'
	// outputs, the widest's padded size: a layer reads one and writes
	// the other. They are fields so that Eval allocates nothing.
	z        [sim.NumFeatures]float32
	h        [2][]float32
	maxBatch int
	closed   bool
}

// chunkStep is one chunk of a hidden layer: where its 64 outputs go, its
// biases and weights, and the previous layer's outputs it reads (nil for
// the first layer, which reads the standardized point).
type chunkStep struct {
	out, b *[lanes]float32
	w, in  []float32
}

// hiddenLayer is a hidden layer as forward computes it: its outputs in
// chunks of 64 (lanes), the last padded with outputs of zero weight and
// bias, which ReLU leaves 0 and the next layer skips.
type hiddenLayer struct {
	in, chunks int
	// wt holds chunk c's weight of input i for output j of the chunk at
	// wt[(c·in + i)·64 + j]: W transposed, so that one input's weights
	// to a chunk's outputs lie together for layer64.
	wt []float32
	b  []float32 // chunks × 64
}

// newHiddenLayer lays d out for forward, its inputs in wide (d.in, or
// the previous layer's padded width).
func newHiddenLayer(d dense, in int) hiddenLayer {
	chunks := (d.out + lanes - 1) / lanes
	l := hiddenLayer{in: in, chunks: chunks, wt: make([]float32, chunks*in*lanes), b: make([]float32, chunks*lanes)}
	copy(l.b, d.b)
	for j := range d.out {
		for i := range d.in {
			l.wt[((j/lanes)*in+i)*lanes+j%lanes] = d.w[j*d.in+i]
		}
	}
	return l
}

var (
	_ Evaluator = (*Network)(nil)
	_ Evaluator = (*GoNetwork)(nil)
)

// LoadGo reads model, the ONNX bytes of a placement network as the train
// stage exports it, for a forward pass in Go. It checks what Load checks,
// and that after the standardisation the graph is Gemm layers (transB =
// 1, finite float32 weights), each hidden one followed by Relu and the
// last, one wide, by Sigmoid, and nothing else: any other graph is an
// error naming the node at fault, never a different function computed.
// opts.MaxBatch bounds Eval's batch as it does Network's, so that either
// serves a caller alike.
func LoadGo(model []byte, opts Options) (*GoNetwork, error) {
	n, err := loadGo(model, opts)
	if err != nil {
		return nil, fmt.Errorf("serving: load placement network in go: %w", err)
	}
	return n, nil
}

func loadGo(model []byte, opts Options) (*GoNetwork, error) {
	maxBatch, err := opts.maxBatch()
	if err != nil {
		return nil, err
	}
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	ls, err := g.layers()
	if err != nil {
		return nil, err
	}
	n := &GoNetwork{norm: newMemoStandardisation(g.norm), maxBatch: maxBatch}
	var hidden []hiddenLayer
	in, widest := sim.NumFeatures, 0
	for _, d := range ls[:len(ls)-1] {
		l := newHiddenLayer(d, in)
		hidden = append(hidden, l)
		in = l.chunks * lanes
		widest = max(widest, in)
	}
	last := ls[len(ls)-1]
	n.out, n.outB = make([]float32, in), last.b[0]
	copy(n.out, last.w)
	n.h = [2][]float32{make([]float32, widest), make([]float32, widest)}
	var prev []float32 // nil: the standardized point
	for k := range hidden {
		l := &hidden[k]
		h := n.h[k&1][:l.chunks*lanes]
		for c := range l.chunks {
			n.steps = append(n.steps, chunkStep{out: (*[lanes]float32)(h[c*lanes:]), b: (*[lanes]float32)(l.b[c*lanes:]),
				w: l.wt[c*l.in*lanes : (c+1)*l.in*lanes], in: prev})
		}
		prev = h
	}
	n.last = prev
	return n, nil
}

// MaxBatch returns the largest number of points one Eval takes.
func (n *GoNetwork) MaxBatch() int { return n.maxBatch }

// Standardize writes into z what the network's first layer reads for the
// point x, exactly as Network.Standardize does.
func (n *GoNetwork) Standardize(x, z *[sim.NumFeatures]float32) { n.norm.apply(x, z) }

// Eval writes the network's probability of migrate for each point of x
// into p, which must be as long as x, at most MaxBatch points. It
// allocates nothing.
func (n *GoNetwork) Eval(x [][sim.NumFeatures]float32, p []float32) error {
	if err := n.check(len(x), len(p)); err != nil {
		return err
	}
	for i := range x {
		n.norm.apply(&x[i], &n.z)
		p[i] = n.forward(&n.z)
	}
	return nil
}

// EvalStandardized is Eval from z, the points' Standardize: x is not
// read.
func (n *GoNetwork) EvalStandardized(x, z [][sim.NumFeatures]float32, p []float32) error {
	if len(z) != len(x) {
		return fmt.Errorf("serving: eval: %d points but %d standardized", len(x), len(z))
	}
	if err := n.check(len(x), len(p)); err != nil {
		return err
	}
	for i := range z {
		p[i] = n.forward(&z[i])
	}
	return nil
}

// check refuses an Eval of b points into p probabilities that the
// network cannot make.
func (n *GoNetwork) check(b, p int) error {
	switch {
	case p != b:
		return fmt.Errorf("serving: eval: %d points but room for %d probabilities", b, p)
	case b > n.maxBatch:
		return fmt.Errorf("serving: eval: %d points, at most %d at once", b, n.maxBatch)
	case n.closed:
		return errors.New("serving: eval: network is closed")
	}
	return nil
}

// Close makes later Evals fail, as Network's do; there is nothing to
// free.
func (n *GoNetwork) Close() error {
	n.closed = true
	return nil
}

// forward returns the probability for the standardized point z: each
// hidden layer's chunks through layer64 (the first) or layer64Sparse (the
// later ones, whose inputs ReLU made); the output layer's sum a chunk at
// a time through dot64, in eight lanes; the sigmoid in float64, rounded
// once.
func (n *GoNetwork) forward(z *[sim.NumFeatures]float32) float32 {
	// ±Inf or NaN: how they propagate through ReLU and the sums depends
	// on the kernels, so GoNetwork does not guess. A feature is not finite
	// when its exponent bits are all set, that is when t below is 0.
	var bad uint32
	for _, v := range z {
		t := ^math.Float32bits(v) & 0x7f800000
		bad |= (t - 1) >> 31
	}
	if bad != 0 {
		return float32(math.NaN())
	}
	for i := range n.steps {
		st := &n.steps[i]
		if st.in == nil {
			layer64(st.out, st.b, z[:], st.w)
		} else {
			// ReLU zeroed about half of these inputs.
			layer64Sparse(st.out, st.b, st.in, st.w)
		}
	}
	var s float32
	for c := 0; c+lanes <= len(n.last); c += lanes {
		s += dot64((*[lanes]float32)(n.last[c:]), (*[lanes]float32)(n.out[c:]))
	}
	logit := n.outB + s
	return float32(1 / (1 + math.Exp(-float64(logit))))
}
