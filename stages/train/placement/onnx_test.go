package placement

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
)

// trained is one network trained on the synthetic task, shared by the
// export tests, with its held-out points.
var trained = sync.OnceValues(func() (*Network, heldOut) {
	d := splitSynthetic(6000, 21)
	// Two features warped at the scale of milliseconds, so that the
	// export's Mul and Asinh are tested on more than asinh(x).
	n, _, err := Train(d.fit.x, d.fit.y, nil, Options{Seed: 5, Epochs: 15, Scale: [Inputs]float32{1, 1e3, 1, 1, 1e3, 1, 1, 1, 1, 1}})
	if err != nil {
		panic(err)
	}
	return n, d
})

// TestONNXMatchesPredict runs the exported model in onnxruntime on the
// held-out points, in one batch, and compares it with the Go forward pass.
func TestONNXMatchesPredict(t *testing.T) {
	orttest.Require(t)
	net, d := trained()
	model, err := net.ONNX(syntheticNames)
	if err != nil {
		t.Fatal(err)
	}
	x := d.test.x
	s, err := ort.NewSession(model, InputName, []int64{int64(len(x)), Inputs}, OutputName, []int64{int64(len(x)), 1}, ort.SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := s.Input()
	for i := range x {
		copy(in[i*Inputs:], x[i][:])
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	want := net.Predict(x)
	var worst float64
	spread := [2]int{}
	for i, got := range s.Output() {
		diff := math.Abs(float64(got) - want[i])
		worst = max(worst, diff)
		if diff > 1e-5 {
			t.Errorf("point %d: onnxruntime %.8f, Predict %.8f (diff %.2g)", i, got, want[i], diff)
		}
		if want[i] > Threshold {
			spread[1]++
		} else {
			spread[0]++
		}
	}
	t.Logf("%d points, max |onnxruntime − Predict| = %.3g", len(x), worst)
	if spread[0] < len(x)/10 || spread[1] < len(x)/10 {
		t.Errorf("predictions %v stay and migrate: too one-sided to test the parity", spread)
	}
}

// checkScript runs onnx's checker and strict shape inference with the
// declared output shape removed, as stages/lib/zoo's test does, and prints
// the inferred signature and the doc strings as one JSON line.
const checkScript = `
import json, sys
import onnx
from onnx import checker, shape_inference

def describe(vi):
    t = vi.type.tensor_type
    dims = [d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in t.shape.dim]
    return {"name": vi.name, "elem": t.elem_type, "dims": dims}

res = {"onnx": onnx.__version__}
try:
    model = onnx.load(sys.argv[1])
    checker.check_model(model)
    res["doc"] = model.doc_string
    res["init_docs"] = {i.name: i.doc_string for i in model.graph.initializer}
    for o in model.graph.output:
        o.type.tensor_type.ClearField("shape")
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    res["ir"] = inferred.ir_version
    res["opset"] = [[o.domain, o.version] for o in inferred.opset_import]
    res["inputs"] = [describe(i) for i in inferred.graph.input]
    res["outputs"] = [describe(o) for o in inferred.graph.output]
except Exception as e:
    res["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(res))
`

// debianPython is the interpreter that sees Debian's python3-onnx.
const debianPython = "/usr/bin/python3"

type valueDesc struct {
	Name string   `json:"name"`
	Elem int32    `json:"elem"`
	Dims []string `json:"dims"`
}

// TestONNXChecker runs the exported model through onnx's checker and
// shape inference: the output must come out [N, 1] float32 from an input
// [N, 10] float32, and the doc strings must name the features. Skipped
// without python3-onnx unless REQUIRE_ONNX_CHECKER=1.
func TestONNXChecker(t *testing.T) {
	if out, err := exec.Command(debianPython, "-c", "import onnx").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("%s cannot import onnx (apt-get install -y python3-onnx): %v: %s", debianPython, err, bytes.TrimSpace(out))
		if os.Getenv("REQUIRE_ONNX_CHECKER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	net, _ := trained()
	model, err := net.ONNX(syntheticNames)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "placement.onnx")
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, debianPython, "-c", checkScript, path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check script: %v\n%s", err, stderr.Bytes())
	}
	var r struct {
		ONNX     string            `json:"onnx"`
		Error    string            `json:"error"`
		Doc      string            `json:"doc"`
		InitDocs map[string]string `json:"init_docs"`
		IR       int64             `json:"ir"`
		Opset    [][]any           `json:"opset"`
		Inputs   []valueDesc       `json:"inputs"`
		Outputs  []valueDesc       `json:"outputs"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("check script printed %q: %v", out, err)
	}
	if r.Error != "" {
		t.Fatalf("onnx %s rejects the model: %s", r.ONNX, r.Error)
	}
	if r.IR != 8 || len(r.Opset) != 1 || r.Opset[0][0] != "" || r.Opset[0][1] != float64(17) {
		t.Errorf("ir_version %d, opset_import %v; want 8, [[\"\" 17]]", r.IR, r.Opset)
	}
	const float = 1 // TensorProto.FLOAT
	wantIn := fmt.Sprint([]valueDesc{{InputName, float, []string{"N", "10"}}})
	wantOut := fmt.Sprint([]valueDesc{{OutputName, float, []string{"N", "1"}}})
	if got := fmt.Sprint(r.Inputs); got != wantIn {
		t.Errorf("inputs %s, want %s", got, wantIn)
	}
	if got := fmt.Sprint(r.Outputs); got != wantOut {
		t.Errorf("inferred outputs %s, want %s", got, wantOut)
	}
	cols := strings.Join(syntheticNames, ", ")
	for name, doc := range map[string]string{"model": r.Doc, "mean": r.InitDocs["mean"], "std": r.InitDocs["std"]} {
		if !strings.Contains(doc, cols) {
			t.Errorf("%s doc string %q does not list the features", name, doc)
		}
	}
}

func TestONNXRejects(t *testing.T) {
	net, _ := trained()
	dup := append([]string(nil), syntheticNames...)
	dup[4] = dup[1]
	blank := append([]string(nil), syntheticNames...)
	blank[2] = " "
	broken := *net
	broken.Layers[1].Bias = broken.Layers[1].Bias[:3]
	tests := []struct {
		name  string
		net   *Network
		names []string
		want  string
	}{
		{"too few names", net, syntheticNames[:9], "9 feature names for 10 inputs"},
		{"duplicate name", net, dup, `features 1 and 4 are both named "dst_load"`},
		{"blank name", net, blank, "feature 2 has an empty name"},
		{"broken layer", &broken, syntheticNames, "layer 2 has 4096 weights and 3 biases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.net.ONNX(tt.names)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ONNX = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
