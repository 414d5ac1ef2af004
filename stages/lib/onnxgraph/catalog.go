package onnxgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// CatalogModel derives the catalog entry of a model read from an ONNX
// file from its graph alone: its input and output, batch axis,
// parameters, FLOPs and bytes per sample. file is the file's base
// name, recorded with the bytes' digest; batchAxis, where not nil, names
// the input's batch axis (needed where it has several dynamic ones). The
// profile's entries of profile.models and mlsched predict's model both
// come from here, so that a prediction sees the figures a profile would.
// An error says what in the graph is wrong (the node, where it is one).
func CatalogModel(name, file string, b []byte, batchAxis *int) (catalog.Model, error) {
	g, err := Parse(b)
	if err != nil {
		return catalog.Model{}, err
	}
	return g.CatalogModel(name, file, b, batchAxis)
}

// CatalogModel is the package's CatalogModel of b, the file g was parsed
// from, for a caller that keeps the graph too (mlsched predict walks its
// nodes), so that the file is not parsed twice.
func (g *Graph) CatalogModel(name, file string, b []byte, batchAxis *int) (catalog.Model, error) {
	axis, named := 0, batchAxis != nil
	if named {
		axis = *batchAxis
	}
	s, err := g.Summarize(axis, named)
	if err != nil {
		return catalog.Model{}, err
	}
	sum := sha256.Sum256(b)
	m := catalog.Model{
		Name:                     name,
		Description:              fmt.Sprintf("ONNX file %s (graph %q, %d nodes, opset %d)", file, g.Name, g.Nodes(), g.Opset),
		File:                     file,
		SHA256:                   hex.EncodeToString(sum[:]),
		Precisions:               []string{s.Precision},
		Input:                    s.Input,
		InputShape:               s.InputShape,
		BatchAxis:                int32(s.BatchAxis),
		Output:                   s.Output,
		OutputShape:              s.OutputShape,
		OutputBatchAxis:          int32(s.OutputBatchAxis),
		Params:                   s.Params,
		FLOPsPerSample:           s.FLOPsPerSample,
		InputBytesPerSample:      s.InputBytesPerSample,
		ActivationBytesPerSample: s.ActivationBytesPerSample,
		WeightBytes:              s.WeightBytes,
	}
	return m, m.Validate()
}
