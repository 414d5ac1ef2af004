package stages

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// TestGenerateImportEntersTheKey checks that an imported workload's content
// enters the generate stage's key under its config key, that a path that is
// not a regular file is refused before anything reads it, and that train
// and eval may not be the same jobs.
func TestGenerateImportEntersTheKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("eval.csv", "arrival_s,model,batch_size,class\n0,mlp,1,batch\n")
	write("train.csv", "arrival_s,model,batch_size,class\n0,vit,1,batch\n")
	rt := Runtime{ConfigDir: dir}
	extern := func(cfg Config) (map[string]string, error) {
		t.Helper()
		s, err := generateStage.Declare(cfg, rt)
		return s.Extern, err
	}
	cfg := DefaultConfig()
	cfg.Generate.Eval.Import = "eval.csv"
	first, err := extern(cfg)
	if err != nil || len(first["generate.eval.import"]) != 64 || len(first) != 1 {
		t.Fatalf("Extern = %v, %v; want the eval import's digest", first, err)
	}
	write("eval.csv", "arrival_s,model,batch_size,class\n0,mlp,2,batch\n")
	if second, _ := extern(cfg); second["generate.eval.import"] == first["generate.eval.import"] {
		t.Error("editing the imported file left the key as it was")
	}
	cfg.Generate.Train.Import = "train.csv"
	if both, err := extern(cfg); err != nil || len(both) != 2 {
		t.Errorf("two imports: Extern = %v, %v", both, err)
	}
	write("train.csv", "arrival_s,model,batch_size,class\n0,mlp,2,batch\n")
	if _, err := extern(cfg); err == nil || !strings.Contains(err.Error(), "generate.eval.import: holds the same jobs as generate.train.import") {
		t.Errorf("train and eval the same jobs: %v", err)
	}
	// The holdout workload is one of them: its import enters the key,
	// and may not be the train workload's jobs either.
	write("holdout.csv", "arrival_s,model,batch_size,class\n0,resnet18,1,batch\n")
	cfg = DefaultConfig()
	cfg.Generate.Holdout.Import = "holdout.csv"
	if h, err := extern(cfg); err != nil || len(h["generate.holdout.import"]) != 64 {
		t.Errorf("a holdout import: Extern = %v, %v; want its digest", h, err)
	}
	cfg.Generate.Train.Import = "holdout.csv"
	if _, err := extern(cfg); err == nil || !strings.Contains(err.Error(), "generate.holdout.import: holds the same jobs as generate.train.import") {
		t.Errorf("train and holdout the same jobs: %v", err)
	}
	if shipped, files := ShipImports(cfg, rt); files["imports/generate.holdout.import/holdout.csv"] != filepath.Join(dir, "holdout.csv") ||
		shipped.Generate.Holdout.Import != "imports/generate.holdout.import/holdout.csv" {
		t.Errorf("ShipImports = %v, %v; want the holdout import among the files that travel", shipped.Generate.Holdout.Import, files)
	}

	if err := syscall.Mkfifo(filepath.Join(dir, "p.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg = DefaultConfig()
	cfg.Generate.Train.Import = "p.csv"
	if _, err := extern(cfg); err == nil || !strings.Contains(err.Error(), "generate.train.import: ") || !strings.Contains(err.Error(), "a named pipe") {
		t.Errorf("a named pipe: %v", err)
	}
	cfg.Generate.Train.Import = "missing.parquet"
	if _, err := extern(cfg); err == nil || !strings.Contains(err.Error(), "generate.train.import: ") {
		t.Errorf("a missing file: %v", err)
	}
	cfg.Generate.Train.Import = "trace.json"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `generate.train.import: want a .csv or .parquet file, got "trace.json"`) {
		t.Errorf("Validate with a .json import = %v", err)
	}
}

// TestModelFileEntersTheKey checks that a model file of profile.models
// enters the profile's key by its content and its base name, not the
// folder it lies in, that a missing one is refused naming its entry, and
// that it travels to a remote worker without touching the caller's
// config.
func TestModelFileEntersTheKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mine.onnx", "a/mine.onnx"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("not read here"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt := Runtime{ConfigDir: dir}
	declare := func(cfg Config) (pipeline.Stage, error) {
		t.Helper()
		return profileStage.Declare(cfg, rt)
	}
	cfg := DefaultConfig()
	cfg.Profile.Models = append(cfg.Profile.Models, profilespec.Model{Name: "mine", File: "mine.onnx"})
	first, err := declare(cfg)
	if err != nil || len(first.Extern["mine.onnx (model mine)"]) != 64 {
		t.Fatalf("Extern = %v, %v; want the model file's digest", first.Extern, err)
	}
	keyed, _ := first.Config.(profilespec.Config)
	if got := keyed.Models[len(keyed.Models)-1].File; got != "mine.onnx" || cfg.Profile.Models[4].File != "mine.onnx" {
		t.Errorf("keyed file %q, the config's %q", got, cfg.Profile.Models[4].File)
	}
	moved := cfg
	moved.Profile.Models = slices.Clone(cfg.Profile.Models)
	moved.Profile.Models[4].File = "a/mine.onnx"
	if second, err := declare(moved); err != nil || !reflect.DeepEqual(second.Extern, first.Extern) || !reflect.DeepEqual(second.Config, first.Config) {
		t.Errorf("the same file in another folder: %v, %v; want the same key inputs", second.Extern, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.onnx"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	if third, _ := declare(cfg); third.Extern["mine.onnx (model mine)"] == first.Extern["mine.onnx (model mine)"] {
		t.Error("editing the model file left the key as it was")
	}
	shipped, files := ShipImports(cfg, rt)
	if files["imports/profile.models.mine.file/mine.onnx"] != filepath.Join(dir, "mine.onnx") ||
		shipped.Profile.Models[4].File != "imports/profile.models.mine.file/mine.onnx" || cfg.Profile.Models[4].File != "mine.onnx" {
		t.Errorf("ShipImports = %v, %v; want the model file among the files that travel, the caller's config untouched", shipped.Profile.Models, files)
	}
	cfg.Profile.Models[4].File = "missing.onnx"
	if _, err := declare(cfg); err == nil || !strings.Contains(err.Error(), "profile.models[4].file: ") {
		t.Errorf("a missing model file: %v", err)
	}
}
