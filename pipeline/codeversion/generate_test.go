package codeversion

import (
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	offlineGo(t)
	root := newFixture(t, nil)
	src, err := Generate(root, "stages", "stages/codeversion_gen.go", "stages")
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if !strings.HasPrefix(string(src), GeneratedHeader+"\n") {
		t.Errorf("generated file does not start with %q:\n%s", GeneratedHeader, src)
	}
	if formatted, err := format.Source(src); err != nil || string(formatted) != string(src) {
		t.Errorf("generated file is not gofmt'ed (err %v):\n%s", err, src)
	}
	got := parseCodeVersions(t, src)
	want, err := Compute(root, stageDirs)
	if err != nil {
		t.Fatal(err)
	}
	// The output package ("stages") is left out; the test-only package has
	// nothing to fingerprint.
	if !maps.Equal(got, want) {
		t.Errorf("generated codeVersions = %v, want %v", got, want)
	}

	// The committed file is part of its own package, which is excluded, so
	// writing it must not change what a fresh run generates. An absolute
	// output path means the same as a root-relative one.
	out := filepath.Join(root, "stages", "codeversion_gen.go")
	if err := os.WriteFile(out, src, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Generate(root, "stages", out, "stages")
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(src) {
		t.Errorf("Generate after writing its output =\n%s\nwant\n%s", again, src)
	}
}

// parseCodeVersions extracts the codeVersions map from a generated file.
func parseCodeVersions(t *testing.T, src []byte) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "gen.go", src, 0)
	if err != nil {
		t.Fatalf("generated file does not parse: %v\n%s", err, src)
	}
	if f.Name.Name != "stages" {
		t.Errorf("generated package = %s, want stages", f.Name.Name)
	}
	out := make(map[string]string)
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		k, _ := strconv.Unquote(kv.Key.(*ast.BasicLit).Value)
		v, _ := strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
		out[k] = v
		return false
	})
	return out
}

func TestGenerateErrors(t *testing.T) {
	offlineGo(t)
	root := newFixture(t, nil)
	tests := []struct {
		name, under, out, pkg string
		wantErr               string
	}{
		{"bad package name", "stages", "stages/gen.go", "func", "not a valid identifier"},
		{"blank package name", "stages", "stages/gen.go", "_", "not a valid identifier"},
		{"missing under", "nope", "stages/gen.go", "stages", "under"},
		{"output outside the module", "stages", filepath.Join(t.TempDir(), "gen.go"), "stages", "outside module root"},
		{"output directory missing", "stages", "nope/gen.go", "nope", "output file"},
		// lib is imported by stages/a: a file generated into lib would feed
		// its own input.
		{"output package imported by a stage", "stages", "lib/gen.go", "lib", "depends on lib, the package of gen.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(root, tt.under, tt.out, tt.pkg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Generate(%q, %q, %q) error = %v, want one containing %q", tt.under, tt.out, tt.pkg, err, tt.wantErr)
			}
		})
	}
}
