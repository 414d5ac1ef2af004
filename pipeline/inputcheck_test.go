package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/digest"
)

// TestStageRefusesDamagedInputs (issue 29, item 7): a stage about to run
// on a stored file whose bytes no longer match its manifest (a byte
// flipped, the mtime kept, so that the cached run's size-and-mtime check
// passes it) used to run on it and exit 0, its output silently changed.
// Now the run refuses before the stage starts, naming the version, the
// file and both digests, and the next run rebuilds the damaged version.
// A file of the upstream the stage does not read is not its business.
func TestStageRefusesDamagedInputs(t *testing.T) {
	tests := []struct {
		name    string
		file    string // the file of a's version that is damaged
		refuses bool
	}{
		{"a file the stage reads", "out.txt", true},
		{"a file the stage does not read", "other.txt", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fake{name: "a", cfg: fakeConfig{N: 1}}
			a.run = func(ctx context.Context, env *Env) error {
				if err := a.write(env); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(env.Dir, "other.txt"), []byte("not read by b"), 0o644)
			}
			// b copies what it reads, as a stage that trusts its inputs does.
			b := &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}, reads: map[string][]string{"a": {"out.txt"}}}
			h := newHarness(t, a, b)
			h.mustRun(RunOptions{})
			path := filepath.Join(h.dir, "data", "a", "*", tt.file)
			m, _ := filepath.Glob(path)
			if len(m) != 1 {
				t.Fatalf("%s: %v", path, m)
			}
			want, err := digest.File(m[0])
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, m[0], 0)
			got, err := digest.File(m[0])
			if err != nil {
				t.Fatal(err)
			}
			version := filepath.Base(filepath.Dir(m[0]))
			before := h.runs()["b"]

			_, err = h.run(RunOptions{Targets: []string{"b"}, Force: true})
			if !tt.refuses {
				if err != nil {
					t.Fatalf("run with a file b does not read damaged: %v", err)
				}
				return
			}
			var dmg *InputDamagedError
			if !errors.As(err, &dmg) || !errors.Is(err, ErrInputDamaged) {
				t.Fatalf("run = %v, want an InputDamagedError wrapping ErrInputDamaged", err)
			}
			for _, s := range []string{"stage b", "nothing was run", "input a@" + version, tt.file, "sha256 " + got.SHA256, want.SHA256, "mlsched verify", "next 'mlsched run' rebuilds it"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not say %q:\n%v", s, err)
				}
			}
			if after := h.runs()["b"]; after != before {
				t.Errorf("b ran %d time(s) on its damaged input", after-before)
			}
			// The damaged version was marked: the next run rebuilds a with
			// the bytes it had, and b then has nothing new to read.
			wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Cached})
			if problems, _, err := h.pipeline().Verify(context.Background()); err != nil || len(problems) != 0 {
				t.Errorf("verify after the rebuild: %v, %v", problems, err)
			}
		})
	}
}

// TestStageRefusesADamagedReference: the version a Ref names is checked as
// an upstream's files are.
func TestStageRefusesADamagedReference(t *testing.T) {
	h, cmp, v1, _ := refHarness(t)
	m, _ := filepath.Glob(filepath.Join(h.dir, "data", "a", v1, "out.txt"))
	if len(m) != 1 {
		t.Fatalf("a@%s's out.txt: %v", v1, m)
	}
	flipByte(t, m[0], 0)
	_, err := withRef(h, v1).Run(context.Background(), RunOptions{Jobs: 1})
	if !errors.Is(err, ErrInputDamaged) || !strings.Contains(err.Error(), "cmp.compare_to reads a@"+v1) || !strings.Contains(err.Error(), "out.txt") {
		t.Errorf("run with a damaged reference = %v, want a refusal naming cmp.compare_to, a@%s and out.txt", err, v1)
	}
	if n := cmp.runs.Load(); n != 0 {
		t.Errorf("cmp ran %d time(s) on its damaged reference", n)
	}
}

// TestFileSHA256: the digest the check compares is the SHA-256 of a file's
// bytes, whatever they are: Parquet, a Parquet file cut short (which
// digest.File refuses), text, nothing.
func TestFileSHA256(t *testing.T) {
	dir := t.TempDir()
	a := &fake{name: "a", cfg: fakeConfig{N: 1}, parquet: true}
	h := newHarness(t, a)
	h.mustRun(RunOptions{})
	m, _ := filepath.Glob(filepath.Join(h.dir, "data", "a", "*", "out.parquet"))
	if len(m) != 1 {
		t.Fatalf("out.parquet: %v", m)
	}
	whole, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"whole.parquet", whole},
		{"cut.parquet", whole[:len(whole)-3]},
		{"notes.txt", []byte("just text\n")},
		{"empty", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			sum, err := fileSHA256(path)
			want := sha256.Sum256(tt.data)
			if err != nil || sum != hex.EncodeToString(want[:]) {
				t.Errorf("fileSHA256 = %s, %v; want %x", sum, err, want)
			}
		})
	}
	if _, err := fileSHA256(filepath.Join(dir, "absent")); err == nil {
		t.Error("fileSHA256 of a missing file: no error")
	}
}
