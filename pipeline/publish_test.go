package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPublishAndNotes(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		env.Notes["machine"] = "test box"
		os.WriteFile(filepath.Join(env.Dir, "model.onnx"), []byte("weights"), 0o644)
		return os.WriteFile(filepath.Join(env.Dir, "table.parquet"), []byte("not published"), 0o644)
	}
	h := newHarness(t, a)
	build := func() *Pipeline {
		r := NewRegistry()
		s := a.stage()
		s.Publish = []Publish{{Glob: "*.onnx", Dir: "models"}}
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
		p := h.pipeline()
		p.Graph, _ = r.Graph()
		p.Root = h.dir
		return p
	}
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(h.dir, "models", "model.onnx")
	if b, err := os.ReadFile(dst); err != nil || string(b) != "weights" {
		t.Fatalf("published model.onnx = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "models", "table.parquet")); err == nil {
		t.Error("a file outside the glob was published")
	}
	p := build()
	st := mustStatus(t, p)["a"]
	m, _ := p.Store.Manifest("a", st.Version)
	if m.Notes["machine"] != "test box" {
		t.Errorf("manifest notes = %v", m.Notes)
	}

	// A cached run leaves a current copy alone and restores a damaged one.
	before, _ := os.Stat(dst)
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(dst)
	if !os.SameFile(before, after) {
		t.Error("a cached run copied an up-to-date published file again")
	}
	os.WriteFile(dst, []byte("edited by hand"), 0o644)
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "weights" {
		t.Errorf("damaged published copy not restored: %q", b)
	}
	if a.runs.Load() != 1 {
		t.Errorf("stage ran %d times, want 1", a.runs.Load())
	}
}

// TestPublishRemovesDeadPublishersTemps: a publisher killed mid-copy leaves
// its temporary file beside the destination; the next run, even a cached
// one, removes it once its process is gone, and leaves a live one's and
// files of other names alone.
func TestPublishRemovesDeadPublishersTemps(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		return os.WriteFile(filepath.Join(env.Dir, "model.onnx"), []byte("weights"), 0o644)
	}
	h := newHarness(t, a)
	run := func() {
		t.Helper()
		r := NewRegistry()
		s := a.stage()
		s.Publish = []Publish{{Glob: "*.onnx", Dir: "models"}}
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
		p := h.pipeline()
		p.Graph, _ = r.Graph()
		p.Root = h.dir
		if _, err := p.Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
			t.Fatal(err)
		}
	}
	run()
	gone := goneProcess(t)
	models := filepath.Join(h.dir, "models")
	temps := map[string]bool{ // name → kept
		".model.onnx.tmp-" + strconv.Itoa(gone) + "-12345":         false,
		".model.onnx.tmp-" + strconv.Itoa(os.Getppid()) + "-12345": true,
		".other.bin.tmp-" + strconv.Itoa(gone) + "-678":            false,
		".model.onnx.tmp12345":                                     true, // not a publisher's name
		"notes.tmp-" + strconv.Itoa(gone) + "-1":                   true,
		strings.TrimSuffix(tempPattern("model.onnx", gone), "*"):   true, // no random part
	}
	for name := range temps {
		if err := os.WriteFile(filepath.Join(models, name), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run() // cached: copies nothing, cleans up
	for name, kept := range temps {
		if _, err := os.Stat(filepath.Join(models, name)); (err == nil) != kept {
			t.Errorf("models/%s: exists %v after a run, want %v", name, err == nil, kept)
		}
	}
	if b, err := os.ReadFile(filepath.Join(models, "model.onnx")); err != nil || string(b) != "weights" {
		t.Errorf("models/model.onnx = %q, %v", b, err)
	}
}
