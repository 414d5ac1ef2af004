package nodeprof

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/opcost"
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
// Conv, not the Relu whose name the fused kernel carries (heaviest). A
// kernel that names no node (a layout change) goes to the node whose
// kernel ran before it. A per-operator model so learns that a fused
// activation costs nothing.
func attribute(p *onnxgraph.Pass, runs []ort.TracedRun) *opcost.NodeTimes {
	index := make(map[string]int, len(p.Nodes))
	for i, n := range p.Nodes {
		index[n.Name] = i
	}
	r := slices.MinFunc(runs, func(a, b ort.TracedRun) int { return cmp.Compare(a.Dur, b.Dur) })
	group := groups(p, r.Kernels, index)
	nt := &opcost.NodeTimes{Pass: p, Node: make([]time.Duration, len(p.Nodes)), Kernel: make([]bool, len(p.Nodes)), Run: r.Dur, Kernels: r.KernelSum()}
	last := -1
	for _, k := range r.Kernels {
		i, ok := nodeOf(k.Node, index)
		switch {
		case ok:
			last = heaviest(p, group, group[i])
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

// groups assigns each node that runs to the kernel it was fused into, by
// the index of the node that kernel names (-1 for none): first each named
// node and, through inputs, the producers that ran no kernel of their own
// (a Conv fused into the kernel named after its Relu); then, in file
// order, a node still unclaimed that ran no kernel joins its first
// input's producer's group (a LayerNormalization fused into the
// SkipLayerNormalization named after the Add before it). Producers first,
// so that a Conv whose kernel carries the name of a later Relu is not
// claimed by the kernel before it, whose output it reads.
func groups(p *onnxgraph.Pass, kernels []ort.Kernel, index map[string]int) []int {
	group := make([]int, len(p.Nodes))
	for i := range group {
		group[i] = -1
	}
	producer := map[string]int{}
	for i, n := range p.Nodes {
		for _, o := range n.Outputs {
			producer[o.Name] = i
		}
	}
	for _, k := range kernels {
		if i, ok := nodeOf(k.Node, index); ok {
			group[i] = i
		}
	}
	for _, k := range kernels {
		i, ok := nodeOf(k.Node, index)
		if !ok {
			continue
		}
		for stack := []int{i}; len(stack) > 0; {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, in := range p.Nodes[j].Inputs {
				q, ok := producer[in.Name]
				if ok && group[q] < 0 && !p.Nodes[q].Folded {
					group[q] = i
					stack = append(stack, q)
				}
			}
		}
	}
	for i, n := range p.Nodes {
		if group[i] >= 0 || n.Folded {
			continue
		}
		for _, in := range n.Inputs {
			if q, ok := producer[in.Name]; ok && group[q] >= 0 {
				group[i] = group[q]
				break
			}
		}
	}
	return group
}

// heaviest is the node of most FLOPs in group g (the first in the file of
// equal FLOPs).
func heaviest(p *onnxgraph.Pass, group []int, g int) int {
	best := g
	for i, n := range p.Nodes {
		if group[i] == g && n.FLOPs > p.Nodes[best].FLOPs {
			best = i
		}
	}
	return best
}
