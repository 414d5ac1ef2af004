package stages

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layout below stages/ (see doc.go): a folder per stage, and the
// libraries and the specs the stages share.
const (
	module  = "github.com/mlsched/mlsched/"
	libDir  = "stages/lib"
	specDir = "stages/spec"
)

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Deps       []string
}

// goList lists the packages matched by patterns with their non-test
// dependencies, module-relative.
func goList(t *testing.T, patterns ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Deps"}, patterns...)...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(patterns, " "), err, stderr.Bytes())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		var deps []string
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) {
				deps = append(deps, strings.TrimPrefix(d, module))
			}
		}
		p.Deps = deps
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// stageOf names the stage whose folder holds the module-relative package
// path, or "" for a package outside every stage's folder.
func stageOf(path string) string {
	for _, s := range Names() {
		if dir := "stages/" + s; path == dir || strings.HasPrefix(path, dir+"/") {
			return s
		}
	}
	return ""
}

// TestNoStageImportsAnother holds the layout's rule: a stage's packages
// (stages/<stage>/...) depend on libraries (stages/lib), specs
// (stages/spec) and the runner (pipeline/), never on another stage's
// packages, nor on the registry (package stages); and no library or spec
// depends on a stage. So a stage's code version (package codeversion
// hashes the whole import closure) covers its own code and the libraries
// it uses, and an edit reruns only the stages it touches.
func TestNoStageImportsAnother(t *testing.T) {
	patterns := []string{"./" + libDir + "/...", "./" + specDir + "/..."}
	for _, s := range Names() {
		patterns = append(patterns, "./stages/"+s+"/...")
	}
	pkgs := goList(t, patterns...)
	seen := map[string]bool{}
	for _, p := range pkgs {
		own := stageOf(p.ImportPath)
		seen[own] = true
		for _, d := range p.Deps {
			switch other := stageOf(d); {
			case d == "stages":
				t.Errorf("%s imports the registry, package stages", p.ImportPath)
			case other != "" && other != own && own == "":
				t.Errorf("%s, a library or spec, depends on the %s stage's %s", p.ImportPath, other, d)
			case other != "" && other != own:
				t.Errorf("%s, of the %s stage, depends on the %s stage's %s", p.ImportPath, own, other, d)
			}
		}
	}
	for _, s := range append(Names(), "") {
		if !seen[s] {
			t.Errorf("go list found no package of %q: the layout the test holds is not the tree's", s)
		}
	}
}

// TestStageFoldersHoldStages checks that every folder directly under
// stages/ is a stage of the registry, the libraries or the specs, so that
// a folder's name tells which it is.
func TestStageFoldersHoldStages(t *testing.T) {
	for _, p := range goList(t, "./...") {
		rest, ok := strings.CutPrefix(p.ImportPath, "stages/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rest, "/")
		if !slices.Contains(Names(), top) && "stages/"+top != libDir && "stages/"+top != specDir {
			t.Errorf("%s: stages/%s is neither a stage of the registry (%s) nor %s or %s", p.ImportPath, top, strings.Join(Names(), ", "), libDir, specDir)
		}
	}
}
