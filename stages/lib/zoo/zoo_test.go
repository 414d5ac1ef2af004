package zoo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// debianPython is Debian's interpreter, which sees python3-onnx; the
// python3 first on PATH may be another one without Debian's modules.
const debianPython = "/usr/bin/python3"

// matmulN is the size of the matmul model the tests check: small, and not a
// power of two so that a swapped dimension would show.
const matmulN = 48

// built is one model the tests check, with the signature it must have.
type built struct {
	label   string // for subtest names and messages
	name    string // zoo model name, or "matmul"
	opts    Options
	in, out IO
	bytes   []byte
}

// builtModels builds every model in both precisions, and the matmul model,
// once for all tests: ResNet-50 alone is 100 MB.
var builtModels = sync.OnceValues(func() ([]built, error) {
	var all []built
	for _, name := range Names() {
		in, out, err := Signature(name)
		if err != nil {
			return nil, err
		}
		for _, p := range Precisions() {
			opts := Options{Seed: 7, Precision: p}
			b, err := Build(name, opts)
			if err != nil {
				return nil, err
			}
			all = append(all, built{name + "/" + p, name, opts, in, out, b})
		}
	}
	mm := IO{Name: "A", Shape: []int64{matmulN, matmulN}}
	for _, p := range Precisions() {
		b, err := MatMul(matmulN, p)
		if err != nil {
			return nil, err
		}
		all = append(all, built{"matmul/" + p, "matmul", Options{Precision: p}, mm, IO{Name: "Y", Shape: mm.Shape}, b})
	}
	return all, nil
})

func allBuilt(t *testing.T) []built {
	t.Helper()
	all, err := builtModels()
	if err != nil {
		t.Fatalf("building the models: %v", err)
	}
	return all
}

func TestNamesMatchCatalog(t *testing.T) {
	if got, want := Names(), catalog.Zoo().Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want catalog.Zoo().Names() = %v", got, want)
	}
}

func TestSignature(t *testing.T) {
	tests := []struct {
		name      string
		in, out   []int64
		inputName string
	}{
		{"mlp", []int64{Batch, 10}, []int64{Batch, 1}, "input"},
		{"resnet18", []int64{Batch, 3, 224, 224}, []int64{Batch, 1000}, "input"},
		{"resnet50", []int64{Batch, 3, 224, 224}, []int64{Batch, 1000}, "input"},
		{"vit", []int64{Batch, 3, 224, 224}, []int64{Batch, 1000}, "input"},
	}
	for _, tt := range tests {
		in, out, err := Signature(tt.name)
		if err != nil {
			t.Errorf("Signature(%q): %v", tt.name, err)
			continue
		}
		if in.Name != tt.inputName || !slices.Equal(in.Shape, tt.in) || out.Name != "output" || !slices.Equal(out.Shape, tt.out) {
			t.Errorf("Signature(%q) = %+v, %+v; want {%s %v}, {output %v}", tt.name, in, out, tt.inputName, tt.in, tt.out)
		}
	}
	// The returned shapes are the caller's to change.
	in, _, _ := Signature("vit")
	in.Shape[1] = 99
	if again, _, _ := Signature("vit"); again.Shape[1] != 3 {
		t.Errorf("Signature shares its shape with the zoo: got %v after a caller's change", again.Shape)
	}
}

// checkScript loads each model file named on the command line, runs onnx's
// checker and then strict shape inference with the declared output shapes
// removed, so that the shapes it reports are the ones onnx derives from the
// graph rather than the ones the builder wrote. One JSON line per model.
const checkScript = `
import json, sys
import onnx
from onnx import checker, shape_inference

def describe(vi):
    t = vi.type.tensor_type
    dims = None
    if t.HasField("shape"):
        dims = [d.dim_param if d.HasField("dim_param") else str(d.dim_value) if d.HasField("dim_value") else "?" for d in t.shape.dim]
    return {"name": vi.name, "elem": t.elem_type, "dims": dims}

for path in sys.argv[1:]:
    res = {"path": path, "onnx": onnx.__version__}
    try:
        model = onnx.load(path)
        checker.check_model(model)
        for o in model.graph.output:
            o.type.tensor_type.ClearField("shape")
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        res["ir"] = inferred.ir_version
        res["opset"] = [[o.domain, o.version] for o in inferred.opset_import]
        res["inputs"] = [describe(i) for i in inferred.graph.input]
        res["outputs"] = [describe(o) for o in inferred.graph.output]
    except Exception as e:
        res["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(res), flush=True)
`

// checkResult is one line of checkScript's output.
type checkResult struct {
	Path    string      `json:"path"`
	ONNX    string      `json:"onnx"`
	Error   string      `json:"error"`
	IR      int64       `json:"ir"`
	Opset   [][]any     `json:"opset"`
	Inputs  []valueDesc `json:"inputs"`
	Outputs []valueDesc `json:"outputs"`
}

type valueDesc struct {
	Name string   `json:"name"`
	Elem int32    `json:"elem"`
	Dims []string `json:"dims"`
}

// requireONNX skips the test when Debian's python3-onnx is missing, unless
// REQUIRE_ONNX_CHECKER=1 says the checker must run (as make test does).
func requireONNX(t *testing.T) {
	t.Helper()
	out, err := exec.Command(debianPython, "-c", "import onnx").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s cannot import onnx (install Debian's python3-onnx: apt-get install -y python3-onnx): %v: %s",
		debianPython, err, bytes.TrimSpace(out))
	if os.Getenv("REQUIRE_ONNX_CHECKER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// dimStrings writes a shape as checkScript reports it.
func dimStrings(shape []int64) []string {
	s := make([]string, len(shape))
	for i, d := range shape {
		if d == Batch {
			s[i] = batchParam
		} else {
			s[i] = strconv.FormatInt(d, 10)
		}
	}
	return s
}

// TestONNXChecker runs every model through onnx's own checker and strict
// shape inference in one Python process, then checks per model that onnx
// derives the expected fp32 output, batch dimension "N" included.
func TestONNXChecker(t *testing.T) {
	requireONNX(t)
	all := allBuilt(t)
	dir := t.TempDir()
	paths := make([]string, len(all))
	for i, m := range all {
		paths[i] = filepath.Join(dir, strings.ReplaceAll(m.label, "/", "_")+".onnx")
		if err := os.WriteFile(paths[i], m.bytes, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, debianPython, append([]string{"-c", checkScript}, paths...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check script: %v\n%s", err, stderr.Bytes())
	}
	results := map[string]checkResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r checkResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check script printed %q: %v", sc.Text(), err)
		}
		results[r.Path] = r
	}
	for i, m := range all {
		t.Run(m.label, func(t *testing.T) {
			r, ok := results[paths[i]]
			switch {
			case !ok:
				t.Fatalf("check script reported nothing for %s", paths[i])
			case r.Error != "":
				t.Fatalf("onnx %s rejects the model: %s", r.ONNX, r.Error)
			}
			if r.IR != IRVersion || len(r.Opset) != 1 || r.Opset[0][0] != "" || r.Opset[0][1] != float64(Opset) {
				t.Errorf("ir_version %d, opset_import %v; want %d, [[\"\" %d]]", r.IR, r.Opset, IRVersion, Opset)
			}
			wantIn := valueDesc{m.in.Name, int32(onnxpb.TensorProto_FLOAT), dimStrings(m.in.Shape)}
			wantOut := valueDesc{m.out.Name, int32(onnxpb.TensorProto_FLOAT), dimStrings(m.out.Shape)}
			if len(r.Inputs) != 1 || !equalDesc(r.Inputs[0], wantIn) {
				t.Errorf("inputs = %+v, want [%+v]", r.Inputs, wantIn)
			}
			if len(r.Outputs) != 1 || !equalDesc(r.Outputs[0], wantOut) {
				t.Errorf("inferred outputs = %+v, want [%+v]", r.Outputs, wantOut)
			}
		})
	}
}

func equalDesc(a, b valueDesc) bool {
	return a.Name == b.Name && a.Elem == b.Elem && slices.Equal(a.Dims, b.Dims)
}

// TestDeterministic rebuilds every model and compares digests, and checks
// that the seed and the precision do change the bytes.
func TestDeterministic(t *testing.T) {
	digests := map[[sha256.Size]byte]string{}
	for _, m := range allBuilt(t) {
		var again []byte
		var err error
		if m.name == "matmul" {
			again, err = MatMul(matmulN, m.opts.Precision)
		} else {
			again, err = Build(m.name, m.opts)
		}
		if err != nil {
			t.Fatalf("%s: rebuild: %v", m.label, err)
		}
		d := sha256.Sum256(m.bytes)
		if d != sha256.Sum256(again) {
			t.Errorf("%s: two builds differ (%d and %d bytes)", m.label, len(m.bytes), len(again))
		}
		if other, dup := digests[d]; dup {
			t.Errorf("%s and %s are byte-identical", m.label, other)
		}
		digests[d] = m.label
	}
	a, errA := Build("mlp", Options{Seed: 1})
	b, errB := Build("mlp", Options{Seed: 2})
	c, errC := Build("mlp", Options{Seed: 1, Precision: FP32})
	if err := errors.Join(errA, errB, errC); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Error("mlp with seeds 1 and 2 is byte-identical")
	}
	if !bytes.Equal(a, c) {
		t.Error(`mlp with precision "" differs from precision "fp32"`)
	}
}

// initializers decodes a model and returns its graph's initializers.
func initializers(t *testing.T, m built) []*onnxpb.TensorProto {
	t.Helper()
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(m.bytes, &mp); err != nil {
		t.Fatalf("%s: unmarshal: %v", m.label, err)
	}
	return mp.GetGraph().GetInitializer()
}

// TestParamsMatchCatalog counts the parameters in every fp32 model's
// initializers against the catalog, which counts the inference graph's
// parameters. The graphs hold exactly the parameters (constants are
// nodes); a folded batch norm keeps one number per channel (the bias) where
// the reference has two (γ and β), and the builder marks those biases, so
// that the graph, the catalog and the published trainable counts (the
// catalog's package doc) can be reconciled.
func TestParamsMatchCatalog(t *testing.T) {
	for _, m := range allBuilt(t) {
		if m.name == "matmul" || m.opts.Precision != FP32 {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			var params, folded int64
			for _, init := range initializers(t, m) {
				n := int64(1)
				for _, d := range init.GetDims() {
					n *= d
				}
				if init.GetDataType() != int32(onnxpb.TensorProto_FLOAT) || int64(len(init.GetRawData())) != 4*n {
					t.Errorf("initializer %s: data type %d with %d raw bytes for dims %v, want FLOAT with %d",
						init.GetName(), init.GetDataType(), len(init.GetRawData()), init.GetDims(), 4*n)
				}
				params += n
				if init.GetDocString() == foldedBatchNorm {
					folded += n
				}
			}
			c, _ := catalog.Zoo().Lookup(m.name)
			if params != c.Params {
				t.Errorf("%d parameters (%d of them folded batch-norm biases), want catalog's %d", params, folded, c.Params)
			}
			// Every torchvision ResNet convolution is followed by a batch
			// norm; the other models have none.
			if wantFolded := strings.HasPrefix(m.name, "resnet"); (folded > 0) != wantFolded {
				t.Errorf("%d folded batch-norm channels; want some: %v", folded, wantFolded)
			}
		})
	}
}

// TestFP16IsRoundedFP32 checks that an fp16 model holds its fp32 twin's
// weights rounded to half, so the two precisions measure the same network.
func TestFP16IsRoundedFP32(t *testing.T) {
	all := allBuilt(t)
	for i := 0; i+1 < len(all); i++ {
		f32, f16 := all[i], all[i+1]
		if f32.opts.Precision != FP32 || f16.opts.Precision != FP16 || f32.name != f16.name {
			continue
		}
		t.Run(f32.name, func(t *testing.T) {
			a, b := initializers(t, f32), initializers(t, f16)
			if len(a) != len(b) {
				t.Fatalf("%d fp32 initializers, %d fp16", len(a), len(b))
			}
			for j := range a {
				if a[j].GetName() != b[j].GetName() || !slices.Equal(a[j].GetDims(), b[j].GetDims()) ||
					b[j].GetDataType() != int32(onnxpb.TensorProto_FLOAT16) {
					t.Fatalf("initializer %d: fp32 %s %v, fp16 %s %v of type %d", j,
						a[j].GetName(), a[j].GetDims(), b[j].GetName(), b[j].GetDims(), b[j].GetDataType())
				}
				raw32, raw16 := a[j].GetRawData(), b[j].GetRawData()
				if len(raw16)*2 != len(raw32) {
					t.Fatalf("%s: %d fp16 bytes for %d fp32 bytes", a[j].GetName(), len(raw16), len(raw32))
				}
				for k := range len(raw16) / 2 {
					v := math.Float32frombits(binary.LittleEndian.Uint32(raw32[4*k:]))
					if got, want := binary.LittleEndian.Uint16(raw16[2*k:]), float16Bits(v); got != want {
						t.Fatalf("%s[%d]: fp16 %#04x, want %g rounded, %#04x", a[j].GetName(), k, got, v, want)
					}
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		what  string
		build func() ([]byte, error)
		is    error
		want  []string // substrings of the message
	}{
		{"unknown model", func() ([]byte, error) { return Build("resnet101", Options{}) },
			ErrUnknownModel, []string{`"resnet101"`, "mlp, resnet18, resnet50, vit"}},
		{"unknown precision", func() ([]byte, error) { return Build("mlp", Options{Precision: "bf16"}) },
			ErrUnknownPrecision, []string{"build mlp", `"bf16"`, "fp32, fp16"}},
		{"matmul precision", func() ([]byte, error) { return MatMul(8, "int8") },
			ErrUnknownPrecision, []string{"matmul 8", `"int8"`, "fp32, fp16"}},
		{"matmul size", func() ([]byte, error) { return MatMul(0, FP32) },
			nil, []string{"matmul 0", "at least 1"}},
		{"matmul too large", func() ([]byte, error) { return MatMul(30000, FP32) },
			nil, []string{"matmul 30000", "2 GiB"}},
	}
	for _, tt := range tests {
		b, err := tt.build()
		if err == nil {
			t.Errorf("%s: got %d bytes, want an error", tt.what, len(b))
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: error %q does not wrap %v", tt.what, err, tt.is)
		}
		for _, s := range tt.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not contain %q", tt.what, err, s)
			}
		}
	}
	if _, _, err := Signature("gpt2"); !errors.Is(err, ErrUnknownModel) {
		t.Errorf(`Signature("gpt2") error = %v, want ErrUnknownModel`, err)
	}
}

// BenchmarkBuild measures building each model; ResNet-50 in fp32 is about
// 100 MB of weights.
func BenchmarkBuild(b *testing.B) {
	for _, name := range Names() {
		for _, p := range Precisions() {
			b.Run(name+"/"+p, func(b *testing.B) {
				var n int
				for b.Loop() {
					m, err := Build(name, Options{Seed: 1, Precision: p})
					if err != nil {
						b.Fatal(err)
					}
					n = len(m)
				}
				b.SetBytes(int64(n))
			})
		}
	}
}
