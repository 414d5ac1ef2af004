package nodeprof

import (
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/ort"
)

// TestAttributeFusions maps kernels named as onnxruntime 1.24 names its
// fusions: a Conv with its Relu named after the Relu, and a second Conv
// that reads the first's output fused with a residual Add and a Relu,
// named after that Relu (the first kernel must not claim it); a skip layer
// norm named after its Add, the norm after it; a layout change named after
// nothing, which goes to the kernel before it. Each time goes to the
// group's node of most FLOPs, and the fastest run is the one attributed.
func TestAttributeFusions(t *testing.T) {
	node := func(name, op string, flops int64, in ...string) onnxgraph.Node {
		n := onnxgraph.Node{Name: name, Op: op, FLOPs: flops, Outputs: []onnxgraph.Tensor{{Name: name}}}
		for _, i := range in {
			n.Inputs = append(n.Inputs, onnxgraph.Tensor{Name: i})
		}
		return n
	}
	p := &onnxgraph.Pass{Nodes: []onnxgraph.Node{
		node("Conv_1", "Conv", 100, "x"),
		node("Relu_2", "Relu", 1, "Conv_1"),
		node("Conv_3", "Conv", 100, "Relu_2"),
		node("Add_4", "Add", 1, "Conv_3", "Relu_2"),
		node("Relu_5", "Relu", 1, "Add_4"),
		node("Add_6", "Add", 1, "Relu_5", "Relu_2"),
		node("LayerNormalization_7", "LayerNormalization", 5, "Add_6"),
	}}
	us := time.Microsecond
	fast := ort.TracedRun{Dur: 100 * us, Kernels: []ort.Kernel{
		{Node: "Relu_2_nchwc", Op: "Conv", Dur: 30 * us},
		{Node: "Relu_5_nchwc", Op: "Conv", Dur: 40 * us},
		{Node: "ReorderOutput", Op: "ReorderOutput", Dur: 5 * us},
		{Node: "Add_6", Op: "SkipLayerNormalization", Dur: 20 * us},
	}}
	slow := fast
	slow.Dur = 200 * us
	nt := attribute(p, []ort.TracedRun{slow, fast})
	want := []time.Duration{30 * us, 0, 45 * us, 0, 0, 0, 20 * us}
	for i, n := range p.Nodes {
		if nt.Node[i] != want[i] || nt.Kernel[i] != (want[i] > 0) {
			t.Errorf("%s: %v (kernel %v), want %v", n.Name, nt.Node[i], nt.Kernel[i], want[i])
		}
	}
	if nt.Run != 100*us || nt.Kernels != 95*us || nt.Unmapped != 5*us {
		t.Errorf("run %v, kernels %v, unmapped %v; want 100µs, 95µs, 5µs", nt.Run, nt.Kernels, nt.Unmapped)
	}
}
