package placementnet

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// TestSyntheticIsTheTrainedGraph holds what the profile's timing of the
// serving path rests on: a Synthetic network is the train stage's export
// node for node (the same operators in the same order, the same
// initializer shapes, the same input and output), so onnxruntime runs the
// same graph and only the weights differ.
func TestSyntheticIsTheTrainedGraph(t *testing.T) {
	synth, err := Synthetic(1)
	if err != nil {
		t.Fatal(err)
	}
	shape := func(model []byte) []string {
		var m onnxpb.ModelProto
		if err := proto.Unmarshal(model, &m); err != nil {
			t.Fatal(err)
		}
		g := m.GetGraph()
		var out []string
		for _, n := range g.GetNode() {
			out = append(out, n.GetOpType())
		}
		for _, init := range g.GetInitializer() {
			out = append(out, fmt.Sprintf("%s%v", init.GetName(), init.GetDims()))
		}
		for _, vi := range append(g.GetInput(), g.GetOutput()...) {
			out = append(out, vi.GetName())
		}
		return out
	}
	got, want := shape(synth), shape(mustTrained(t).model)
	if !slices.Equal(got, want) {
		t.Errorf("Synthetic's graph:\n%v\nthe trained export's:\n%v", got, want)
	}
}

// TestSyntheticServes loads a Synthetic network as the schedule stage
// loads a trained one, and checks that it answers probabilities at every
// batch size, that its bytes depend on the seed alone, and that another
// seed gives other weights.
func TestSyntheticServes(t *testing.T) {
	a, err := Synthetic(3)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Synthetic(3)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Synthetic(4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, again) {
		t.Error("Synthetic(3) gave different bytes twice")
	}
	if bytes.Equal(a, other) {
		t.Error("Synthetic(3) and Synthetic(4) are the same bytes")
	}
	_, f := mustLoad(t, Options{})
	n, err := Load(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	p := make([]float32, n.MaxBatch())
	for b := 1; b <= n.MaxBatch(); b++ {
		if err := n.Eval(f.held[:b], p[:b]); err != nil {
			t.Fatalf("Eval of %d points: %v", b, err)
		}
		for i, v := range p[:b] {
			if !(v > 0 && v < 1) {
				t.Fatalf("Eval of %d points: p[%d] = %v, want a probability in (0, 1)", b, i, v)
			}
		}
	}
	var z [sim.NumFeatures]float32
	n.Standardize(&f.held[0], &z)
	for k, v := range z {
		if v != v {
			t.Errorf("Standardize: feature %d is NaN", k)
		}
	}
}
