package zoo

import "math"

// mlp is the placement network's shape: 10 → 64 → 64 → 1 with ReLU, ReLU and
// a sigmoid, on rows of 10 features.
func mlp(g *Graph, x string) string {
	x = g.Op("Relu", dense(g, x, "fc1", 10, 64))
	x = g.Op("Relu", dense(g, x, "fc2", 64, 64))
	return g.Op("Sigmoid", dense(g, x, "fc3", 64, 1))
}

// dense adds a fully connected layer on a [batch, in] tensor as one Gemm,
// with PyTorch's nn.Linear layout (weight [out, in], hence transB) and
// initialization (weight and bias uniform in ±1/√in).
func dense(g *Graph, x, name string, in, out int64) string {
	bound := 1 / math.Sqrt(float64(in))
	w := g.Uniform(name+".weight", []int64{out, in}, bound)
	b := g.Uniform(name+".bias", []int64{out}, bound)
	return g.Node("Gemm", []string{x, w, b}, AttrInt("transB", 1))
}
