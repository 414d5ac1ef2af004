package placementnet

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// tableEvaluator answers each point's probability from its first
// feature, plus an error that depends on the point, and counts the
// points it was asked about.
type tableEvaluator struct {
	noise  func(x *[sim.NumFeatures]float32) float32
	asked  int
	closed bool
}

func (e *tableEvaluator) Eval(x [][sim.NumFeatures]float32, p []float32) error {
	for i := range x {
		p[i] = x[i][0] + e.noise(&x[i])
		e.asked++
	}
	return nil
}

// EvalStandardized answers from z, as a network whose first layer reads
// the standardized point does.
func (e *tableEvaluator) EvalStandardized(_, z [][sim.NumFeatures]float32, p []float32) error {
	return e.Eval(z, p)
}
func (e *tableEvaluator) MaxBatch() int                              { return 32 }
func (e *tableEvaluator) Standardize(x, z *[sim.NumFeatures]float32) { *z = *x }
func (e *tableEvaluator) Close() error                               { e.closed = true; return nil }

// TestGuardedDecidesAsExact: a fast evaluator off the exact one by up to
// nine tenths of GuardBand either way, on points spread over [0, 1] and
// crowded about the threshold, gives the exact one's decision for every
// point, through Eval and EvalStandardized alike; only the points within
// GuardBand of the threshold, or NaN, go to the exact one, as the raw
// point, and it is loaded once, on the first of them.
func TestGuardedDecidesAsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	x := make([][sim.NumFeatures]float32, 20_000)
	for i := range x {
		if i%2 == 0 {
			x[i][0] = r.Float32()
		} else {
			x[i][0] = 0.5 + float32(r.NormFloat64()*2*GuardBand)
		}
		x[i][1] = float32(r.Float64()*1.8 - 0.9) // the fast one's error, in GuardBands
	}
	x[17][0] = float32(math.NaN())
	// Every other batch goes through EvalStandardized, with z marked in
	// feature 2: exact must be asked about x, never z.
	z := make([][sim.NumFeatures]float32, len(x))
	for i := range x {
		z[i] = x[i]
		z[i][2] = 1
	}
	exact := &tableEvaluator{noise: func(x *[sim.NumFeatures]float32) float32 { return 100 * x[2] }}
	fast := &tableEvaluator{noise: func(x *[sim.NumFeatures]float32) float32 { return x[1] * GuardBand }}
	loads := 0
	g := NewGuarded(fast, func() (Evaluator, error) { loads++; return exact, nil }, 0.5)
	got, want := make([]float32, len(x)), make([]float32, len(x))
	for i := 0; i < len(x); i += 7 {
		j := min(i+7, len(x))
		eval := g.Eval
		if i%14 == 7 {
			eval = func(x [][sim.NumFeatures]float32, p []float32) error { return g.EvalStandardized(x, z[i:j], p) }
		}
		if err := eval(x[i:j], got[i:j]); err != nil {
			t.Fatal(err)
		}
	}
	exactAsked := exact.asked
	if err := exact.Eval(x, want); err != nil {
		t.Fatal(err)
	}
	var near int
	for i := range x {
		if !(math.Abs(float64(x[i][0]+x[i][1]*GuardBand)-0.5) > GuardBand) {
			near++
		}
		if (got[i] > 0.5) != (want[i] > 0.5) {
			t.Errorf("point %d (p %v, fast off by %v bands): guarded %v, exact %v", i, x[i][0], x[i][1], got[i], want[i])
		}
	}
	if loads != 1 || exactAsked != near || g.Referred() != int64(near) || near == 0 {
		t.Errorf("exact loaded %d times, asked about %d points, Referred %d; want once, about the %d within GuardBand of the threshold or NaN",
			loads, exactAsked, g.Referred(), near)
	}
	if err := g.Close(); err != nil || !fast.closed || !exact.closed {
		t.Errorf("Close = %v; fast closed %v, exact closed %v", err, fast.closed, exact.closed)
	}
}

// TestGuardedLoadsLazily: with no point near the threshold the exact
// evaluator is never loaded (nor closed), and a failure to load it is the
// Eval's error once a point needs it.
func TestGuardedLoadsLazily(t *testing.T) {
	fast := &tableEvaluator{noise: func(*[sim.NumFeatures]float32) float32 { return 0 }}
	g := NewGuarded(fast, func() (Evaluator, error) { return nil, errors.New("no onnxruntime here") }, 0.5)
	p := make([]float32, 2)
	if err := g.Eval([][sim.NumFeatures]float32{{0.1}, {0.9}}, p); err != nil || p[0] != 0.1 || p[1] != 0.9 {
		t.Errorf("far from the threshold: Eval = %v, p %v; want fast's answers and no load", err, p)
	}
	err := g.Eval([][sim.NumFeatures]float32{{0.9}, {0.5}}, p)
	if err == nil || !strings.Contains(err.Error(), "no onnxruntime here") {
		t.Errorf("at the threshold, with an exact evaluator that cannot load: Eval = %v", err)
	}
	if err := g.Close(); err != nil || !fast.closed {
		t.Errorf("Close = %v, fast closed %v", err, fast.closed)
	}
}

// TestGuardedNetworks guards the Go forward pass of the default pipeline's
// network with onnxruntime's: the decisions on the wide points are
// onnxruntime's, and few points needed it.
func TestGuardedNetworks(t *testing.T) {
	orttest.Require(t)
	model := trainedModel(t)
	fast, err := LoadGo(model, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := Load(model, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	g := NewGuarded(fast, func() (Evaluator, error) { return Load(model, Options{MaxBatch: 1}) }, placement.Threshold)
	defer g.Close()
	x := widePoints(20_000, 3)
	got, want := make([]float32, len(x)), make([]float32, len(x))
	for i := 0; i < len(x); i += 32 {
		if err := g.Eval(x[i:i+32], got[i:i+32]); err != nil {
			t.Fatal(err)
		}
		if err := exact.Eval(x[i:i+32], want[i:i+32]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range x {
		if (got[i] > placement.Threshold) != (want[i] > placement.Threshold) {
			t.Errorf("point %d: guarded %v, onnxruntime %v", i, got[i], want[i])
		}
	}
	t.Logf("%d of %d points referred to onnxruntime", g.Referred(), len(x))
	if g.Referred() > int64(len(x)/100) {
		t.Errorf("%d of %d points referred: the guard should be rare", g.Referred(), len(x))
	}
}
