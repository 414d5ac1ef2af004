package nodeprof

import (
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// initORT loads onnxruntime or skips the test (orttest.Library's rules).
func initORT(t testing.TB) {
	t.Helper()
	path, src := orttest.Library(t)
	if _, err := ort.Init(path, src); err != nil {
		t.Fatal(err)
	}
}

// TestProfileAttributesKernelsToNodes profiles zoo models with the graph
// optimised as the profile runs them and checks the mapping: the nodes'
// times sum to the run's kernel time, nearly all of it from kernels that
// name a node of the file, the kernels to most of the run's wall time, and in
// ResNet-18, whose Conv, Add and Relu onnxruntime fuses into one kernel,
// the convolutions carry the time and the fused Relus none.
func TestProfileAttributesKernelsToNodes(t *testing.T) {
	initORT(t)
	for _, name := range []string{"mlp", "resnet18", "vit"} {
		t.Run(name, func(t *testing.T) {
			model, err := zoo.Build(name, zoo.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			g, err := onnxgraph.Parse(model)
			if err != nil {
				t.Fatal(err)
			}
			nt, err := Profile(g, model, 0, Run{Batch: 2, Threads: 1, Warmup: 1, Runs: 3}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var sum time.Duration
			for _, d := range nt.Node {
				sum += d
			}
			if sum != nt.Kernels {
				t.Errorf("nodes sum to %v, kernels to %v", sum, nt.Kernels)
			}
			// The MLP's kernels are microseconds: the run is mostly the
			// executor's overhead.
			if nt.Kernels > nt.Run || name != "mlp" && nt.Kernels < nt.Run*8/10 {
				t.Errorf("kernels %v of a run of %v: want between 80%% and 100%%", nt.Kernels, nt.Run)
			}
			if nt.Unmapped > nt.Kernels/20 {
				t.Errorf("%v of %v in kernels that name no node: want under 5%%", nt.Unmapped, nt.Kernels)
			}
			if name != "resnet18" {
				return
			}
			for i, n := range nt.Pass.Nodes {
				switch {
				case n.Op == "Conv" && nt.Node[i] == 0:
					t.Errorf("%s: no time, want its kernel's", n.Name)
				case n.Op == "Relu" && nt.Node[i] != 0:
					t.Errorf("%s: %v, want none: it is fused into a convolution", n.Name, nt.Node[i])
				}
			}
		})
	}
}

func TestProfileRefusesBadRuns(t *testing.T) {
	model, err := zoo.Build("mlp", zoo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := onnxgraph.Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Run{{Batch: 0, Runs: 1}, {Batch: 1, Runs: 0}, {Batch: 1, Runs: 1, Warmup: -1}} {
		if _, err := Profile(g, model, 0, r, t.TempDir()); err == nil {
			t.Errorf("Profile(%+v) = nil error, want one", r)
		}
	}
}
