package nodeprof

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/opcost"
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

// Profile runs the model under onnxruntime's profiler (ort.Init must have
// succeeded) and maps each kernel to the graph's nodes (see attribute).
// dir holds the trace while it is read.
func Profile(g *onnxgraph.Graph, model []byte, axis int, r Run, dir string) (*opcost.NodeTimes, error) {
	if r.Runs < 1 || r.Batch < 1 || r.Warmup < 0 {
		return nil, fmt.Errorf("nodeprof: profile: want batch and runs of at least 1, got %+v", r)
	}
	p, err := g.Infer(axis, int64(r.Batch))
	if err != nil {
		return nil, fmt.Errorf("nodeprof: profile: %w", err)
	}
	if len(p.Outputs) != 1 {
		return nil, fmt.Errorf("nodeprof: profile: %d outputs, want one", len(p.Outputs))
	}
	tmp, err := os.MkdirTemp(dir, "opcost-")
	if err != nil {
		return nil, fmt.Errorf("nodeprof: profile: %w", err)
	}
	defer os.RemoveAll(tmp)
	prefix := filepath.Join(tmp, "trace")
	s, err := ort.NewSession(model, p.Input.Name, p.Input.Shape, p.Outputs[0].Name, p.Outputs[0].Shape,
		ort.SessionOptions{IntraOpThreads: r.Threads, InterOpThreads: 1, Unoptimized: r.Unoptimized, ProfilePrefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("nodeprof: profile: %w", err)
	}
	in := s.Input()
	for i := range in {
		in[i] = float32(i%13)/13 - 0.5
	}
	for range r.Warmup + r.Runs {
		if err := s.Run(); err != nil {
			s.Close()
			return nil, fmt.Errorf("nodeprof: profile: %w", err)
		}
	}
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("nodeprof: profile: %w", err)
	}
	tr, err := ort.ReadTrace(prefix)
	if err != nil {
		return nil, fmt.Errorf("nodeprof: profile: %w", err)
	}
	if len(tr.Runs) != r.Warmup+r.Runs {
		return nil, fmt.Errorf("nodeprof: profile: the trace has %d runs, want %d", len(tr.Runs), r.Warmup+r.Runs)
	}
	return attribute(p, tr.Runs[r.Warmup:]), nil
}
