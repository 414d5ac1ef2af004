package profile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// writeModel writes a model file into dir and returns its path.
func writeModel(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// figures are a catalog entry's figures and signature, without what
// names where it came from (name, description, file).
func figures(m catalog.Model) catalog.Model {
	m.Name, m.Description, m.File, m.SHA256 = "", "", "", ""
	return m
}

// TestZooFileMatchesBuiltIn writes each zoo model to a file, names it in
// profile.models as a model of the user's, and checks that the catalog
// the profile derives from the file holds the built-in entry's figures:
// a file is profiled as the zoo's own models are.
func TestZooFileMatchesBuiltIn(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Measure = false
	cfg.Models = nil
	for _, name := range zoo.Names() {
		b, err := zoo.Build(name, zoo.Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Models = append(cfg.Models, Model{Name: "my-" + name, File: writeModel(t, dir, name, b)})
	}
	ms, err := loadModels(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range zoo.Names() {
		t.Run(name, func(t *testing.T) {
			built, _ := catalog.Zoo().Lookup(name)
			mine, ok := ms.cat.Lookup("my-" + name)
			if !ok {
				t.Fatalf("the catalog has no my-%s: %v", name, ms.cat.Names())
			}
			// The zoo builds either precision; a file holds one.
			built.Precisions = []string{catalog.FP32}
			if got, want := figures(mine), figures(built); !reflect.DeepEqual(got, want) {
				t.Errorf("from the file %+v\nbuilt in       %+v", got, want)
			}
			if mine.File != name+".onnx" || len(mine.SHA256) != 64 || !strings.Contains(mine.Description, name+".onnx") {
				t.Errorf("file %q, sha256 %q, description %q: want the file named", mine.File, mine.SHA256, mine.Description)
			}
		})
	}
}

// TestFileModelsProfiled profiles two test models from files, one held in
// fp32 and one in fp16, beside a zoo model, and checks what the profile
// writes: their catalog rows, their samples in the precision each file
// holds only, their contention rows, and the very bytes of each file as
// the model it timed.
func TestFileModelsProfiled(t *testing.T) {
	if testing.Short() {
		t.Skip("measures inference")
	}
	lib := library(t)
	mobile, err := testmodels.MobileNet(zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := testmodels.WideMLP(zoo.FP16, 1)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	cfg := DefaultConfig()
	cfg.Models = []Model{{Name: "mlp"}, {Name: "mobile", File: writeModel(t, src, "mobile", mobile.ONNX)},
		{Name: "wide", File: writeModel(t, src, "wide", wide.ONNX)}}
	cfg.Precisions = []string{FP32, FP16}
	cfg.BatchSizes = []int{1, 2}
	cfg.Threads = []int{1}
	cfg.Warmup, cfg.Repeats, cfg.MinRepeats, cfg.MinTime, cfg.MaxRepeats, cfg.MaxTime = 1, 3, 3, 0, 3, time.Second
	cfg.MatMul = MatMul{Sizes: []int{64}, Repeats: 2}
	cfg.Contention = Contention{Models: []string{"mobile"}, Batch: 1, Sessions: []int{1, 2}, Repeats: 2, Rounds: 1}
	cfg.Serving.BatchSizes = nil
	dir := t.TempDir()
	if err := Run(context.Background(), cfg, 1, lib, "", Output{Dir: dir, Metadata: map[string]string{parquetio.KeyStage: "profile"}}); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Read(filepath.Join(dir, catalog.File))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mlp", "resnet18", "resnet50", "vit", "mobile", "wide"}; !slices.Equal(cat.Names(), want) {
		t.Errorf("catalog %v, want %v", cat.Names(), want)
	}
	for _, tt := range []struct {
		name string
		m    testmodels.Model
		prec string
	}{{"mobile", mobile, FP32}, {"wide", wide, FP16}} {
		c, _ := cat.Lookup(tt.name)
		if c.FLOPsPerSample != 2*tt.m.MACs || c.Params != tt.m.Params || !slices.Equal(c.Precisions, []string{tt.prec}) ||
			!slices.Equal(c.InputShape, tt.m.Input) {
			t.Errorf("%s: catalog %+v; want %d FLOPs, %d params, %s, input %v", tt.name, c, 2*tt.m.MACs, tt.m.Params, tt.prec, tt.m.Input)
		}
		got, err := os.ReadFile(filepath.Join(dir, ModelFile(tt.name, tt.prec)))
		if err != nil || !bytes.Equal(got, tt.m.ONNX) {
			t.Errorf("%s: the profile's %s is not the file's bytes (%v)", tt.name, ModelFile(tt.name, tt.prec), err)
		}
	}
	samples, err := parquetio.ReadAll[Sample](filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, s := range samples {
		if s.Kind == KindInference || s.Kind == KindContention {
			rows[s.Kind+" "+s.Model+" "+s.Precision]++
		}
	}
	for _, want := range []string{"inference mlp fp32", "inference mlp fp16", "inference mobile fp32", "inference wide fp16", "contention mobile fp32"} {
		if rows[want] == 0 {
			t.Errorf("no %s rows; rows %v", want, rows)
		}
	}
	for _, absent := range []string{"inference mobile fp16", "inference wide fp32"} {
		if rows[absent] > 0 {
			t.Errorf("%d %s rows: a file is measured in the precision it holds", rows[absent], absent)
		}
	}
}
