package opcost

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// lawSample is a synthetic configuration whose nodes follow known laws: a
// Conv costs 2e-11·FLOPs^1.1 s, a MatMul 1e-9·bytes^0.8 s, a Relu after a
// Conv is always fused (no kernel), one after a MatMul costs 1 ns per
// byte, and a plain run takes e^0.1·(sum + 1 µs)^1.01 s of the
// profiled nodes' sum: a little more than the nodes, relatively more for a
// large model.
func lawSample(model string, batch, threads, layers int, width int64) Sample {
	s := Sample{Model: model, Batch: batch, Threads: threads}
	var sum float64
	add := func(o Op, sec float64) {
		o.Time = time.Duration(sec * float64(time.Second))
		s.Ops = append(s.Ops, o)
		sum += o.Time.Seconds()
	}
	b := int64(batch)
	for l := range layers {
		w := width * int64(l+1)
		conv := Op{Op: "Conv", FLOPs: 2 * b * w * w * 9, BytesRead: 4 * b * w * 16, BytesWritten: 4 * b * w * 16}
		add(conv, 2e-11*math.Pow(float64(conv.FLOPs), 1.1))
		add(Op{Op: "Relu", After: "Conv", FLOPs: b * w * 16, BytesRead: 4 * b * w * 16, BytesWritten: 4 * b * w * 16, Fused: true}, 0)
		mm := Op{Op: "MatMul", After: "Relu", FLOPs: 2 * b * w * w, BytesRead: 4 * (b*w + w*w), BytesWritten: 4 * b * w}
		add(mm, 1e-9*math.Pow(float64(mm.BytesRead+mm.BytesWritten), 0.8))
		r := Op{Op: "Relu", After: "MatMul", FLOPs: b * w, BytesRead: 4 * b * w, BytesWritten: 4 * b * w}
		add(r, 1e-9*float64(r.BytesRead+r.BytesWritten))
	}
	s.Latency = time.Duration(math.Exp(0.1) * math.Pow(sum+1e-6, 1.01) * float64(time.Second))
	return s
}

// TestLeaveOneModelOutLearnsTheLaws scores the cost model on models of
// the same operators in other sizes than it was fitted on: held out in
// turn, each is predicted within 3% (what the log-linear fit of a power
// law and the rounding to whole nanoseconds leave), and the fit has
// learned that a Relu after a Conv runs no kernel, and the calibration to
// plain runs.
func TestLeaveOneModelOutLearnsTheLaws(t *testing.T) {
	var samples []Sample
	for i, shape := range []struct {
		layers int
		width  int64
	}{{2, 32}, {4, 16}, {3, 64}, {6, 24}, {1, 128}} {
		for _, batch := range []int{1, 4, 16} {
			samples = append(samples, lawSample(fmt.Sprintf("m%d", i), batch, 1, shape.layers, shape.width))
		}
	}
	sc, err := LeaveOneModelOut(samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Configs) != len(samples) {
		t.Fatalf("%d configurations scored, want %d", len(sc.Configs), len(samples))
	}
	for _, c := range sc.Configs {
		if math.Abs(c.Err()) > 0.03 {
			t.Errorf("%s batch %d: predicted %v, measured %v (%+.1f%%)", c.Model, c.Batch, c.Predicted, c.Latency, 100*c.Err())
		}
	}
	if sc.Within10 != 1 || sc.MAPE > 3 {
		t.Errorf("MAPE %.2f%%, %.0f%% within 10%%; want under 3%% and all", sc.MAPE, 100*sc.Within10)
	}
	m, err := Fit(samples)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after string
		want  float64
	}{{"Conv", 1}, {"MatMul", 0}} {
		if got, ok := m.share("Relu", tc.after, 1); got != tc.want || !ok {
			t.Errorf("fused share of Relu after %s = %v, %v; want %v", tc.after, got, ok, tc.want)
		}
	}
	if c := m.Calibration[1]; math.Abs(c[0]-0.1) > 0.05 || math.Abs(c[1]-1.01) > 0.01 {
		t.Errorf("calibration %v, want about [0.1 1.01]", c)
	}
}

func TestFitRefuses(t *testing.T) {
	if _, err := Fit(nil); err == nil {
		t.Error("Fit(nil) = nil error, want one")
	}
	s := lawSample("m", 1, 1, 1, 8)
	s.Latency = 0
	if _, err := Fit([]Sample{s}); err == nil {
		t.Error("Fit(a sample of no latency) = nil error, want one")
	}
	if _, err := LeaveOneModelOut([]Sample{lawSample("m", 1, 1, 1, 8)}); err == nil {
		t.Error("LeaveOneModelOut(one model) = nil error, want one")
	}
	if _, err := Fit([]Sample{lawSample("m", 1, 1, 1, 8), lawSample("m", 4, 1, 1, 8), lawSample("m", 1, 2, 1, 8)}); err == nil || !strings.Contains(err.Error(), "one configuration at 2 threads") {
		t.Errorf("Fit(one configuration at 2 threads) = %v, want it refused: nothing to calibrate to", err)
	}
	m, err := Fit([]Sample{lawSample("m", 1, 1, 1, 8), lawSample("m", 4, 1, 1, 8)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predict(nil, 2); err == nil {
		t.Error("Predict at a thread count never fitted = nil error, want one")
	}
}

// TestFusedShareFollowsFusedPredecessors checks the fallbacks for pairs
// the profile never saw: a Clip after a batch norm that is fused into a
// Conv is taken as after the Conv; an operator never profiled takes the
// share of any operator after its predecessor's.
func TestFusedShareFollowsFusedPredecessors(t *testing.T) {
	m := &Model{Fused: []Fused{
		{Op: "BatchNormalization", After: "Conv", Threads: 1, Share: 1},
		{Op: "Clip", After: "Conv", Threads: 1, Share: 0.9},
		{Op: anyOp, After: "Conv", Threads: 1, Share: 0.8},
		{Op: anyOp, After: "MatMul", Threads: 1, Share: 0.3},
	}}
	ops := []Op{
		{Op: "Conv"},
		{Op: "BatchNormalization", After: "Conv", From: 1},
		{Op: "Clip", After: "BatchNormalization", From: 2},
		{Op: "MatMul", After: "Clip", From: 3},
		{Op: "Selu", After: "MatMul", From: 4},
	}
	want := []float64{0, 1, 0.9, 0, 0.3}
	fused := make([]float64, len(ops))
	for i := range ops {
		fused[i] = m.fusedShare(ops, fused, i, 1)
		if fused[i] != want[i] {
			t.Errorf("fusedShare(%s after %s) = %v, want %v", ops[i].Op, ops[i].After, fused[i], want[i])
		}
	}
}

// TestPredictGraph predicts a zoo graph never profiled from a model fitted
// on the synthetic laws: the same as predicting its inferred nodes, and
// longer at a larger batch.
func TestPredictGraph(t *testing.T) {
	var samples []Sample
	for i, layers := range []int{1, 2, 3} {
		for _, batch := range []int{1, 8} {
			samples = append(samples, lawSample(fmt.Sprintf("m%d", i), batch, 1, layers, 32))
		}
	}
	m, err := Fit(samples)
	if err != nil {
		t.Fatal(err)
	}
	b, err := zoo.Build("resnet18", zoo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := onnxgraph.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var prev time.Duration
	for _, batch := range []int{1, 4} {
		got, err := m.PredictGraph(g, 0, batch, 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := g.Infer(0, int64(batch))
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Predict(OpsOf(p, nil), 1)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || got <= prev {
			t.Errorf("PredictGraph(batch %d) = %v; want %v, above batch 1's %v", batch, got, want, prev)
		}
		prev = got
	}
	if _, err := m.PredictGraph(g, 0, 0, 1); err == nil {
		t.Error("PredictGraph(batch 0) = nil error, want one")
	}
	if _, err := m.PredictGraph(g, 0, 1, 3); err == nil {
		t.Error("PredictGraph(3 threads, never fitted) = nil error, want one")
	}
}
