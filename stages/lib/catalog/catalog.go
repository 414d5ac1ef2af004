package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/ident"
)

// BytesPerFP32 is the width of the element type every byte figure assumes.
const BytesPerFP32 = 4

// The precisions a model runs in, as every stage names them.
const (
	FP32 = "fp32"
	FP16 = "fp16"
)

// Model is the architectural description of one network in the catalog,
// and a row of the profile's models.parquet. Every byte figure is for fp32
// elements; scale by the element width for other precisions.
type Model struct {
	// Name is the catalog key used in configs and artifacts, e.g. "resnet50".
	Name string `parquet:"name" json:"name"`
	// Description names the architecture and its reference implementation,
	// or the file a model was read from.
	Description string `parquet:"description" json:"description"`
	// File is the base name of the ONNX file a user's model was read from,
	// and SHA256 the hex digest of its bytes; both are empty for the zoo's
	// models, which are built in Go.
	File   string `parquet:"file" json:"file,omitempty"`
	SHA256 string `parquet:"sha256" json:"sha256,omitempty"`
	// Precisions are the precisions the model can run in: the zoo builds
	// fp32 and fp16, a file holds one.
	Precisions []string `parquet:"precisions,list" json:"precisions"`
	// Input is the name of the graph's input, InputShape the shape of one
	// input sample without the batch axis, and BatchAxis where the batch
	// axis sits in the input.
	Input      string  `parquet:"input" json:"input"`
	InputShape []int64 `parquet:"input_shape,list" json:"input_shape"`
	BatchAxis  int32   `parquet:"batch_axis" json:"batch_axis"`
	// Output, OutputShape and OutputBatchAxis are the same of its output.
	Output          string  `parquet:"output" json:"output"`
	OutputShape     []int64 `parquet:"output_shape,list" json:"output_shape"`
	OutputBatchAxis int32   `parquet:"output_batch_axis" json:"output_batch_axis"`
	// Params is the number of parameters the inference graph holds (see
	// the package doc for how it relates to the reference's trainable
	// count).
	Params int64 `parquet:"params" json:"params"`
	// FLOPsPerSample is the forward-pass work for one sample, a multiply-add
	// counting as 2 FLOPs.
	FLOPsPerSample int64 `parquet:"flops_per_sample" json:"flops_per_sample"`
	// InputBytesPerSample is the fp32 size of one input sample.
	InputBytesPerSample int64 `parquet:"input_bytes_per_sample" json:"input_bytes_per_sample"`
	// ActivationBytesPerSample is the fp32 size of all tensors a forward pass
	// produces for one sample (see the package doc for what is counted).
	ActivationBytesPerSample int64 `parquet:"activation_bytes_per_sample" json:"activation_bytes_per_sample"`
	// WeightBytes is the fp32 size of the parameters.
	WeightBytes int64 `parquet:"weight_bytes" json:"weight_bytes"`
}

// FootprintBytes is the fp32 size of everything a forward pass over batch
// samples touches: the weights once, and each sample's input and activations.
func (m Model) FootprintBytes(batch int64) int64 {
	return m.WeightBytes + batch*(m.InputBytesPerSample+m.ActivationBytesPerSample)
}

// ArithmeticIntensity is the roofline intensity of a forward pass over batch
// fp32 samples in FLOP per byte, assuming every weight, input and activation
// crosses the memory bus exactly once. Batching raises it because the weights
// are shared by the whole batch; halving the element width doubles it.
func (m Model) ArithmeticIntensity(batch int64) float64 {
	return float64(batch*m.FLOPsPerSample) / float64(m.FootprintBytes(batch))
}

// InputDims is the input's full shape at a batch size: InputShape with
// batch inserted at BatchAxis.
func (m Model) InputDims(batch int) []int64 { return withBatch(m.InputShape, m.BatchAxis, batch) }

// OutputDims is the output's full shape at a batch size.
func (m Model) OutputDims(batch int) []int64 {
	return withBatch(m.OutputShape, m.OutputBatchAxis, batch)
}

func withBatch(shape []int64, axis int32, batch int) []int64 {
	return slices.Insert(slices.Clone(shape), int(axis), int64(batch))
}

// Zoo reports whether the model is one of the zoo's, built in Go, rather
// than read from a file.
func (m Model) Zoo() bool { return m.File == "" }

// HasPrecision reports whether the model can run in precision.
func (m Model) HasPrecision(precision string) bool { return slices.Contains(m.Precisions, precision) }

// clone returns m with slices of its own.
func (m Model) clone() Model {
	m.Precisions = slices.Clone(m.Precisions)
	m.InputShape = slices.Clone(m.InputShape)
	m.OutputShape = slices.Clone(m.OutputShape)
	return m
}

// Reserved are names no model may take: the profile's samples name their
// matrix-multiply and serving rows so.
var Reserved = []string{"matmul", "placement"}

// Validate reports the first figure of m no later stage can use, naming
// its field: a name outside package ident's rule or reserved, a shape or
// axis that does not fit, a figure that is not positive, a precision other
// than fp32 or fp16.
func (m Model) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("model %q: %s: %s", m.Name, field, fmt.Sprintf(format, args...))
	}
	switch {
	case !ident.Valid(m.Name):
		return fmt.Errorf("name: %w", ident.Check(m.Name))
	case slices.Contains(Reserved, m.Name):
		return bad("name", "is reserved for the profile's own rows (%s)", strings.Join(Reserved, ", "))
	case len(m.Precisions) == 0:
		return bad("precisions", "empty")
	case m.Input == "" || m.Output == "":
		return bad("input", "the input's or the output's name is empty")
	case m.BatchAxis < 0 || int(m.BatchAxis) > len(m.InputShape):
		return bad("batch_axis", "%d is not an axis of an input of rank %d", m.BatchAxis, len(m.InputShape)+1)
	case m.OutputBatchAxis < 0 || int(m.OutputBatchAxis) > len(m.OutputShape):
		return bad("output_batch_axis", "%d is not an axis of an output of rank %d", m.OutputBatchAxis, len(m.OutputShape)+1)
	case m.Params < 1 || m.FLOPsPerSample < 0 || m.InputBytesPerSample < 1 || m.ActivationBytesPerSample < 0 || m.WeightBytes < 1:
		return bad("figures", "want positive params, input and weight bytes and non-negative FLOPs and activation bytes, got %d, %d, %d, %d, %d",
			m.Params, m.InputBytesPerSample, m.WeightBytes, m.FLOPsPerSample, m.ActivationBytesPerSample)
	}
	for _, p := range m.Precisions {
		if p != FP32 && p != FP16 {
			return bad("precisions", "want %s or %s, got %q", FP32, FP16, p)
		}
	}
	for _, shape := range [][]int64{m.InputShape, m.OutputShape} {
		if slices.ContainsFunc(shape, func(d int64) bool { return d < 1 }) {
			return bad("shape", "%v has a dimension below 1", shape)
		}
	}
	return nil
}

// Catalog is an ordered set of models with distinct names: the zoo's
// (Zoo), or what a profile holds (Read). Its order is the order models
// take in artifacts and reports. A Catalog is immutable; its methods
// return copies.
type Catalog struct {
	models []Model
}

// ErrDuplicate is wrapped by New's error for two models of one name.
var ErrDuplicate = errors.New("duplicate model")

// New makes a catalog of models, in their order, checking each.
func New(models []Model) (*Catalog, error) {
	c, _, err := newCatalog(models)
	return c, err
}

// newCatalog is New, which also says at which index of models it failed,
// for Read to name the row.
func newCatalog(models []Model) (*Catalog, int, error) {
	c := &Catalog{models: make([]Model, len(models))}
	for i, m := range models {
		if err := m.Validate(); err != nil {
			return nil, i, err
		}
		if slices.ContainsFunc(models[:i], func(o Model) bool { return o.Name == m.Name }) {
			return nil, i, fmt.Errorf("model %q: %w", m.Name, ErrDuplicate)
		}
		c.models[i] = m.clone()
	}
	return c, 0, nil
}

// Len is the number of models.
func (c *Catalog) Len() int { return len(c.models) }

// Names returns the models' names in catalog order.
func (c *Catalog) Names() []string {
	names := make([]string, len(c.models))
	for i, m := range c.models {
		names[i] = m.Name
	}
	return names
}

// All returns every model in catalog order.
func (c *Catalog) All() []Model {
	all := make([]Model, len(c.models))
	for i, m := range c.models {
		all[i] = m.clone()
	}
	return all
}

// At returns the model at index i of the catalog order.
func (c *Catalog) At(i int) Model { return c.models[i].clone() }

// Index returns the model's index in catalog order, or -1.
func (c *Catalog) Index(name string) int {
	return slices.IndexFunc(c.models, func(m Model) bool { return m.Name == name })
}

// Lookup returns the model called name and whether the catalog has it.
func (c *Catalog) Lookup(name string) (Model, bool) {
	if i := c.Index(name); i >= 0 {
		return c.models[i].clone(), true
	}
	return Model{}, false
}

// Unknown is the error for a name the catalog lacks, listing its names.
func (c *Catalog) Unknown(name string) error {
	return fmt.Errorf("unknown model %q; the catalog has %s", name, strings.Join(c.Names(), ", "))
}
