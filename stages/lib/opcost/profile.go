package opcost

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/ort"
)

// Run says how to profile a model: at which batch size, on how many
// intra-op threads, how many runs to discard and how many to keep, and
// whether onnxruntime optimises the graph first.
type Run struct {
	Batch, Threads int
	Warmup, Runs   int
	Unoptimized    bool
}

// NodeTimes is a profiled model at one configuration, from its fastest
// run of those kept (by wall time): each graph node's kernel time (zero for a
// node the runtime folded away or fused into another's kernel), and the
// run's wall time as onnxruntime measured it.
type NodeTimes struct {
	Pass *onnxgraph.Pass
	// Node are the graph's nodes' times, by Pass.Nodes' index.
	Node []time.Duration
	// Kernel marks the nodes a kernel's time went to: onnxruntime's
	// profiler counts whole microseconds, so a node of a small model may
	// run a kernel and be given 0.
	Kernel []bool
	// Run is the run's model_run time; Kernels the sum of its kernels,
	// and of Node. Run − Kernels is the executor's own per-run work.
	Run, Kernels time.Duration
	// Unmapped is the time of kernels that name no node of the file
	// (layout changes), already attributed in Node to the node before.
	Unmapped time.Duration
}

// Profile runs the model under onnxruntime's profiler (ort.Init must have
// succeeded) and maps each kernel to the graph's nodes (see attribute).
// dir holds the trace while it is read.
func Profile(g *onnxgraph.Graph, model []byte, axis int, r Run, dir string) (*NodeTimes, error) {
	if r.Runs < 1 || r.Batch < 1 || r.Warmup < 0 {
		return nil, fmt.Errorf("opcost: profile: want batch and runs of at least 1, got %+v", r)
	}
	p, err := g.Infer(axis, int64(r.Batch))
	if err != nil {
		return nil, fmt.Errorf("opcost: profile: %w", err)
	}
	if len(p.Outputs) != 1 {
		return nil, fmt.Errorf("opcost: profile: %d outputs, want one", len(p.Outputs))
	}
	tmp, err := os.MkdirTemp(dir, "opcost-")
	if err != nil {
		return nil, fmt.Errorf("opcost: profile: %w", err)
	}
	defer os.RemoveAll(tmp)
	prefix := filepath.Join(tmp, "trace")
	s, err := ort.NewSession(model, p.Input.Name, p.Input.Shape, p.Outputs[0].Name, p.Outputs[0].Shape,
		ort.SessionOptions{IntraOpThreads: r.Threads, InterOpThreads: 1, Unoptimized: r.Unoptimized, ProfilePrefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("opcost: profile: %w", err)
	}
	in := s.Input()
	for i := range in {
		in[i] = float32(i%13)/13 - 0.5
	}
	for range r.Warmup + r.Runs {
		if err := s.Run(); err != nil {
			s.Close()
			return nil, fmt.Errorf("opcost: profile: %w", err)
		}
	}
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("opcost: profile: %w", err)
	}
	tr, err := ort.ReadTrace(prefix)
	if err != nil {
		return nil, fmt.Errorf("opcost: profile: %w", err)
	}
	if len(tr.Runs) != r.Warmup+r.Runs {
		return nil, fmt.Errorf("opcost: profile: the trace has %d runs, want %d", len(tr.Runs), r.Warmup+r.Runs)
	}
	return attribute(p, tr.Runs[r.Warmup:]), nil
}
