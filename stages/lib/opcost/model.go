package opcost

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
)

// Op is one node of a profiled configuration as the cost model sees it:
// its operator, its shapes' figures and the time the profile gave it.
type Op struct {
	Op string
	// Name is the node's name in the file.
	Name string `json:",omitempty"`
	// After is the operator of the node that computes its first input
	// that changes from run to run, "" for the graph's input: what it
	// may be fused into.
	After string
	// From is 1 + the index, in the same list, of the node After names;
	// 0 where After is "".
	From         int
	FLOPs        int64
	BytesRead    int64
	BytesWritten int64
	// Fused marks a node the profile found no kernel for: fused into
	// another's, or folded away.
	Fused bool
	// Time is the node's kernel time, in whole microseconds.
	Time time.Duration
}

// Sample is one profiled configuration of a model: its nodes that run
// (folded ones cost nothing per run and are left out) and the latency a
// plain run measured for it.
type Sample struct {
	Model          string
	Batch, Threads int
	Ops            []Op
	// Latency is the configuration's measured latency, the figure a
	// prediction is scored against.
	Latency time.Duration
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

// OpsOf lists a pass's nodes that run per run, with their times where nt
// holds them (nil for a model to predict).
func OpsOf(p *onnxgraph.Pass, nt *NodeTimes) []Op {
	var ops []Op
	producer := map[string]int{} // tensor → index in ops
	for i, n := range p.Nodes {
		if n.Folded {
			continue
		}
		o := Op{Op: n.Op, Name: n.Name, FLOPs: n.FLOPs, BytesRead: n.BytesRead, BytesWritten: n.BytesWritten}
		for _, in := range n.Inputs {
			if j, ok := producer[in.Name]; ok {
				o.After, o.From = ops[j].Op, j+1
				break
			}
		}
		for _, out := range n.Outputs {
			producer[out.Name] = len(ops)
		}
		if nt != nil {
			o.Time, o.Fused = nt.Node[i], !nt.Kernel[i]
		}
		ops = append(ops, o)
	}
	return ops
}

// features are a node's cost terms in log space: a kernel's time grows as
// a power of its FLOPs and its bytes moved (a roofline's two limits,
// Williams et al., CACM 2009, blended by the fit), each operator with its
// own exponents. Logs keep the fit's relative error even from a 1 µs
// activation to a 100 ms convolution.
func features(o Op) [3]float64 {
	return [3]float64{1, math.Log1p(float64(o.FLOPs)), math.Log1p(float64(o.BytesRead + o.BytesWritten))}
}

// Coef is one operator's fitted cost at one thread count: the log-linear
// time of its kernel, and the share of its nodes that ran none (fused
// into the node before, or folded by the runtime's optimisations).
type Coef struct {
	Op      string
	Threads int
	// Log are ln(seconds) = Log[0] + Log[1]·ln(1+FLOPs) + Log[2]·ln(1+bytes).
	Log [3]float64
}

// Fused is the share of nodes of an operator after another (Op.After)
// that the profile found fused away, at one thread count.
type Fused struct {
	Op, After string
	Threads   int
	Share     float64
}

// Model predicts a configuration's latency from the sum of its nodes'
// expected costs, calibrated to plain runs at its thread count.
type Model struct {
	// Coefs are the per-operator costs, by thread count then operator;
	// an operator of no Coef takes its thread count's Other.
	Coefs []Coef
	// Other is the cost fitted to every node, for an operator too rarely
	// seen for its own (fewer than minNodes), by thread count.
	Other []Coef
	// Fused are the shares of nodes that ran no kernel, by operator and
	// the operator before it, by operator alone (After "*"), and by the
	// operator before alone (Op "*").
	Fused []Fused
	// Calibration turns the nodes' summed costs into a plain run's
	// latency, by thread count: ln(latency) = c[0] + c[1]·ln(sum + 1 µs).
	// It holds the executor's per-run work, which dominates a model of
	// microseconds, and undoes the profiler's rounding to whole
	// microseconds and its own cost per kernel, which inflate a small
	// model's kernels and not a large one's: a fixed overhead plus the
	// sum (nn-Meter's form) predicted the held-out MLPs and CNNs worse.
	Calibration map[int][2]float64
}

// resolution is the profiler's: a kernel given 0 took under 1 µs, and is
// fitted as half of one.
const resolution = time.Microsecond

// minNodes is the fewest nodes an operator needs for costs of its own.
const minNodes = 3

// anyOp names the pooled fit of rare operators and the fused share of an
// operator after any other.
const anyOp = "*"

// ridge keeps the log-linear fits defined where an operator's FLOPs and
// bytes move together (an element-wise operator's are proportional).
const ridge = 1e-6

// Fit learns the per-operator costs from the samples' nodes: a
// least-squares fit of ln(time) on features for the nodes that ran a
// kernel, the share that ran none, and the Calibration as the
// least-squares fit of ln(latency) on the log of the nodes' summed times.
func Fit(samples []Sample) (*Model, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("opcost: fit: no samples")
	}
	type key struct {
		op, after string
		threads   int
	}
	rows := map[key][][4]float64{}
	fused := map[key][2]int{} // zero times, nodes
	over := map[int][][4]float64{}
	for _, s := range samples {
		if s.Latency <= 0 {
			return nil, fmt.Errorf("opcost: fit: %s batch %d threads %d: latency %v", s.Model, s.Batch, s.Threads, s.Latency)
		}
		var kernels time.Duration
		for _, o := range s.Ops {
			kernels += o.Time
			zero := 0
			if o.Fused {
				zero = 1
			}
			for _, k := range []key{{o.Op, o.After, s.Threads}, {o.Op, anyOp, s.Threads}, {anyOp, o.After, s.Threads}} {
				f := fused[k]
				fused[k] = [2]int{f[0] + zero, f[1] + 1}
			}
			if zero == 1 {
				continue
			}
			t := o.Time
			if t <= 0 {
				t = resolution / 2
			}
			f := features(o)
			r := [4]float64{f[0], f[1], f[2], math.Log(t.Seconds())}
			for _, k := range []key{{o.Op, "", s.Threads}, {anyOp, "", s.Threads}} {
				rows[k] = append(rows[k], r)
			}
		}
		over[s.Threads] = append(over[s.Threads], [4]float64{1, math.Log((kernels + resolution).Seconds()), 0, math.Log(s.Latency.Seconds())})
	}
	m := &Model{Calibration: map[int][2]float64{}}
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.threads, b.threads), cmp.Compare(a.op, b.op))
	}) {
		if len(rows[k]) < minNodes && k.op != anyOp {
			continue
		}
		c := Coef{Op: k.op, Threads: k.threads, Log: solve(rows[k], ridge)}
		if k.op == anyOp {
			m.Other = append(m.Other, c)
		} else {
			m.Coefs = append(m.Coefs, c)
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(fused), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.threads, b.threads), cmp.Compare(a.op, b.op), cmp.Compare(a.after, b.after))
	}) {
		f := fused[k]
		m.Fused = append(m.Fused, Fused{Op: k.op, After: k.after, Threads: k.threads, Share: float64(f[0]) / float64(f[1])})
	}
	for _, t := range slices.Sorted(maps.Keys(over)) {
		rows := over[t]
		if len(rows) < 2 {
			// A line through one point is any line.
			return nil, fmt.Errorf("opcost: fit: one configuration at %d threads, want at least two to calibrate the nodes' sum to", t)
		}
		c := solve(rows, 0)
		m.Calibration[t] = [2]float64{c[0], c[1]}
	}
	return m, nil
}

// Predict is the model's latency for a configuration's nodes at a thread
// count it was fitted at.
func (m *Model) Predict(ops []Op, threads int) (time.Duration, error) {
	c, ok := m.Calibration[threads]
	if !ok {
		return 0, fmt.Errorf("opcost: predict: no costs fitted at %d threads", threads)
	}
	fused := make([]float64, len(ops))
	var nodes float64
	for i, o := range ops {
		fused[i] = m.fusedShare(ops, fused, i, threads)
		f := features(o)
		k := m.coef(o.Op, threads)
		nodes += (1 - fused[i]) * math.Exp(k[0]+k[1]*f[1]+k[2]*f[2])
	}
	sec := math.Exp(c[0] + c[1]*math.Log(nodes+resolution.Seconds()))
	return time.Duration(sec * float64(time.Second)), nil
}

// coef is op's costs at threads, or the pooled ones.
func (m *Model) coef(op string, threads int) [3]float64 {
	for _, c := range m.Coefs {
		if c.Op == op && c.Threads == threads {
			return c.Log
		}
	}
	for _, c := range m.Other {
		if c.Threads == threads {
			return c.Log
		}
	}
	return [3]float64{}
}

// fusedShare is the chance that ops[i] runs no kernel, given the chances
// of the nodes before it (fused): the share of its operator after its
// predecessor's that the profile found fused; failing that, after any;
// failing that, where its predecessor is likely fused itself, as if it
// came after the predecessor's predecessor (a Clip after a batch norm
// that is fused into a Conv is after the Conv); failing that (an operator
// never profiled), the share of any operator after its predecessor's: a
// runtime that fuses Relu and Add into a Conv likely fuses Clip too.
func (m *Model) fusedShare(ops []Op, fused []float64, i, threads int) float64 {
	o := ops[i]
	after, from := o.After, o.From
	for {
		for _, k := range [][2]string{{o.Op, after}, {o.Op, anyOp}} {
			if s, ok := m.share(k[0], k[1], threads); ok {
				return s
			}
		}
		if from == 0 || fused[from-1] < 0.5 {
			break
		}
		after, from = ops[from-1].After, ops[from-1].From
	}
	s, _ := m.share(anyOp, o.After, threads)
	return s
}

// share is the fused share of op after after, if the profile saw it.
func (m *Model) share(op, after string, threads int) (float64, bool) {
	for _, f := range m.Fused {
		if f.Op == op && f.After == after && f.Threads == threads {
			return f.Share, true
		}
	}
	return 0, false
}

// solve is the least-squares fit of the rows' last column on the others,
// with a ridge penalty lambda (relative to the unit-norm columns) on all
// but the first, on the columns that are not all zero (the others get
// 0).
func solve(rows [][4]float64, lambda float64) [3]float64 {
	var idx []int
	for j := range 3 {
		if slices.ContainsFunc(rows, func(r [4]float64) bool { return r[j] != 0 }) {
			idx = append(idx, j)
		}
	}
	return leastSquares(rows, idx, colScale(rows), lambda)
}

// colScale is each feature column's norm, 1 for a column of zeros.
func colScale(rows [][4]float64) [3]float64 {
	var scale [3]float64
	for _, r := range rows {
		for j := range 3 {
			scale[j] += r[j] * r[j]
		}
	}
	for j := range scale {
		scale[j] = math.Sqrt(scale[j])
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	return scale
}

// leastSquares solves the normal equations on the columns idx by Gaussian
// elimination; zeros where they are singular.
func leastSquares(rows [][4]float64, idx []int, scale [3]float64, lambda float64) [3]float64 {
	n := len(idx)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for _, r := range rows {
		for i, ji := range idx {
			xi := r[ji] / scale[ji]
			for k, jk := range idx {
				a[i][k] += xi * r[jk] / scale[jk]
			}
			a[i][n] += xi * r[3]
		}
	}
	for i, j := range idx {
		if j > 0 {
			a[i][i] += lambda
		}
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return [3]float64{}
		}
		a[c], a[p] = a[p], a[c]
		for r := range n {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	var b [3]float64
	for i, j := range idx {
		b[j] = a[i][n] / a[i][i] / scale[j]
	}
	return b
}

// PredictGraph predicts a model from its graph alone, never run: its
// nodes at the batch size along axis (onnxgraph's inference), at a thread
// count the model was fitted at.
func (m *Model) PredictGraph(g *onnxgraph.Graph, axis, batch, threads int) (time.Duration, error) {
	p, err := g.Infer(axis, int64(batch))
	if err != nil {
		return 0, fmt.Errorf("opcost: predict %s at batch %d: %w", g.Name, batch, err)
	}
	return m.Predict(OpsOf(p, nil), threads)
}
