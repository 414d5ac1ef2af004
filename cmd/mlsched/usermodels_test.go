package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// write writes a file of the project, its folders made.
func (p *project) write(name string, b []byte) {
	p.t.Helper()
	path := filepath.Join(p.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// edited returns a model with its proto edited.
func edited(t *testing.T, b []byte, edit func(m *onnxpb.ModelProto)) []byte {
	t.Helper()
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	out, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// built returns a small model the zoo's Graph builder makes: an input of
// the given shape (zoo.Batch for the dynamic axis) through layers.
func built(t *testing.T, input, output []int64, layers func(g *zoo.Graph, x string) string) []byte {
	t.Helper()
	g, err := zoo.NewGraph("bad", zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	g.Output("y", layers(g, g.Input("x", input)), output)
	b, err := g.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadModelFiles names, in profile.models, model files the profile must
// refuse, and runs the profile through the CLI: each stops it before it
// measures anything, with an error naming the entry, the file, the node
// where it is one, and what is wrong; nothing is stored.
func TestBadModelFiles(t *testing.T) {
	mobile, err := testmodels.MobileNet(zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	relu := func(g *zoo.Graph, x string) string { return g.Op("Relu", x) }
	tests := []struct {
		name    string
		model   func(t *testing.T) []byte
		measure bool // the refusal needs onnxruntime
		want    []string
	}{
		{"truncated", func(*testing.T) []byte { return mobile.ONNX[:len(mobile.ONNX)/2] }, false,
			[]string{"not an ONNX model", "truncated"}},
		{"not ONNX", func(*testing.T) []byte { return []byte("arrival_s,model,batch_size\n0.1,mlp,1\n") }, false,
			[]string{"not an ONNX model"}},
		{"an unknown operator", func(t *testing.T) []byte {
			return built(t, []int64{zoo.Batch, 8}, []int64{zoo.Batch, 8}, func(g *zoo.Graph, x string) string {
				return g.Op("Relu", g.Node("Hardmax", []string{g.Op("NonZero", x)}))
			})
		}, false, []string{"node NonZero_1 (NonZero)", "not one mlsched can count", "docs/models.md"}},
		{"no batch axis", func(t *testing.T) []byte { return built(t, []int64{1, 8}, []int64{1, 8}, relu) }, false,
			[]string{"input x [1 8] has no dynamic dimension", "dynamic_axes"}},
		{"two batch axis candidates", func(t *testing.T) []byte {
			return built(t, []int64{zoo.Batch, zoo.Batch, 8}, []int64{zoo.Batch, zoo.Batch, 8}, relu)
		}, false, []string{"input x [N N 8] has 2 dynamic axes [0 1]", "batch_axis"}},
		{"an integer input", func(t *testing.T) []byte {
			return edited(t, built(t, []int64{zoo.Batch, 8}, []int64{zoo.Batch, 8}, relu), func(m *onnxpb.ModelProto) {
				m.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(int32(onnxpb.TensorProto_INT64))
			})
		}, false, []string{"input x is INT64", "float32 inputs"}},
		{"a first run that fails", func(t *testing.T) []byte {
			// The analysis infers a layer norm's output from its input;
			// onnxruntime also checks its scale, here of the wrong size.
			return built(t, []int64{zoo.Batch, 8}, []int64{zoo.Batch, 8}, func(g *zoo.Graph, x string) string {
				return g.Node("LayerNormalization", []string{x, g.Fill("scale", []int64{3}, 1), g.Fill("bias", []int64{3}, 0)})
			})
		}, true, []string{"its first run (batch 1, onnxruntime", "fails, so it cannot be timed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.measure {
				requireORT(t)
			}
			p := newProject(t, "tiny.yaml")
			p.write("models/bad.onnx", tt.model(t))
			cfg := "profile:\n  models: [mlp, {name: bad, file: models/bad.onnx}]\n"
			if tt.measure {
				cfg += "  measure: true\n  import: ''\n  precisions: [fp32]\n  batch_sizes: [1]\n  threads: [1]\n" +
					"  contention: {models: [mlp], sessions: [1], repeats: 1, rounds: 1}\n  serving: {batch_sizes: []}\n  matmul: {sizes: [8], repeats: 1}\n"
			} else {
				cfg += "  measure: false\n  import: imported-profile.csv\n"
			}
			p.write("pipeline.yaml", []byte("seed: 3\nstore: data\n"+cfg))
			_, errs, code := p.cli("run", "profile")
			if code != exitFailed {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitFailed, errs)
			}
			for _, w := range append([]string{"profile.models[1] (bad): models/bad.onnx: "}, tt.want...) {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine") {
				t.Errorf("stderr shows a panic:\n%s", errs)
			}
			if stored, _ := filepath.Glob(filepath.Join(p.dir, "data", "profile", "*")); len(stored) > 0 {
				t.Errorf("a refused profile stored %v", stored)
			}
		})
	}
}
