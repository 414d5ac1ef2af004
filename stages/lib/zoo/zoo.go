package zoo

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// ErrUnknownModel and ErrUnknownPrecision are wrapped by the errors for a
// model name or a precision the zoo does not have.
var (
	ErrUnknownModel     = errors.New("unknown model")
	ErrUnknownPrecision = errors.New("unknown precision")
)

// Options selects the variant of a model Build makes.
type Options struct {
	// Seed picks the random weights; the same seed gives the same bytes.
	Seed int64
	// Precision is the element type of weights and activations, FP32 or
	// FP16; empty means FP32. The model's input and output are fp32 either
	// way.
	Precision string
}

// IO describes a model's input or output tensor, always fp32.
type IO struct {
	// Name is the tensor's name in the graph, for binding it at run time.
	Name string
	// Shape is the tensor's shape, Batch (-1) standing for the batch axis.
	Shape []int64
}

// model is one zoo entry: how to build the network between the graph's
// input and its output, and what the graph differs in from the reference
// model, for its doc string. Its input's and output's names and shapes are
// the catalog's.
type model struct {
	name  string
	build func(g *Graph, x string) string
	note  string
}

// models is the zoo in catalog order, as a literal list for the same reason
// the catalog is one: the order reaches artifacts and reports.
var models = []model{
	{"mlp", mlp, ""},
	{"resnet18", resnet18, "batch norm folded into the convolutions; "},
	{"resnet50", resnet50, "batch norm folded into the convolutions; "},
	{"vit", vitTiny, "GELU built from Erf; "},
}

// Names returns the zoo's model names in catalog order: mlp, resnet18,
// resnet50, vit.
func Names() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.name
	}
	return names
}

// Signature returns the input and output of the model called name. The
// input's per-sample shape is the catalog's.
func Signature(name string) (in, out IO, err error) {
	_, c, err := lookup(name)
	if err != nil {
		return IO{}, IO{}, err
	}
	return IO{Name: c.Input, Shape: c.InputDims(Batch)}, IO{Name: c.Output, Shape: c.OutputDims(Batch)}, nil
}

// Build returns the serialized ONNX ModelProto of the model called name with
// random weights drawn from opts.Seed, stored in opts.Precision. The same
// name and options give byte-identical models.
func Build(name string, opts Options) ([]byte, error) {
	m, c, err := lookup(name)
	if err != nil {
		return nil, err
	}
	g, err := newGraph(name, opts.Precision, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("zoo: build %s: %w", name, err)
	}
	in, out, _ := Signature(name)
	g.SetDoc(fmt.Sprintf("%s; %srandom weights, seed %d; %s inside, fp32 input and output",
		c.Description, m.note, opts.Seed, precisionName(opts.Precision)))
	y := m.build(g, g.Input(in.Name, in.Shape))
	g.Output(out.Name, y, out.Shape)
	b, err := g.serialize()
	if err != nil {
		return nil, fmt.Errorf("zoo: build %s: %w", name, err)
	}
	return b, nil
}

// MatMul returns a model computing Y = A·B for an n×n fp32 input "A" and an
// n×n initializer B, with the n×n fp32 output "Y", in precision, with which
// the profile stage measures the CPU's matrix-multiply throughput (2n³ FLOPs
// per run). B's entries lie in
// ±1/√n so that Y stays near A's magnitude even in fp16; they come from a
// fixed seed, since only the shape matters to throughput.
func MatMul(n int, precision string) ([]byte, error) {
	if n < 1 {
		return nil, fmt.Errorf("zoo: matmul %d: size must be at least 1", n)
	}
	name := fmt.Sprintf("matmul%d", n)
	g, err := newGraph(name, precision, 0)
	if err != nil {
		return nil, fmt.Errorf("zoo: matmul %d: %w", n, err)
	}
	d := int64(n)
	g.SetDoc(fmt.Sprintf("Y = A·B, A an %d×%d input, B a %d×%d initializer; %s inside, fp32 input and output", n, n, n, n, precisionName(precision)))
	a := g.Input("A", []int64{d, d})
	b := g.Uniform("B", []int64{d, d}, 1/math.Sqrt(float64(n)))
	g.Output("Y", g.Op("MatMul", a, b), []int64{d, d})
	out, err := g.serialize()
	if err != nil {
		return nil, fmt.Errorf("zoo: matmul %d: %w", n, err)
	}
	return out, nil
}

// lookup finds a zoo model and its catalog entry.
func lookup(name string) (model, catalog.Model, error) {
	i := slices.IndexFunc(models, func(m model) bool { return m.name == name })
	c, ok := catalog.Zoo().Lookup(name)
	if i < 0 || !ok {
		return model{}, catalog.Model{}, fmt.Errorf("zoo: model %q: %w (valid: %s)", name, ErrUnknownModel, strings.Join(Names(), ", "))
	}
	return models[i], c, nil
}

// precisionName spells out the default precision for doc strings.
func precisionName(p string) string {
	if p == "" {
		return FP32
	}
	return p
}
