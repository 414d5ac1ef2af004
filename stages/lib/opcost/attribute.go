package opcost

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/ort"
)

// nodeOf names the file's node a kernel of the optimised graph came from.
// onnxruntime 1.24 names a fused node after one of the nodes it replaces,
// decorated: "fused Gemm_1" (FusedGemm), "Relu_2_nchwc" (a Conv with its
// Relu, in the blocked NCHWc layout), "Gather_27/GatherSliceToSplitFusion".
// A kernel it made from nothing of the file (ReorderOutput, which turns the
// blocked layout back, or Squeeze_token_5) names no node; ok is then false.
func nodeOf(kernel string, index map[string]int) (int, bool) {
	name := strings.TrimPrefix(kernel, "fused ")
	name, _, _ = strings.Cut(name, "/")
	name = strings.TrimSuffix(name, "_nchwc")
	i, ok := index[name]
	return i, ok
}

// attribute maps the kernels of the fastest run to the pass's nodes: the
// run the least disturbed by whatever else shares the machine, whose
// kernel times are the nodes' own costs; and one run's times, not each
// node's best over the runs, so that the nodes sum to its kernel time. A
// kernel goes to the node it names (nodeOf); where onnxruntime fused
// several nodes into it, those it absorbed ran no kernel of their own, and
// the kernel's time goes to the node of the group with the most FLOPs: the
// Conv, not the Relu whose name the fused kernel carries. The group is the
// named node and the producers feeding it, transitively, that ran no
// kernel. A kernel that names no node (a layout change) goes to the node
// whose kernel ran before it. A per-operator model so learns that a fused
// activation costs nothing.
func attribute(p *onnxgraph.Pass, runs []ort.TracedRun) *NodeTimes {
	index := make(map[string]int, len(p.Nodes))
	producer := make(map[string]int)
	for i, n := range p.Nodes {
		index[n.Name] = i
		for _, o := range n.Outputs {
			producer[o.Name] = i
		}
	}
	r := slices.MinFunc(runs, func(a, b ort.TracedRun) int { return cmp.Compare(a.Dur, b.Dur) })
	ran := make([]bool, len(p.Nodes))
	for _, k := range r.Kernels {
		if i, ok := nodeOf(k.Node, index); ok {
			ran[i] = true
		}
	}
	nt := &NodeTimes{Pass: p, Node: make([]time.Duration, len(p.Nodes)), Kernel: make([]bool, len(p.Nodes)), Run: r.Dur, Kernels: r.KernelSum()}
	last := -1
	for _, k := range r.Kernels {
		i, ok := nodeOf(k.Node, index)
		switch {
		case ok:
			last = heaviest(p, i, ran, producer)
		case last < 0:
			// Nothing ran before it: the first node of the file takes it.
			last = 0
			fallthrough
		default:
			nt.Unmapped += k.Dur
		}
		nt.Node[last] += k.Dur
		nt.Kernel[last] = true
	}
	return nt
}

// heaviest is the node of most FLOPs in i's fused group: i and, through
// its inputs, the producers that ran no kernel (ran), ties to the later
// node in the file.
func heaviest(p *onnxgraph.Pass, i int, ran []bool, producer map[string]int) int {
	best := i
	seen := map[int]bool{i: true}
	stack := []int{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p.Nodes[j].FLOPs > p.Nodes[best].FLOPs {
			best = j
		}
		for _, in := range p.Nodes[j].Inputs {
			k, ok := producer[in.Name]
			if !ok || seen[k] || ran[k] || p.Nodes[k].Folded {
				continue
			}
			seen[k] = true
			stack = append(stack, k)
		}
	}
	return best
}
