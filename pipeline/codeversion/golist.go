package codeversion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// listedPackage holds the fields of `go list -json` that a fingerprint needs.
type listedPackage struct {
	Dir        string
	ImportPath string
	Standard   bool
	DepOnly    bool
	Module     *listedModule
	Deps       []string

	GoFiles, CgoFiles, InvalidGoFiles []string
	CFiles, CXXFiles, MFiles, HFiles  []string
	FFiles, SFiles, SysoFiles         []string
	SwigFiles, SwigCXXFiles           []string
	EmbedFiles                        []string

	Error      *listError
	DepsErrors []*listError
}

// listedModule is the Module field of `go list -json`.
type listedModule struct {
	Path      string
	Version   string
	Main      bool
	Dir       string
	GoVersion string
	Replace   *listedModule
}

// listError is a package loading error reported by `go list -e`.
type listError struct {
	Pos string
	Err string
}

func (e *listError) String() string {
	if e.Pos != "" {
		return e.Pos + ": " + e.Err
	}
	return e.Err
}

// listFields is the -json field selection; asking only for what is used keeps
// go list from computing the rest.
var listFields = strings.Join([]string{
	"Dir", "ImportPath", "Standard", "DepOnly", "Module", "Deps",
	"GoFiles", "CgoFiles", "InvalidGoFiles",
	"CFiles", "CXXFiles", "MFiles", "HFiles", "FFiles", "SFiles", "SysoFiles",
	"SwigFiles", "SwigCXXFiles", "EmbedFiles",
	"Error", "DepsErrors",
}, ",")

// goList runs `go list -e -json` in moduleRoot on the given patterns, with
// -deps when deps is set. Package errors are left in the result for the caller
// to judge; only a failure of go list itself is returned as an error.
//
// GOWORK is forced off: a developer's go.work can select other versions of
// dependencies, and a fingerprint committed to the repository must depend on
// go.mod alone.
func goList(moduleRoot string, deps bool, patterns ...string) ([]*listedPackage, error) {
	args := []string{"list", "-e", "-json=" + listFields}
	if deps {
		args = append(args, "-deps")
	}
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(patterns, " "), err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []*listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		p := new(listedPackage)
		err := dec.Decode(p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("go list %s: decode output: %w", strings.Join(patterns, " "), err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// checkModuleRoot verifies that moduleRoot is the root of a module, so that
// module-relative directories mean what the caller thinks.
func checkModuleRoot(moduleRoot string) error {
	if _, err := os.Stat(filepath.Join(moduleRoot, "go.mod")); err != nil {
		return fmt.Errorf("module root %s: %w", moduleRoot, err)
	}
	return nil
}

// cleanDir turns a module-relative directory as a caller may write it
// ("./stages/generate/", `stages\generate`) into its canonical slash form, and
// rejects directories outside the module.
func cleanDir(dir string) (string, error) {
	clean := path.Clean(filepath.ToSlash(dir))
	if dir == "" || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", fmt.Errorf("%q is not a directory inside the module", dir)
	}
	return clean, nil
}

// pattern returns the go list pattern for a clean module-relative directory.
func pattern(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir
}

// isMain reports whether p belongs to the main module.
func (p *listedPackage) isMain() bool {
	return p.Module != nil && p.Module.Main
}

// buildable reports whether p has any non-test Go file for this platform.
// Directories holding only tests, or only files excluded by build
// constraints, are not packages that can be fingerprinted.
func (p *listedPackage) buildable() bool {
	return len(p.GoFiles)+len(p.CgoFiles)+len(p.InvalidGoFiles) > 0
}

// err returns the package's own loading error, if any.
func (p *listedPackage) err() error {
	if p.Error != nil {
		return fmt.Errorf("package %s: %s", p.ImportPath, p.Error)
	}
	if len(p.DepsErrors) > 0 {
		return fmt.Errorf("package %s: dependency: %s", p.ImportPath, p.DepsErrors[0])
	}
	return nil
}

// moduleDir returns p's directory relative to the root of its module, in
// slash form.
func (p *listedPackage) moduleDir() (string, error) {
	if p.Module == nil || p.Module.Dir == "" {
		return "", fmt.Errorf("package %s: no module directory", p.ImportPath)
	}
	rel, err := filepath.Rel(p.Module.Dir, p.Dir)
	if err != nil {
		return "", fmt.Errorf("package %s: %w", p.ImportPath, err)
	}
	return filepath.ToSlash(rel), nil
}

// roots returns, by module-relative directory, the buildable main-module
// packages that go list matched (rather than pulled in as dependencies).
// Matched directories without non-test Go files for this platform are
// skipped: they hold no code to fingerprint.
func roots(pkgs []*listedPackage) (map[string]*listedPackage, error) {
	out := make(map[string]*listedPackage)
	for _, p := range pkgs {
		if p.DepOnly || p.isMain() && !p.buildable() {
			continue
		}
		// A bad pattern comes back as a package without a module.
		if err := p.err(); err != nil {
			return nil, err
		}
		if !p.isMain() {
			continue
		}
		dir, err := p.moduleDir()
		if err != nil {
			return nil, err
		}
		out[dir] = p
	}
	return out, nil
}
