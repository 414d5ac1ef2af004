package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ranOnce is a tiny project that mlsched ran once, shared by the tests
// that only need a full store to damage: each works on a copy (ran), so
// that the pipeline runs once for all of them.
var ranOnce struct {
	sync.Once
	dir string
	err error
}

// ran returns a new project holding a copy of a tiny project mlsched ran
// once, mtimes kept, so that a plain run of it finds everything cached.
func ran(t *testing.T) *project {
	t.Helper()
	ranOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(mlschedBin), "ran-once")
		ranOnce.dir = dir
		if ranOnce.err = os.MkdirAll(dir, 0o755); ranOnce.err != nil {
			return
		}
		for from, to := range map[string]string{"tiny.yaml": "pipeline.yaml", "imported-profile.csv": "imported-profile.csv"} {
			b, err := os.ReadFile(filepath.Join("testdata", from))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, to), b, 0o644)
			}
			if err != nil {
				ranOnce.err = err
				return
			}
		}
		cmd := exec.Command(mlschedBin, "run")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			ranOnce.err = &exec.ExitError{Stderr: out}
		}
	})
	if ranOnce.err != nil {
		t.Fatalf("the shared run: %v\n%s", ranOnce.err, errOutput(ranOnce.err))
	}
	p := &project{t: t, dir: t.TempDir()}
	if out, err := exec.Command("cp", "-a", ranOnce.dir+"/.", p.dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the shared project: %v\n%s", err, out)
	}
	return p
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestRunTouchesNothingOutsideTheStore: a cached run removes from the
// store's .tmp only the scratch of dead runs. A .tmp that is a symbolic
// link is never followed, so the folder it points to keeps its files (a
// run deleted them); what someone put in a real .tmp stays.
func TestRunTouchesNothingOutsideTheStore(t *testing.T) {
	p := ran(t)
	tmp := filepath.Join(p.dir, "data", ".tmp")
	outside := filepath.Join(t.TempDir(), "X")
	if err := os.MkdirAll(filepath.Join(outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "sub", "f"), []byte("mine"), 0o644)
	os.RemoveAll(tmp)
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	if got := outcomes(p.mustCLI("run")); got["evaluate"] != "cached" {
		t.Errorf("run with a symlinked .tmp: %v, want everything cached", got)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "sub", "f")); err != nil || string(b) != "mine" {
		t.Errorf("a run with .tmp a symlink to %s left its file %q, %v; want it untouched", outside, b, err)
	}
	// A run that must write refuses the link, naming it.
	_, errs, code := p.cli("run", "--force", "generate")
	if code != 1 || !strings.Contains(errs, tmp) || !strings.Contains(errs, "symbolic link to "+outside) {
		t.Errorf("run --force generate with a symlinked .tmp: exit %d, want 1 naming %s and its target\n%s", code, tmp, errs)
	}

	os.Remove(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "keepme"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "keepme", "f"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(tmp, "note.txt"), []byte("mine"), 0o644)
	p.mustCLI("run", "--force", "generate")
	for _, f := range []string{filepath.Join("keepme", "f"), "note.txt"} {
		if _, err := os.Stat(filepath.Join(tmp, f)); err != nil {
			t.Errorf("a run removed .tmp/%s, which no run made: %v", f, err)
		}
	}
}

// TestNamedPipesInTheStoreAreRefused: a named pipe put in place of a
// version's file, a version's manifest or a memo entry's manifest is
// named, with what it is, by every command that meets it, at once: verify
// hung on one, printing nothing.
func TestNamedPipesInTheStoreAreRefused(t *testing.T) {
	const limit = 30 * time.Second
	mkfifo := func(t *testing.T, path string) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a version's file", func(t *testing.T) {
		p := ran(t)
		jobs := filepath.Join(p.dir, "data", "generate", p.onlyVersion(filepath.Join(p.dir, "data"), "generate"), "jobs-eval.parquet")
		mkfifo(t, jobs)
		out, errs, code := p.cliWithin(limit, "verify")
		if code != 1 || !strings.Contains(out, "jobs-eval.parquet") || !strings.Contains(out, "a named pipe (FIFO), not a regular file") {
			t.Errorf("verify: exit %d, want 1 naming jobs-eval.parquet, a named pipe\n%s%s", code, out, errs)
		}
		if st, _, _ := p.cliWithin(limit, "status", "generate"); !strings.Contains(st, "jobs-eval.parquet: a named pipe (FIFO)") {
			t.Errorf("status:\n%s", st)
		}
		p.env = []string{"MLSCHED_REMOTE=file://" + t.TempDir()}
		if _, errs, code := p.cliWithin(limit, "push", "generate"); code != 1 || !strings.Contains(errs, "jobs-eval.parquet: a named pipe (FIFO)") {
			t.Errorf("push: exit %d, want 1 naming the pipe\n%s", code, errs)
		}
		p.env = nil
		// The run rebuilds the version, the pipe with it.
		if got := outcomes(p.mustCLI("run", "generate")); got["generate"] != "ran" {
			t.Errorf("run after a pipe replaced a version's file: %v, want generate ran", got)
		}
		p.mustCLI("verify")
	})
	t.Run("a version's manifest", func(t *testing.T) {
		p := ran(t)
		train := p.onlyVersion(filepath.Join(p.dir, "data"), "train")
		manifest := filepath.Join(p.dir, "data", "train", train, "manifest.json")
		mkfifo(t, manifest)
		want := manifest + ": a named pipe (FIFO), not a regular file"
		for _, args := range [][]string{{"verify"}, {"ls", "train"}, {"show", "train@" + train}, {"status", "train"}, {"run"}} {
			out, errs, _ := p.cliWithin(limit, args...)
			if !strings.Contains(out+errs, want) {
				t.Errorf("mlsched %s: want %q\n%s%s", strings.Join(args, " "), want, out, errs)
			}
		}
	})
	t.Run("a memo entry's manifest", func(t *testing.T) {
		p := ran(t)
		entries, _ := filepath.Glob(filepath.Join(p.dir, "data", ".memo", "schedule", "*", "manifest.json"))
		if len(entries) == 0 {
			t.Fatal("the tiny run kept no memo entry")
		}
		mkfifo(t, entries[0])
		out, errs, code := p.cliWithin(limit, "verify")
		if code != 1 || !strings.Contains(out, entries[0]+": a named pipe (FIFO), not a regular file") {
			t.Errorf("verify: exit %d, want 1 naming %s, a named pipe\n%s%s", code, entries[0], out, errs)
		}
		if got := outcomes(p.mustCLI("run", "--force", "schedule")); got["schedule"] != "ran" {
			t.Errorf("run --force schedule with a pipe for a memo entry's manifest: %v", got)
		}
		p.mustCLI("verify")
	})
}

// TestALinkedVersionIsRefused: a version folder that is a symbolic link
// (to a copy outside the store with a byte flipped, its mtime kept) is
// refused by every command the same way, each naming the link and saying
// why; it was used as cached while ls left it out, show called it "no
// such version" and verify "all intact".
func TestALinkedVersionIsRefused(t *testing.T) {
	p := ran(t)
	store := filepath.Join(p.dir, "data")
	gen := p.onlyVersion(store, "generate")
	version := filepath.Join(store, "generate", gen)
	outside := filepath.Join(t.TempDir(), gen)
	if err := os.Rename(version, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, version); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(outside, "jobs-eval.parquet")
	fi, _ := os.Stat(jobs)
	b, _ := os.ReadFile(jobs)
	b[len(b)/3] ^= 0xff
	os.WriteFile(jobs, b, 0o644)
	os.Chtimes(jobs, fi.ModTime(), fi.ModTime())

	want := version + ": a symbolic link to " + outside
	why := "never follows a link out of itself"
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"ls", "generate"}, 0},
		{[]string{"show", "generate@" + gen[:8]}, 1},
		{[]string{"verify"}, 1},
		{[]string{"status", "generate"}, 0},
		{[]string{"run"}, 1},
		{[]string{"run", "--force", "generate"}, 1},
	} {
		out, errs, code := p.cli(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, want) || !strings.Contains(out+errs, why) {
			t.Errorf("mlsched %s: exit %d, want %d and %q, %q\n%s%s", strings.Join(tt.args, " "), code, tt.code, want, why, out, errs)
		}
	}
	if fi, err := os.Lstat(version); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if got, _ := os.ReadFile(jobs); string(got) != string(b) {
		t.Error("a command changed the file the link points to")
	}
}

// readOnly makes the project's store one that mlsched cannot write: its
// files without write permission, and, for root, whom permissions do not
// stop, mlsched run as nobody (who may read the project and run mlsched).
func readOnly(t *testing.T, p *project) {
	t.Helper()
	store := filepath.Join(p.dir, "data")
	if out, err := exec.Command("chmod", "-R", "a-w", store).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", store).Run() })
	if os.Geteuid() != 0 {
		return
	}
	p.as = &syscall.Credential{Uid: 65534, Gid: 65534}
	for _, dir := range []string{p.dir, filepath.Dir(p.dir), filepath.Dir(mlschedBin)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, code := p.cli("version"); code != 0 {
		t.Skipf("mlsched cannot run as nobody here: %s", errs)
	}
}

// TestReadOnlyStoreServesCachedRuns: a store mlsched may not write (a
// shared read-only copy) serves a run that finds everything cached, which
// failed opening the store's lock file for writing; a run that would have
// to write says the store is read-only. ls, status and verify read it.
func TestReadOnlyStoreServesCachedRuns(t *testing.T) {
	p := ran(t)
	p.mustCLI("run") // this project's store path into provenance.json
	readOnly(t, p)
	if got := outcomes(p.mustCLI("run")); got["evaluate"] != "cached" || got["generate"] != "cached" {
		t.Errorf("run on a read-only store: %v, want everything cached", got)
	}
	store := filepath.Join(p.dir, "data")
	_, errs, code := p.cli("run", "--force", "generate")
	if code != 1 || !strings.Contains(errs, store+" is read-only") || !strings.Contains(errs, "generate") {
		t.Errorf("run --force generate on a read-only store: exit %d, want 1 saying %s is read-only\n%s", code, store, errs)
	}
	for _, args := range [][]string{{"ls"}, {"status"}, {"verify"}} {
		p.mustCLI(args...)
	}
}

// TestRemoteApartFromTheStore: a file remote that is the store's folder,
// or a folder inside it, is refused before anything is read or written,
// naming both: one was accepted, its push wrote the remote's layout into
// the store, and verify then reported damaged versions.
func TestRemoteApartFromTheStore(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	store := filepath.Join(p.dir, "data")
	for _, remote := range []string{store, filepath.Join(store, "remote"), store + "/"} {
		for _, cmd := range []string{"status", "push", "pull"} {
			_, errs, code := p.cli("--set", "remote=file://"+remote, cmd)
			if code != 2 || !strings.Contains(errs, "file://"+remote) || !strings.Contains(errs, "store "+store) {
				t.Errorf("%s with remote file://%s: exit %d, want 2 naming the remote and the store %s\n%s", cmd, remote, code, store, errs)
			}
		}
	}
	if ents, _ := os.ReadDir(store); len(ents) != 0 {
		t.Errorf("the refused commands wrote into the store: %d entries", len(ents))
	}
	// A remote beside the store is fine.
	p.mustCLI("--set", "remote=file://"+filepath.Join(p.dir, "remote"), "status")
}

// TestControlCharactersAreEscaped: control characters in a path reach the
// terminal escaped, as a quoted Go string writes them, in output and in
// errors alike; an escape sequence in a store's path recoloured the
// terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	store := filepath.Join(p.dir, "st\x1b[31mred\a")
	config := filepath.Join(p.dir, "x\x1b[2Jy\r.yaml")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", store, "verify"}, `st\x1b[31mred\a`},
		{[]string{"--config", config, "status"}, `x\x1b[2Jy\r.yaml`},
		{[]string{"--set", "store=" + store + "/\u009b", "verify"}, `st\x1b[31mred\a/\u009b`},
		{[]string{"--set", "store=" + store + "/\xff", "verify"}, `st\x1b[31mred\a/\xff`},
	} {
		out, errs, _ := p.cli(tt.args...)
		if strings.ContainsAny(out+errs, "\x1b\a\r\u009b") {
			t.Errorf("mlsched %q printed control characters raw:\n%q%q", tt.args, out, errs)
		}
		if !strings.Contains(out+errs, tt.want) {
			t.Errorf("mlsched %q: want %s in\n%s%s", tt.args, tt.want, out, errs)
		}
	}
}

func TestEscapeControl(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain/path.parquet", "plain/path.parquet"},
		{"lines\nand\ttabs", "lines\nand\ttabs"},
		{"é ü 日本 ✓", "é ü 日本 ✓"},
		{"st\x1b[31mred", `st\x1b[31mred`},
		{"bell\a back\b ff\f cr\r vt\v nul\x00 del\x7f", `bell\a back\b ff\f cr\r vt\v nul\x00 del\x7f`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"bad \xff utf8", `bad \xff utf8`},
	}
	for _, tt := range tests {
		if got := escapeControl(tt.in); got != tt.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A character split between two writes is written whole.
	var b strings.Builder
	e := &controlEscaper{w: &b}
	s := "日\x1b本"
	for i := range len(s) {
		e.Write([]byte{s[i]})
	}
	e.Write([]byte{0xe6})
	e.Flush()
	if want := `日\x1b本\xe6`; b.String() != want {
		t.Errorf("controlEscaper wrote %q byte by byte, want %q", b.String(), want)
	}
}
