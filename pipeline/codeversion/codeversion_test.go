package codeversion

import (
	"archive/zip"
	"bytes"
	"flag"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is a throwaway module: stage a imports lib and embeds a template,
// stage b imports only the standard library, stage c imports a module
// replaced by a local directory, and package stages registers them all.
var fixture = map[string]string{
	"go.mod": `module example.com/m

go 1.26

require example.com/dep v0.0.0

replace example.com/dep => ./dep
`,
	"dep/go.mod": "module example.com/dep\n\ngo 1.22\n",
	"dep/dep.go": `// Package dep lives in a module replaced by a local directory.
package dep

// Name names the dependency.
func Name() string { return "dep" }
`,
	"lib/lib.go": `// Package lib is imported by stage a.
package lib

// Scale multiplies by a constant.
func Scale(x int) int {
	return x * 2 // doubled
}
`,
	"lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestScale(t *testing.T) {}\n",
	"stages/a/a.go": `// Package a renders a template.
package a

import (
	_ "embed"
	"strings"

	"example.com/m/lib"
)

//go:embed tmpl.txt
var tmpl string

// Run renders the template.
func Run(xs []int) string {
	out := []string{}
	for _, x := range xs {
		out = append(out, strings.Repeat(tmpl, lib.Scale(x)))
	}
	return strings.Join(out, ",")
}
`,
	"stages/a/tmpl.txt":  "hello\n",
	"stages/a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) {}\n",
	"stages/a/ignored.go": `//go:build ignore

package a

var Ignored = 1
`,
	"stages/b/b.go": "package b\n\n// Count counts.\nfunc Count(n int) int { return n + 1 }\n",
	"stages/c/c.go": "package c\n\nimport \"example.com/dep\"\n\n// Who names the dependency.\nfunc Who() string { return dep.Name() }\n",
	"stages/stages.go": `// Package stages registers the stages.
package stages

import (
	"example.com/m/stages/a"
	"example.com/m/stages/b"
	"example.com/m/stages/c"
)

var registry = []any{a.Run, b.Count, c.Who}
`,
	"stages/testonly/x_test.go": "package testonly\n",
}

var stageDirs = []string{"stages/a", "stages/b", "stages/c"}

// offlineGo makes the go command work on the fixture without network or
// workspace, whatever the developer's environment says.
func offlineGo(t *testing.T) {
	t.Helper()
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv(DebugEnv, "")
}

// writeTree writes files (slash paths relative to dir) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newFixture writes the fixture to a fresh directory, with overrides applied
// on top, and returns the directory.
func newFixture(t *testing.T, overrides map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, fixture)
	writeTree(t, dir, overrides)
	return dir
}

// edited returns the fixture's file name with old replaced by new, failing
// the test if old is not there: an edit that silently does nothing would make
// a "same fingerprint" case pass for the wrong reason.
func edited(t *testing.T, name, old, new string) map[string]string {
	t.Helper()
	if !strings.Contains(fixture[name], old) {
		t.Fatalf("fixture %s does not contain %q", name, old)
	}
	return map[string]string{name: strings.Replace(fixture[name], old, new, 1)}
}

func TestCompute(t *testing.T) {
	offlineGo(t)
	base, err := Compute(newFixture(t, nil), stageDirs)
	if err != nil {
		t.Fatalf("Compute(fixture): %v", err)
	}
	for _, dir := range stageDirs {
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(base[dir]) {
			t.Fatalf("Compute(fixture)[%s] = %q, want 64 hex digits", dir, base[dir])
		}
	}

	tests := []struct {
		name    string
		files   map[string]string
		changed []string // the stages whose fingerprint must change; the others must not
	}{
		{"nothing changed", nil, nil},
		{"doc comment edited", edited(t, "stages/a/a.go", "renders the template.", "renders the template, once per input."), nil},
		{"comment added between statements", edited(t, "stages/a/a.go", "\treturn strings.Join", "\n\t// Join with commas: the report parser splits on them.\n\treturn strings.Join"), nil},
		{"full-line comment deleted in import", edited(t, "lib/lib.go", "// Scale multiplies by a constant.\n", ""), nil},
		{"trailing comment deleted in import", edited(t, "lib/lib.go", " // doubled", ""), nil},
		{"reformatted", map[string]string{"stages/a/a.go": `package a
import (
  _ "embed"
  "strings"
  "example.com/m/lib"
)
//go:embed tmpl.txt
var tmpl string


func Run(xs []int) string { out := []string{}; for _, x := range xs { out = append(out, strings.Repeat(
    tmpl,
    lib.Scale(x),
)) }
  return strings.Join(out, ",") }`}, nil},
		{"CRLF line endings", map[string]string{"stages/a/a.go": strings.ReplaceAll(fixture["stages/a/a.go"], "\n", "\r\n")}, nil},
		{"test file edited", edited(t, "stages/a/a_test.go", "{}", "{ t.Log(1) }"), nil},
		{"test file added", map[string]string{"stages/b/b_test.go": "package b\n"}, nil},
		{"file excluded by build constraint edited", edited(t, "stages/a/ignored.go", "= 1", "= 2"), nil},
		{"comment edited in replaced module", edited(t, "dep/dep.go", "Name names", "Name returns the name of"), nil},

		{"string literal changed", edited(t, "stages/a/a.go", `","`, `";"`), []string{"stages/a"}},
		{"identifier renamed", map[string]string{"stages/a/a.go": strings.ReplaceAll(fixture["stages/a/a.go"], "out", "parts")}, []string{"stages/a"}},
		{"directive added", edited(t, "stages/a/a.go", "func Run", "//go:noinline\nfunc Run"), []string{"stages/a"}},
		{"embedded file edited", edited(t, "stages/a/tmpl.txt", "hello", "goodbye"), []string{"stages/a"}},
		{"imported project package changed", edited(t, "lib/lib.go", "x * 2", "x * 3"), []string{"stages/a"}},
		{"replaced module changed", edited(t, "dep/dep.go", `"dep"`, `"dep2"`), []string{"stages/c"}},
		{"file added", map[string]string{"stages/b/more.go": "package b\n\nconst more = 1\n"}, []string{"stages/b"}},
		{"build constraint now includes file", edited(t, "stages/a/ignored.go", "//go:build ignore", "//go:build !ignore"), []string{"stages/a"}},
		{"go directive changed", edited(t, "go.mod", "go 1.26", "go 1.25"), stageDirs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A fresh directory per case also checks that fingerprints do
			// not depend on where the module lives.
			got, err := Compute(newFixture(t, tt.files), stageDirs)
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			for _, dir := range stageDirs {
				changed := got[dir] != base[dir]
				if want := slices.Contains(tt.changed, dir); changed != want {
					t.Errorf("fingerprint of %s changed = %v, want %v", dir, changed, want)
				}
			}
		})
	}
}

func TestComputeDeterministic(t *testing.T) {
	offlineGo(t)
	root := newFixture(t, nil)
	want, err := Compute(root, stageDirs)
	if err != nil {
		t.Fatal(err)
	}

	// Same module elsewhere, reached by a relative path from another working
	// directory, asked in another order and spelling.
	other := newFixture(t, nil)
	t.Chdir(filepath.Dir(other))
	got, err := Compute(filepath.Base(other), []string{"./stages/c/", "stages/b", `stages/a`, "stages/a"})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("Compute from another directory = %v, want %v", got, want)
	}

	// One package at a time gives what it gives in a batch.
	for _, dir := range stageDirs {
		one, err := Compute(root, []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if one[dir] != want[dir] {
			t.Errorf("Compute(%s) alone = %s, in a batch %s", dir, one[dir], want[dir])
		}
	}
}

func TestComputeErrors(t *testing.T) {
	offlineGo(t)
	tests := []struct {
		name    string
		files   map[string]string
		pkgs    []string
		wantErr string
	}{
		{"missing directory", nil, []string{"stages/nope"}, "directory not found"},
		{"tests only", nil, []string{"stages/testonly"}, "stages/testonly: no non-test Go files"},
		{"absolute path", nil, []string{"/stages/a"}, "not a directory inside the module"},
		{"outside the module", nil, []string{"../stages/a"}, "not a directory inside the module"},
		{"syntax error", map[string]string{"lib/bad.go": "package lib\n\nfunc f() { x := }\n"}, []string{"stages/a"}, "lib/bad.go:3"},
		{"unresolvable import", map[string]string{"stages/b/bad.go": "package b\n\nimport \"example.com/m/nope\"\n\nvar _ = nope.X\n"}, []string{"stages/b"}, "example.com/m/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compute(newFixture(t, tt.files), tt.pkgs)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Compute(%v) error = %v, want one containing %q", tt.pkgs, err, tt.wantErr)
			}
		})
	}

	t.Run("no go.mod", func(t *testing.T) {
		if _, err := Compute(t.TempDir(), stageDirs); err == nil || !strings.Contains(err.Error(), "go.mod") {
			t.Errorf("Compute(directory without go.mod) error = %v, want one naming go.mod", err)
		}
	})
}

func TestComputeExternalModule(t *testing.T) {
	offlineGo(t)
	// Serve example.com/ext v1.0.0 and v1.1.0 from a file:// proxy, into a
	// private module cache that the test can delete (-modcacherw).
	proxy := t.TempDir()
	for _, v := range []string{"v1.0.0", "v1.1.0"} {
		writeProxyVersion(t, proxy, "example.com/ext", v, map[string]string{
			"go.mod": "module example.com/ext\n\ngo 1.26\n",
			"ext.go": "package ext\n\nconst Version = \"" + v + "\"\n",
		})
	}
	t.Setenv("GOPROXY", (&url.URL{Scheme: "file", Path: filepath.ToSlash(proxy)}).String())
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")

	files := func(version string) map[string]string {
		return map[string]string{
			"go.mod":        "module example.com/m\n\ngo 1.26\n\nrequire example.com/ext " + version + "\n",
			"stages/e/e.go": "package e\n\nimport \"example.com/ext\"\n\nconst V = ext.Version\n",
			"stages/f/f.go": "package f\n",
		}
	}
	fingerprints := func(version string) map[string]string {
		root := t.TempDir()
		writeTree(t, root, files(version))
		var debug bytes.Buffer
		got, err := compute(root, []string{"stages/e", "stages/f"}, &debug)
		if err != nil {
			t.Fatalf("Compute with example.com/ext %s: %v", version, err)
		}
		if want := "module example.com/ext@" + version + "\n"; !strings.Contains(debug.String(), want) {
			t.Errorf("hashed lines lack %q:\n%s", want, debug.String())
		}
		return got
	}
	before, after := fingerprints("v1.0.0"), fingerprints("v1.1.0")
	if before["stages/e"] == after["stages/e"] {
		t.Errorf("bumping example.com/ext did not change the fingerprint of its importer stages/e")
	}
	if before["stages/f"] != after["stages/f"] {
		t.Errorf("bumping example.com/ext changed the fingerprint of stages/f, which does not import it")
	}
}

// writeProxyVersion lays out one module version the way GOPROXY=file://
// expects it.
func writeProxyVersion(t *testing.T, proxy, modPath, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(modPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(modPath + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[name]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	writeTree(t, dir, map[string]string{
		version + ".info": `{"Version":"` + version + `","Time":"2025-01-01T00:00:00Z"}`,
		version + ".mod":  files["go.mod"],
		version + ".zip":  zbuf.String(),
		"list":            string(list) + version + "\n",
	})
}

func TestPackages(t *testing.T) {
	offlineGo(t)
	root := newFixture(t, nil)
	tests := []struct {
		under string
		want  []string
	}{
		{"stages", []string{"stages", "stages/a", "stages/b", "stages/c"}},
		{"./stages/", []string{"stages", "stages/a", "stages/b", "stages/c"}},
		{"stages/a", []string{"stages/a"}},
		{".", []string{"lib", "stages", "stages/a", "stages/b", "stages/c"}},
	}
	for _, tt := range tests {
		got, err := Packages(root, tt.under)
		if err != nil {
			t.Errorf("Packages(%q): %v", tt.under, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Packages(%q) = %q, want %q", tt.under, got, tt.want)
		}
	}
	for _, under := range []string{"nope", "go.mod", "../x", ""} {
		if got, err := Packages(root, under); err == nil {
			t.Errorf("Packages(%q) = %q, want an error", under, got)
		}
	}
}

// TestHashedLines pins the exact lines hashed for one stage. If it fails
// after a deliberate change to what is hashed, bump the schema salt in
// codeversion.go and run go test -update.
func TestHashedLines(t *testing.T) {
	offlineGo(t)
	var debug bytes.Buffer
	if _, err := compute(newFixture(t, nil), []string{"stages/a", "stages/c"}, &debug); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "hashed_lines.golden")
	if *update {
		if err := os.WriteFile(golden, debug.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.String(); got != string(want) {
		t.Errorf("hashed lines changed (bump the salt if intended, then go test -update):\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestDebugOutput(t *testing.T) {
	for _, tt := range []struct {
		value string
		on    bool
	}{{"", false}, {"0", false}, {"1", true}, {"true", true}, {"junk", false}} {
		t.Setenv(DebugEnv, tt.value)
		if on := debugOutput() != nil; on != tt.on {
			t.Errorf("with %s=%q, debug output on = %v, want %v", DebugEnv, tt.value, on, tt.on)
		}
	}
}
