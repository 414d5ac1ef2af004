package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// writeUserModels writes the test's own models into the project's models/
// folder, where testdata/usermodels.yaml names them, and returns their
// bytes by name.
func (p *project) writeUserModels() map[string][]byte {
	p.t.Helper()
	out := map[string][]byte{}
	for _, build := range []func(string, int64) (testmodels.Model, error){testmodels.MobileNet, testmodels.WideMLP} {
		m, err := build(zoo.FP32, 1)
		if err != nil {
			p.t.Fatal(err)
		}
		p.write("models/"+m.Name+".onnx", m.ONNX)
		out[m.Name] = m.ONNX
	}
	return out
}

// runAll runs the whole pipeline and fails the test unless every stage
// ran.
func (p *project) runAll() {
	p.t.Helper()
	got := outcomes(p.mustCLI("run"))
	for _, s := range []string{"profile", "generate", "train", "schedule", "evaluate"} {
		if got[s] != "ran" {
			p.t.Fatalf("run: %v", got)
		}
	}
}

// stored returns the one path of the store that pattern matches below
// data/ ("schedule/*"), failing the test on none or several.
func (p *project) stored(pattern string) string {
	p.t.Helper()
	m, _ := filepath.Glob(filepath.Join(p.dir, "data", pattern))
	if len(m) != 1 {
		p.t.Fatalf("%s: %d matches", pattern, len(m))
	}
	return m[0]
}

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

// TestUserModelsEndToEnd imports two model files the test builds (not the
// zoo's), profiles them on this machine, generates workloads that mix them
// with the zoo's mlp, schedules them (fifo also for real) and finds them in
// the report: a model of the user's is treated as the zoo's are.
func TestUserModelsEndToEnd(t *testing.T) {
	requireORT(t)
	p := newProject(t, "usermodels.yaml")
	files := p.writeUserModels()
	p.runAll()
	one := p.stored
	mine := []string{"mobilenet", "widemlp"}

	// The profile's catalog holds them, derived from their files, and the
	// profile keeps the very bytes it timed.
	cat, err := catalog.Read(one("profile/*/" + catalog.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range mine {
		m, ok := cat.Lookup(name)
		if !ok || m.File != name+".onnx" || !slices.Equal(m.Precisions, []string{catalog.FP32}) || m.FLOPsPerSample <= 0 {
			t.Errorf("catalog entry of %s: %+v, %v", name, m, ok)
		}
		if b, err := os.ReadFile(one("profile/*/" + name + ".onnx")); err != nil || !bytes.Equal(b, files[name]) {
			t.Errorf("the profile's %s.onnx is not the file's bytes (%v)", name, err)
		}
	}

	// The workload holds their jobs, in fp32 only (what the files hold),
	// beside the mlp's fp16 ones.
	jobs, err := parquetio.ReadAll[generate.Job](one("generate/*/" + generatespec.JobsFile(generatespec.WorkloadEval)))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	model := map[int64]string{}
	for _, j := range jobs {
		count[j.Model+" "+j.Precision]++
		model[j.ID] = j.Model
	}
	for _, k := range []string{"mobilenet fp32", "widemlp fp32", "mlp fp16"} {
		if count[k] == 0 {
			t.Errorf("no %s jobs in the eval workload: %v", k, count)
		}
	}
	for _, k := range []string{"mobilenet fp16", "widemlp fp16"} {
		if count[k] > 0 {
			t.Errorf("%d %s jobs: a file holding fp32 has none", count[k], k)
		}
	}

	// The simulations and the real run served them.
	sched := one("schedule/*")
	runs, err := parquetio.ReadAll[schedulespec.RealRunRow](filepath.Join(sched, schedulespec.RealRunsFile))
	if err != nil || len(runs) != 1 {
		t.Fatalf("real runs: %+v, %v", runs, err)
	}
	for _, trace := range []string{filepath.Join(sched, "fifo", schedulespec.TraceFile), filepath.Join(sched, runs[0].Trace)} {
		rows, err := parquetio.ReadAll[schedulespec.TraceRow](trace)
		if err != nil {
			t.Fatal(err)
		}
		served := map[string]int{}
		for _, r := range rows {
			if r.Device != "" {
				served[model[r.JobID]]++
			}
		}
		for _, name := range mine {
			if served[name] == 0 {
				t.Errorf("%s: no %s job served: %v", strings.TrimPrefix(trace, p.dir), name, served)
			}
		}
	}

	// The report has their rows: the profile's latencies, and their jobs.
	md := string(p.read("reports/report.md"))
	for _, name := range mine {
		if n := strings.Count(md, name); n < 2 {
			t.Errorf("the report names %s %d times; want its profile rows and its jobs' rows", name, n)
		}
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
