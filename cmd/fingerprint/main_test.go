package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/codeversion"
)

// newModule writes a small module with two stages and the registry package
// that the generated file goes into, and returns its root.
func newModule(t *testing.T) string {
	t.Helper()
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv(codeversion.DebugEnv, "")
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":             "module example.com/m\n\ngo 1.26\n",
		"stages/one/one.go":  "package one\n\nfunc Run() int { return 1 }\n",
		"stages/two/two.go":  "package two\n\nfunc Run() int { return 2 }\n",
		"stages/registry.go": "package stages\n\nimport (\n\t\"example.com/m/stages/one\"\n\t\"example.com/m/stages/two\"\n)\n\nvar registry = []func() int{one.Run, two.Run}\n",
	} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	root := newModule(t)
	t.Chdir(root)
	args := []string{"-root", ".", "-under", "stages", "-o", "stages/codeversion_gen.go", "-pkg", "stages"}
	out := filepath.Join(root, "stages", "codeversion_gen.go")

	var stderr bytes.Buffer
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("run(%q) = %d, want 0; stderr:\n%s", args, code, &stderr)
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := codeversion.Generate(root, "stages", out, "stages")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, want) {
		t.Errorf("written file =\n%s\nwant what Generate returns:\n%s", first, want)
	}
	for _, s := range []string{codeversion.GeneratedHeader, `"stages/one":`, `"stages/two":`} {
		if !bytes.Contains(first, []byte(s)) {
			t.Errorf("written file lacks %s:\n%s", s, first)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("written file mode = %v (err %v), want 0644", fi.Mode().Perm(), err)
	}

	// Unchanged content: the file, its modification time included, stays.
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(out, past, past); err != nil {
		t.Fatal(err)
	}
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("second run = %d; stderr:\n%s", code, &stderr)
	}
	if fi, err := os.Stat(out); err != nil || !fi.ModTime().Equal(past) {
		t.Errorf("unchanged run touched the file: mtime %v (err %v), want %v", fi.ModTime(), err, past)
	}

	// A code change rewrites it.
	writeFile(t, filepath.Join(root, "stages", "two", "two.go"), "package two\n\nfunc Run() int { return 22 }\n")
	if code := run(args, &stderr); code != 0 {
		t.Fatalf("run after edit = %d; stderr:\n%s", code, &stderr)
	}
	second, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, second) {
		t.Errorf("editing stages/two did not change the generated file")
	}

	// No temporary files are left behind.
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in %s", e.Name(), filepath.Dir(out))
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("successful runs wrote to stderr:\n%s", &stderr)
	}
}

func TestRunErrors(t *testing.T) {
	root := newModule(t)
	writeFile(t, filepath.Join(root, "stages", "broken", "broken.go"), "package broken\n\nimport \"example.com/m/missing\"\n\nvar _ = missing.X\n")
	out := filepath.Join(root, "stages", "codeversion_gen.go")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown flag", []string{"-bogus"}, 2, "flag provided but not defined"},
		{"missing -o", []string{"-root", root, "-pkg", "stages"}, 2, "-o is required"},
		{"missing -pkg", []string{"-root", root, "-o", out}, 2, "-pkg is required"},
		{"extra argument", []string{"-root", root, "-o", out, "-pkg", "stages", "extra"}, 2, "unexpected arguments"},
		{"package fails to load", []string{"-root", root, "-o", out, "-pkg", "stages"}, 1, "example.com/m/missing"},
		{"not a module root", []string{"-root", t.TempDir(), "-o", out, "-pkg", "stages"}, 1, "go.mod"},
		{"help", []string{"-h"}, 0, "usage: fingerprint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tt.args, &stderr); code != tt.wantCode {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, code, tt.wantCode, &stderr)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, &stderr, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("failed runs wrote %s", out)
	}
}
