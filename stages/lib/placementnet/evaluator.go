package placementnet

import (
	"errors"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Evaluator answers the placement network's question for a batch of
// decision points: the probability of migrate. Network runs it in
// onnxruntime, the serving path the profile times; GoNetwork computes it
// in Go; Guarded makes onnxruntime's decisions at GoNetwork's speed. A
// caller holds an Evaluator and does not care which.
type Evaluator interface {
	// Eval writes the probability of migrate for each point of x (the
	// columns of sim.FeatureNames) into p, as long as x, for at most
	// MaxBatch points.
	Eval(x [][sim.NumFeatures]float32, p []float32) error
	// EvalStandardized is Eval for points whose Standardize the caller
	// has already computed, z[i] of x[i] (for a Cache's key, say): an
	// Evaluator whose first layer reads z (GoNetwork) does not
	// standardize them again, one whose graph standardizes its own input
	// (Network) reads x. Its answers are Eval's, to the bit.
	EvalStandardized(x, z [][sim.NumFeatures]float32, p []float32) error
	// MaxBatch is the most points one Eval takes.
	MaxBatch() int
	// Standardize writes into z what the network's first layer reads for
	// x, the same to the bit for every Evaluator of the same model: a
	// Cache keys on it.
	Standardize(x, z *[sim.NumFeatures]float32)
	// Close frees what the Evaluator holds; Eval fails after it.
	Close() error
}

// GuardBand is how close to the threshold a fast probability must come
// for Guarded to ask the exact Evaluator too: a hundred times the largest
// difference between GoNetwork's and onnxruntime's probabilities that
// TestGoNetworkMatchesNetwork allows (1e-5), and three hundred times the
// largest it finds (3.4e-6, on points far wider than decisions; 5e-7 on
// decision-like ones). Near the threshold of 0.5 the sigmoid's slope is
// 1/4: the band is 4e-3 of logit, the sums' own scale. It costs little:
// 2 of the 20,000 wide points of TestGuardedNetworks fell in it, and 0
// to 2 of a default simulation's 5,000 decisions (docs/benchmarks.md).
const GuardBand = 1e-3

// Guarded is an Evaluator whose decisions at a threshold are those of an
// exact Evaluator, at the speed of a fast one that agrees with it to
// within GuardBand: every point goes to fast, and only a point whose
// probability lies within GuardBand of the threshold (or is NaN) goes to
// exact as well, whose answer replaces fast's. Every other point's answer
// is on the same side of the threshold as exact's would be, so whatever
// compares a probability with the threshold, now or later from a Cache,
// decides as exact would.
//
// The schedule stage guards GoNetwork with Network, so that the learned
// policy's decisions, and with them the simulation, are onnxruntime's to
// the byte. exact is loaded on first need: most simulations never need
// it.
type Guarded struct {
	fast, exact Evaluator
	load        func() (Evaluator, error)
	threshold   float32
	// referred counts the points exact answered.
	referred int64
}

var _ Evaluator = (*Guarded)(nil)

// NewGuarded returns fast guarded at threshold by the Evaluator exact
// loads on first need.
func NewGuarded(fast Evaluator, exact func() (Evaluator, error), threshold float32) *Guarded {
	return &Guarded{fast: fast, load: exact, threshold: threshold}
}

// Eval writes fast's probabilities into p, and exact's for the points
// within GuardBand of the threshold.
func (g *Guarded) Eval(x [][sim.NumFeatures]float32, p []float32) error {
	if err := g.fast.Eval(x, p); err != nil {
		return err
	}
	return g.guard(x, p)
}

// EvalStandardized is Eval with fast reading z; the points exact answers
// go to it as x.
func (g *Guarded) EvalStandardized(x, z [][sim.NumFeatures]float32, p []float32) error {
	if err := g.fast.EvalStandardized(x, z, p); err != nil {
		return err
	}
	return g.guard(x, p)
}

// guard replaces fast's probability p[i] of each point x[i] within
// GuardBand of the threshold (or NaN) with exact's.
func (g *Guarded) guard(x [][sim.NumFeatures]float32, p []float32) error {
	for i, v := range p {
		if d := v - g.threshold; d > GuardBand || d < -GuardBand {
			continue
		}
		if g.exact == nil {
			e, err := g.load()
			if err != nil {
				return fmt.Errorf("serving: guard: %w", err)
			}
			g.exact = e
		}
		if err := g.exact.Eval(x[i:i+1], p[i:i+1]); err != nil {
			return fmt.Errorf("serving: guard: %w", err)
		}
		g.referred++
	}
	return nil
}

// MaxBatch returns fast's.
func (g *Guarded) MaxBatch() int { return g.fast.MaxBatch() }

// Standardize is fast's, the same as exact's for the same model.
func (g *Guarded) Standardize(x, z *[sim.NumFeatures]float32) { g.fast.Standardize(x, z) }

// Referred returns how many points exact answered.
func (g *Guarded) Referred() int64 { return g.referred }

// Close closes both.
func (g *Guarded) Close() error {
	err := g.fast.Close()
	if g.exact != nil {
		err = errors.Join(err, g.exact.Close())
	}
	return err
}
