package predictorfit

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sjwhitworth/golearn/base"
	"github.com/sjwhitworth/golearn/trees"
)

// instances builds golearn's table of the rows x with target y: one float
// attribute per feature, in order, and y as the class attribute. Every
// value is set explicitly, row by row; no golearn view or sampling is
// involved (see the package doc for why).
func instances(x [][]float64, y []float64, names []string) (*base.DenseInstances, error) {
	inst := base.NewDenseInstances()
	specs := make([]base.AttributeSpec, len(names)+1)
	attrs := make([]base.Attribute, len(names)+1)
	for i, n := range names {
		attrs[i] = base.NewFloatAttribute(n)
	}
	attrs[len(names)] = base.NewFloatAttribute("target")
	for i, a := range attrs {
		specs[i] = inst.AddAttribute(a)
	}
	if err := inst.AddClassAttribute(attrs[len(names)]); err != nil {
		return nil, fmt.Errorf("golearn: class attribute: %w", err)
	}
	if err := inst.Extend(len(x)); err != nil {
		return nil, fmt.Errorf("golearn: extend: %w", err)
	}
	for r, row := range x {
		for i, v := range row {
			inst.Set(specs[i], r, base.PackFloatToBytes(v))
		}
		inst.Set(specs[len(names)], r, base.PackFloatToBytes(y[r]))
	}
	return inst, nil
}

// growTree fits golearn's CART regression tree (mean squared error, split
// until maxDepth levels or pure leaves; -1 for no limit) to the rows and
// returns it walked into a tree.
//
// golearn's tree has no minimum leaf size, and when no split lowers the
// error at the root (a constant target, or every row alike) it returns a
// root whose right prediction is zero rather than the mean; that case is
// a single leaf here, without asking golearn.
func growTree(x [][]float64, y []float64, names []string, maxDepth int64) (Tree, error) {
	if splittable(x, y) {
		inst, err := instances(x, y, names)
		if err != nil {
			return Tree{}, err
		}
		g := trees.NewDecisionTreeRegressor(trees.MSE, maxDepth)
		if err := g.Fit(inst); err != nil {
			return Tree{}, fmt.Errorf("golearn: fit regression tree: %w", err)
		}
		if g.RootNode != nil {
			b, err := json.Marshal(g.RootNode)
			if err != nil {
				return Tree{}, fmt.Errorf("golearn: read trained tree: %w", err)
			}
			var root golearnNode
			if err := json.Unmarshal(b, &root); err != nil {
				return Tree{}, fmt.Errorf("golearn: read trained tree: %w", err)
			}
			var t Tree
			walk(&t, &root)
			return t, nil
		}
	}
	var sum float64
	for _, v := range y {
		sum += v
	}
	var t Tree
	addNode(&t, -1, 0, sum/float64(len(y)))
	return t, nil
}

// splittable reports whether some split of the rows can lower the squared
// error: the target varies and so does at least one feature.
func splittable(x [][]float64, y []float64) bool {
	if len(y) < 2 || slices.Min(y) == slices.Max(y) {
		return false
	}
	for _, row := range x[1:] {
		if !slices.Equal(row, x[0]) {
			return true
		}
	}
	return false
}

// golearnNode mirrors the node type of golearn's CART regressor. That
// type is unexported, but its fields, and the RootNode field that holds
// the trained tree, are exported; so encoding/json can copy the tree into
// this mirror (exactly: JSON numbers round-trip float64s) and it can be
// walked and saved from here.
type golearnNode struct {
	Left, Right         *golearnNode
	Threshold           float64
	Feature             int64
	LeftPred, RightPred float64
}

// walk appends n's split to t in preorder and returns its index. In
// golearn every node is a split; a missing child means "predict this
// side's mean", which becomes a leaf here.
func walk(t *Tree, n *golearnNode) int32 {
	i := addNode(t, int32(n.Feature), n.Threshold, 0)
	l := side(t, n.Left, n.LeftPred)
	r := side(t, n.Right, n.RightPred)
	t.Left[i], t.Right[i] = l, r
	return i
}

func side(t *Tree, child *golearnNode, pred float64) int32 {
	if child != nil {
		return walk(t, child)
	}
	return addNode(t, -1, 0, pred)
}

// addNode appends a node with no children yet to t and returns its index.
func addNode(t *Tree, feature int32, threshold, value float64) int32 {
	i := int32(len(t.Feature))
	t.Feature = append(t.Feature, feature)
	t.Threshold = append(t.Threshold, threshold)
	t.Left = append(t.Left, 0)
	t.Right = append(t.Right, 0)
	t.Value = append(t.Value, value)
	return i
}
