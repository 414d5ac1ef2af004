package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// publishing is a harness whose stage a publishes model.onnx ("weights")
// to models/, with the store's publish index.
func publishing(t *testing.T) (h *harness, build func() *Pipeline) {
	t.Helper()
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		return os.WriteFile(filepath.Join(env.Dir, "model.onnx"), []byte("the model's weights"+a.cfg.Text), 0o644)
	}
	h = newHarness(t, a)
	build = func() *Pipeline {
		r := NewRegistry()
		s := a.stage()
		s.Publish = []Publish{{Glob: "*.onnx", Dir: "models"}}
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
		p := h.pipeline()
		p.Graph, _ = r.Graph()
		p.Root = h.dir
		p.PublishIndex = filepath.Join(h.dir, "data", ".published.json")
		return p
	}
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	return h, build
}

// TestPublishedCopyDamagedInPlace (issue 29, item 8): a byte flipped in a
// published copy, its mtime kept, passed run, run --force and verify
// ("all intact"). verify now checks every copy against the digest its
// folder's provenance.json and the store hold, and a run, cached or not,
// puts back a copy whose bytes changed, which it tells without reading an
// untouched copy: the change moved the copy's ctime, which its index
// recorded.
func TestPublishedCopyDamagedInPlace(t *testing.T) {
	h, build := publishing(t)
	var hashed atomic.Int32
	testHookPublishHash = func(string) { hashed.Add(1) }
	t.Cleanup(func() { testHookPublishHash = nil })
	dst := filepath.Join(h.dir, "models", "model.onnx")
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if n := hashed.Load(); n != 0 {
		t.Errorf("a cached run over an untouched copy read it %d time(s)", n)
	}
	if problems, _, err := build().Verify(context.Background()); err != nil || len(problems) != 0 {
		t.Fatalf("verify of an intact project: %v, %v", problems, err)
	}

	want, _ := fileSHA256(dst)
	flipByte(t, dst, 3)
	got, _ := fileSHA256(dst)
	problems, _, err := build().Verify(context.Background())
	if err != nil || len(problems) != 1 || problems[0].Path != "models/model.onnx" ||
		!strings.Contains(problems[0].String(), "sha256 "+got) || !strings.Contains(problems[0].String(), want) || !strings.Contains(problems[0].String(), "a@") {
		t.Errorf("verify of a damaged published copy = %v, %v; want one problem naming models/model.onnx, its stage and both digests", problems, err)
	}

	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "the model's weights" {
		t.Errorf("the cached run left the damaged copy: %q", b)
	}
	if n := hashed.Load(); n != 1 {
		t.Errorf("the cached run read the changed copy %d time(s), want once", n)
	}
	if problems, _, err := build().Verify(context.Background()); err != nil || len(problems) != 0 {
		t.Errorf("verify after the run: %v, %v", problems, err)
	}
	hashed.Store(0)
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil || hashed.Load() != 0 {
		t.Errorf("the next cached run: %v, and it read the copy it had just put back %d time(s)", err, hashed.Load())
	}
}

// TestPublishRefusesADamagedStoredFile: publish never copies a stored file
// whose bytes differ from its manifest out of the store (a byte flipped,
// the mtime kept, which a cached run does not see); the run fails naming
// it, and the next run rebuilds it.
func TestPublishRefusesADamagedStoredFile(t *testing.T) {
	h, build := publishing(t)
	dst := filepath.Join(h.dir, "models", "model.onnx")
	stored, _ := filepath.Glob(filepath.Join(h.dir, "data", "a", "*", "model.onnx"))
	if len(stored) != 1 {
		t.Fatalf("stored model.onnx: %v", stored)
	}
	flipByte(t, stored[0], 3)
	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	_, err := build().Run(context.Background(), RunOptions{Jobs: 1})
	if !errors.Is(err, ErrInputDamaged) || !strings.Contains(err.Error(), "a@"+filepath.Base(filepath.Dir(stored[0]))) || !strings.Contains(err.Error(), "model.onnx") {
		t.Errorf("run publishing a damaged stored file = %v, want a refusal naming a's version and model.onnx", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged bytes were published: %v", err)
	}
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatalf("the next run: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "the model's weights" {
		t.Errorf("published after the rebuild: %q", b)
	}
}

// TestVerifyTakesAStaleProvenanceForIntact: a publisher killed between a
// copy and its provenance file leaves a copy of another stored version
// than the one the provenance names; its bytes are a stored file's, whole,
// and the next run corrects the record, so verify reports nothing.
func TestVerifyTakesAStaleProvenanceForIntact(t *testing.T) {
	h, build := publishing(t)
	pv := filepath.Join(h.dir, "models", ProvenanceName)
	before, err := os.ReadFile(pv)
	if err != nil {
		t.Fatal(err)
	}
	h.fakes[0].cfg.Text = ", retrained"
	if _, err := build().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pv, before, 0o644); err != nil { // as if killed before it was rewritten
		t.Fatal(err)
	}
	if problems, _, err := build().Verify(context.Background()); err != nil || len(problems) != 0 {
		t.Errorf("verify = %v, %v; want nothing damaged", problems, err)
	}
}

// TestPublishIndexNamesCopiesAbsolutely: a project published from its own
// folder (Root ".", as mlsched run there has it) is indexed by absolute
// paths, which a run from another folder (--config elsewhere/x.yaml)
// finds the same.
func TestPublishIndexNamesCopiesAbsolutely(t *testing.T) {
	h, build := publishing(t)
	t.Chdir(h.dir)
	p := build()
	p.Root = "."
	if _, err := p.Run(context.Background(), RunOptions{Jobs: 1, Force: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.PublishIndex)
	var idx publishIndexFile
	if err == nil {
		err = json.Unmarshal(b, &idx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.Copies[filepath.Join(h.dir, "models", "model.onnx")]; !ok || len(idx.Copies) != 1 {
		t.Errorf("publish index copies %v, want models/model.onnx by its absolute path alone", idx.Copies)
	}
}
