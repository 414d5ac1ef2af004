package onnxgraph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// debianPython sees Debian's python3-onnx (stages/lib/zoo's tests use it
// too); the python3 first on PATH may be another one.
const debianPython = "/usr/bin/python3"

// inferScript runs onnx's own shape inference (strict, with data
// propagation, so that a reshape computed from the input's shape resolves)
// on each model with its input's dynamic dimensions set to the batch size,
// and prints every tensor's inferred shape, null where onnx leaves a
// dimension unknown.
const inferScript = `
import json, sys, onnx
from onnx import shape_inference
batch = int(sys.argv[1])
for path in sys.argv[2:]:
    res = {"path": path}
    try:
        m = onnx.load(path)
        inits = {i.name for i in m.graph.initializer}
        for i in m.graph.input:
            if i.name in inits:
                continue
            for d in i.type.tensor_type.shape.dim:
                if d.HasField("dim_param") or d.dim_value == 0:
                    d.Clear()
                    d.dim_value = batch
        inf = shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
        shapes = {}
        for vi in list(inf.graph.value_info) + list(inf.graph.output):
            t = vi.type.tensor_type
            if not t.HasField("shape"):
                continue
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            shapes[vi.name] = None if None in dims else dims
        res["shapes"] = shapes
    except Exception as e:
        res["error"] = str(e)
    print(json.dumps(res))
`

// requireONNX skips the test when Debian's python3-onnx is missing, unless
// REQUIRE_ONNX_CHECKER=1 says the checker must run (as make test does).
func requireONNX(t *testing.T) {
	t.Helper()
	out, err := exec.Command(debianPython, "-c", "import onnx").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s cannot import onnx (apt-get install -y python3-onnx): %v: %s", debianPython, err, bytes.TrimSpace(out))
	if os.Getenv("REQUIRE_ONNX_CHECKER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// onnxCannot are the graph outputs of the operator cases whose shape onnx
// 1.12 cannot infer: its data propagation does not cover Range.
var onnxCannot = map[string]bool{"range": true}

// TestAgainstONNXInference checks every tensor shape Infer derives against
// onnx's reference shape inference: the operator cases (those of an opset
// onnx 1.12 knows), the zoo's models and the test models, at batch 3.
func TestAgainstONNXInference(t *testing.T) {
	requireONNX(t)
	const batch = 3
	models := map[string][]byte{}
	for _, tc := range opCases {
		b := newBuilder()
		tc.build(b)
		for name := range tc.want {
			b.output(name)
		}
		if b.opset <= 17 {
			models["op "+tc.name] = b.bytes(t)
		}
	}
	for _, name := range zoo.Names() {
		for _, p := range zoo.Precisions() {
			m, err := zoo.Build(name, zoo.Options{Seed: 1, Precision: p})
			if err != nil {
				t.Fatal(err)
			}
			models["zoo "+name+" "+p] = m
		}
	}
	for _, build := range []func(string, int64) (testmodels.Model, error){testmodels.MobileNet, testmodels.WideMLP, testmodels.Encoder} {
		m, err := build(zoo.FP32, 1)
		if err != nil {
			t.Fatal(err)
		}
		models["test "+m.Name] = m.ONNX
	}
	dir := t.TempDir()
	labels := slices.Sorted(func(yield func(string) bool) {
		for k := range models {
			if !yield(k) {
				return
			}
		}
	})
	args := []string{"-c", inferScript, fmt.Sprint(batch)}
	paths := map[string]string{}
	for i, label := range labels {
		path := filepath.Join(dir, fmt.Sprintf("m%d.onnx", i))
		if err := os.WriteFile(path, models[label], 0o644); err != nil {
			t.Fatal(err)
		}
		paths[path] = label
		args = append(args, path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, debianPython, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("infer script: %v\n%s", err, stderr.Bytes())
	}
	type result struct {
		Path   string             `json:"path"`
		Shapes map[string][]int64 `json:"shapes"`
		Error  string             `json:"error"`
	}
	results := map[string]result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("infer script printed %q: %v", sc.Text(), err)
		}
		results[paths[r.Path]] = r
	}
	for _, label := range labels {
		t.Run(label, func(t *testing.T) {
			r, ok := results[label]
			switch {
			case !ok:
				t.Fatal("the infer script reported nothing")
			case r.Error != "":
				t.Fatalf("onnx refuses the model: %s", r.Error)
			}
			g, err := Parse(models[label])
			if err != nil {
				t.Fatal(err)
			}
			p, err := g.Infer(0, batch)
			if err != nil {
				t.Fatal(err)
			}
			compared := 0
			for _, n := range p.Nodes {
				for _, o := range n.Outputs {
					want, known := r.Shapes[o.Name]
					if o.Name == "" || !known || want == nil {
						continue
					}
					compared++
					if !slices.Equal(o.Shape, want) {
						t.Errorf("node %s (%s): output %s has shape %v, onnx infers %v", n.Name, n.Op, o.Name, o.Shape, want)
					}
				}
			}
			for _, o := range p.Outputs {
				if want := r.Shapes[o.Name]; want == nil && !onnxCannot[o.Name] {
					t.Errorf("onnx infers no full shape for graph output %s; nothing checks it", o.Name)
				}
			}
			if compared == 0 {
				t.Error("no tensor was compared")
			}
		})
	}
}
