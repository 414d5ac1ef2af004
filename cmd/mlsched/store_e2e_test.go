package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

// onlyVersion returns the one stored version of a stage.
func (p *project) onlyVersion(store, stage string) string {
	p.t.Helper()
	vs, _ := filepath.Glob(filepath.Join(store, stage, "*"))
	if len(vs) != 1 {
		p.t.Fatalf("%s versions in %s: %v", stage, store, vs)
	}
	return filepath.Base(vs[0])
}

// TestDamageIsNamed: what a careless or hostile hand does to a store is
// named by the commands that meet it, and the next run repairs it.
func TestDamageIsNamed(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	store := filepath.Join(p.dir, "data")

	// A typo that would fill the disk is refused before anything is
	// written, giving the estimate and the free space.
	// (At a million jobs a second: a trillion at the default rate spans
	// more time than a trace resolves, a config error.)
	_, errs, code := p.cli("run", "generate", "--set", "generate.eval.jobs=1000000000000", "--set", "generate.eval.arrival.rate=1000000")
	if code != 1 || !strings.Contains(errs, "TiB") || !strings.Contains(errs, "free") || !strings.Contains(errs, "generate.eval.jobs") {
		t.Errorf("run with a trillion jobs: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(store, "generate")); err == nil {
		t.Error("the refused run wrote a version")
	}

	p.mustCLI("run")

	// A store that is a regular file is refused.
	file := filepath.Join(p.dir, "not-a-store")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, errs, code := p.cli("--store", file, "status"); code != 2 || !strings.Contains(errs, "--store "+file) || !strings.Contains(errs, "not a directory") {
		t.Errorf("status --store FILE: exit %d\n%s", code, errs)
	}

	// A file whose mtime changed is not reported up to date.
	train := p.onlyVersion(store, "train")
	ms, _ := filepath.Glob(filepath.Join(store, "train", train, "predictor.json"))
	later := time.Now().Add(time.Hour)
	os.Chtimes(ms[0], later, later)
	if st := p.mustCLI("status", "train"); !strings.Contains(st, "damaged?") {
		t.Errorf("status after a file's mtime changed:\n%s", st)
	}

	// A byte flipped in an input, its mtime restored: the failing stage
	// names the version, the file and the remedy, and the next run
	// rebuilds the input.
	gen := p.onlyVersion(store, "generate")
	jobs := filepath.Join(store, "generate", gen, "jobs-eval.parquet")
	fi, _ := os.Stat(jobs)
	b, _ := os.ReadFile(jobs)
	b[len(b)/3] ^= 0xff
	os.WriteFile(jobs, b, 0o644)
	os.Chtimes(jobs, fi.ModTime(), fi.ModTime())
	_, errs, code = p.cli("run", "--force", "schedule")
	for _, want := range []string{"generate@" + gen, "jobs-eval.parquet damaged", "mlsched verify", "rebuilds it"} {
		if code != 1 || !strings.Contains(errs, want) {
			t.Errorf("run --force schedule on a damaged input: exit %d, want 1 and %q\n%s", code, want, errs)
		}
	}
	if got := outcomes(p.mustCLI("run")); got["generate"] != "ran" {
		t.Errorf("the run after a damaged input: %v, want generate ran", got)
	}
	p.mustCLI("verify")

	// A damaged manifest is named by ls and show, not left out.
	eval := p.onlyVersion(store, "evaluate")
	manifest := filepath.Join(store, "evaluate", eval, pipeline.ManifestName)
	os.WriteFile(manifest, []byte(`{"schema": 1, "stage": "evaluate", `), 0o644)
	if out := p.mustCLI("ls", "evaluate"); !strings.Contains(out, "UNREADABLE evaluate@"+eval) || !strings.Contains(out, manifest) {
		t.Errorf("ls with a damaged manifest:\n%s", out)
	}
	if _, errs, code := p.cli("show", "evaluate"); code == 0 || !strings.Contains(errs, "damaged manifest") || !strings.Contains(errs, manifest) {
		t.Errorf("show with a damaged manifest: exit %d\n%s", code, errs)
	}
	if _, errs, code := p.cli("show", "evaluate@"+eval[:6]); code == 0 || !strings.Contains(errs, "damaged manifest") {
		t.Errorf("show STAGE@VERSION with a damaged manifest: exit %d\n%s", code, errs)
	}
}

// TestAnotherStoreKeepsItsOwnLock: a run against another store (--store)
// leaves the config's pipeline.lock alone, so --locked and gc on the
// config's store go by its own record; published files name their store.
func TestAnotherStoreKeepsItsOwnLock(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	lockA, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	p.mustCLI("--store", other, "--set", "generate.eval.jobs=500", "run")
	if after, _ := os.ReadFile(filepath.Join(p.dir, "pipeline.lock")); !bytes.Equal(after, lockA) {
		t.Error("a run against another store rewrote the config's pipeline.lock")
	}
	if _, err := os.Stat(filepath.Join(other, "pipeline.lock")); err != nil {
		t.Errorf("the other store keeps no lock file of its own: %v", err)
	}
	provenance := func() pipeline.Source {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(p.dir, "reports", pipeline.ProvenanceName))
		var pv pipeline.Provenance
		if err == nil {
			err = json.Unmarshal(b, &pv)
		}
		if err != nil {
			t.Fatalf("reports/%s: %v", pipeline.ProvenanceName, err)
		}
		return pv.Files["report.md"]
	}
	if src := provenance(); src.Store != other || src.Stage != "evaluate" {
		t.Errorf("report.md's provenance after the other store's run: %+v", src)
	}
	if out := p.mustCLI("--store", other, "verify"); !strings.Contains(out, "all intact") {
		t.Errorf("verify of the other store:\n%s", out)
	}

	p.mustCLI("run", "--locked")
	if src := provenance(); src.Store != filepath.Join(p.dir, "data") {
		t.Errorf("report.md's provenance after the config's store's run: %+v", src)
	}
	if out := p.mustCLI("gc", "--keep", "0"); !strings.Contains(out, "Removed 0 version(s)") {
		t.Errorf("gc of the config's store after a run against another:\n%s", out)
	}
	p.mustCLI("verify")
}

// TestFreshCloneVerifies: the files this repository tracks in its store
// folder (data/) are the whole store of a fresh clone, and verify finds
// nothing wrong with them; examples kept inside the store once made every
// fresh clone's verify fail.
func TestFreshCloneVerifies(t *testing.T) {
	root := filepath.Join("..", "..")
	tracked, err := exec.Command("git", "-C", root, "ls-files", "data", "pipeline.yaml").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Fields(string(tracked)) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &project{t: t, dir: dir}
	if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
		t.Errorf("verify on a fresh clone's store:\n%s", out)
	}
}
