package placementnet

import (
	"errors"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// DefaultMaxBatch is Options.MaxBatch's default: the most decision points
// one Eval takes.
const DefaultMaxBatch = 32

// maxMaxBatch bounds Options.MaxBatch. Every size up to MaxBatch gets a
// binding with tensors of its own, so the memory grows with its square;
// a batch of decisions is a handful of jobs, never thousands.
const maxMaxBatch = 1024

// Options sets how a Network is served. A zero field takes its default.
type Options struct {
	// MaxBatch is the largest number of points one Eval evaluates;
	// default DefaultMaxBatch, at most 1024.
	MaxBatch int
}

// Network is the train stage's placement network loaded into onnxruntime
// for the simulator's migration decisions: one session on the caller's
// thread (one intra-op thread, no pool to wake) with a binding for every
// batch size from 1 to MaxBatch, so that Eval runs any batch in one call
// with tensors bound in advance and allocates nothing.
//
// A Network is used by one goroutine at a time; simulations that run at
// once each load their own.
type Network struct {
	norm standardisation
	sess *ort.Session
	// in[b] and out[b] are the data of the binding of batch size b, bound
	// to run[b]; index 0 is unused.
	in, out [][]float32
	run     []*ort.Binding
}

// Load prepares model, the ONNX bytes of a placement network as the train
// stage exports it, to serve. It checks the graph first and names what is
// wrong: the input "features" [N, 10] and output "p" [N, 1], both float32
// with N symbolic; the initializers "scale", "mean" and "std", each
// float32 [10], finite, scale and std positive; and the standardisation
// (asinh(features × scale) − mean) / std ahead of the first layer, which
// Standardize repeats. ort.Init must have succeeded.
func Load(model []byte, opts Options) (*Network, error) {
	n, err := load(model, opts)
	if err != nil {
		return nil, fmt.Errorf("serving: load placement network: %w", err)
	}
	return n, nil
}

// maxBatch returns MaxBatch, its default if 0, or an error if out of
// bounds.
func (o Options) maxBatch() (int, error) {
	switch {
	case o.MaxBatch == 0:
		return DefaultMaxBatch, nil
	case o.MaxBatch < 0 || o.MaxBatch > maxMaxBatch:
		return 0, fmt.Errorf("max batch %d: want 1 to %d", o.MaxBatch, maxMaxBatch)
	}
	return o.MaxBatch, nil
}

func load(model []byte, opts Options) (*Network, error) {
	var err error
	if opts.MaxBatch, err = opts.maxBatch(); err != nil {
		return nil, err
	}
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	shapes := func(b int) (in, out []int64) {
		return []int64{int64(b), sim.NumFeatures}, []int64{int64(b), 1}
	}
	in1, out1 := shapes(1)
	sess, err := ort.NewSession(model, InputName, in1, OutputName, out1, ort.SessionOptions{IntraOpThreads: 1})
	if err != nil {
		return nil, err
	}
	n := &Network{
		norm: g.norm,
		sess: sess,
		in:   make([][]float32, opts.MaxBatch+1),
		out:  make([][]float32, opts.MaxBatch+1),
		run:  make([]*ort.Binding, opts.MaxBatch+1),
	}
	for b := 1; b <= opts.MaxBatch; b++ {
		inShape, outShape := shapes(b)
		bd, err := sess.Bind(inShape, outShape)
		if err != nil {
			return nil, errors.Join(err, sess.Close())
		}
		n.in[b], n.out[b], n.run[b] = bd.Input(), bd.Output(), bd
	}
	// The first Run of a shape is when onnxruntime plans its memory; doing
	// it here keeps that out of the simulation's first decisions, and a
	// model onnxruntime cannot run fails Load rather than a decision.
	for b := 1; b <= opts.MaxBatch; b++ {
		if err := n.run[b].Run(); err != nil {
			return nil, errors.Join(err, sess.Close())
		}
	}
	return n, nil
}

// MaxBatch returns the largest number of points one Eval takes.
func (n *Network) MaxBatch() int { return len(n.run) - 1 }

// Eval writes the network's probability of migrate for each point of x
// into p, which must be as long as x, with one onnxruntime run at batch
// size len(x), at most MaxBatch. It allocates nothing.
func (n *Network) Eval(x [][sim.NumFeatures]float32, p []float32) error {
	b := len(x)
	switch {
	case b == 0 && len(p) == 0:
		return nil
	case len(p) != b:
		return fmt.Errorf("serving: eval: %d points but room for %d probabilities", b, len(p))
	case b > len(n.run)-1:
		return fmt.Errorf("serving: eval: %d points, at most %d at once", b, len(n.run)-1)
	case n.sess == nil:
		return errors.New("serving: eval: network is closed")
	}
	in := n.in[b]
	for i := range x {
		copy(in[i*sim.NumFeatures:(i+1)*sim.NumFeatures], x[i][:])
	}
	if err := n.run[b].Run(); err != nil {
		return fmt.Errorf("serving: eval: %w", err)
	}
	copy(p, n.out[b])
	return nil
}

// EvalStandardized is Eval: onnxruntime's graph standardizes x itself,
// and z is not read.
func (n *Network) EvalStandardized(x, z [][sim.NumFeatures]float32, p []float32) error {
	if len(z) != len(x) {
		return fmt.Errorf("serving: eval: %d points but %d standardized", len(x), len(z))
	}
	return n.Eval(x, p)
}

// Standardize writes into z what the network's first layer reads for the
// point x: (asinh(x × scale) − mean) / std per feature, with the graph's
// scale, mean and std, in float32 as the graph computes it (the product
// and the quotients in float32, asinh rounded from float64; onnxruntime's
// asinh may differ in the last bit). A Cache keys on z.
func (n *Network) Standardize(x, z *[sim.NumFeatures]float32) { n.norm.apply(x, z) }

// Close frees the onnxruntime session and its tensors; Eval fails after
// it. Closing a closed Network does nothing.
func (n *Network) Close() error {
	if n.sess == nil {
		return nil
	}
	err := n.sess.Close()
	n.sess = nil
	clear(n.in)
	clear(n.out)
	if err != nil {
		return fmt.Errorf("serving: close: %w", err)
	}
	return nil
}
