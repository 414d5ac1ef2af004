package codeversion

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// salt starts every fingerprint. Bump its version whenever the set or the
// form of the hashed lines changes, so that old and new schemes never agree
// by accident.
const salt = "mlsched codeversion v1"

// DebugEnv is the environment variable that, set to 1 (or another value
// that strconv.ParseBool reads as true), makes Compute and Generate print
// every hashed line to standard error.
const DebugEnv = "MLSCHED_DEBUG_CODEVERSION"

// Compute returns the fingerprint of each package in pkgs, keyed by the
// package's clean module-relative directory ("stages/generate").
//
// moduleRoot is the directory holding go.mod. Each entry of pkgs is a
// directory relative to it; a missing directory, one without non-test Go
// files, a syntax error or an import that cannot be resolved is an error.
// The package documentation lists exactly what is hashed.
func Compute(moduleRoot string, pkgs []string) (map[string]string, error) {
	return compute(moduleRoot, pkgs, debugOutput())
}

// Packages returns the module-relative directories of the packages at or
// below the module-relative directory under, sorted. Directories without
// non-test Go files for the current platform are left out.
func Packages(moduleRoot, under string) ([]string, error) {
	dir, err := checkUnder(moduleRoot, under)
	if err != nil {
		return nil, err
	}
	listed, err := goList(moduleRoot, false, subtree(dir))
	if err != nil {
		return nil, err
	}
	found, err := roots(listed)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(found)), nil
}

func compute(moduleRoot string, pkgs []string, debug io.Writer) (map[string]string, error) {
	if err := checkModuleRoot(moduleRoot); err != nil {
		return nil, err
	}
	dirs := make([]string, 0, len(pkgs))
	patterns := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		dir, err := cleanDir(p)
		if err != nil {
			return nil, fmt.Errorf("package: %w", err)
		}
		dirs = append(dirs, dir)
		patterns = append(patterns, pattern(dir))
	}
	out := make(map[string]string, len(dirs))
	if len(dirs) == 0 {
		return out, nil
	}
	listed, err := goList(moduleRoot, true, patterns...)
	if err != nil {
		return nil, err
	}
	for _, p := range listed {
		if p.DepOnly {
			continue
		}
		if err := p.err(); err != nil {
			return nil, err
		}
	}
	g, err := newGraph(listed)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		p := g.byDir[dir]
		switch {
		case p == nil || p.DepOnly:
			return nil, fmt.Errorf("package %s: not found", dir)
		case !p.buildable():
			return nil, fmt.Errorf("package %s: no non-test Go files", dir)
		}
		fp, _, err := g.fingerprint(p, debug)
		if err != nil {
			return nil, err
		}
		out[dir] = fp
	}
	return out, nil
}

// debugOutput returns where hashed lines go: standard error when DebugEnv
// is set to a true value, nowhere otherwise.
func debugOutput() io.Writer {
	if on, _ := strconv.ParseBool(os.Getenv(DebugEnv)); on {
		return os.Stderr
	}
	return nil
}

// checkUnder validates the module root and the module-relative directory
// under, and returns under in clean form.
func checkUnder(moduleRoot, under string) (string, error) {
	if err := checkModuleRoot(moduleRoot); err != nil {
		return "", err
	}
	dir, err := cleanDir(under)
	if err != nil {
		return "", fmt.Errorf("under: %w", err)
	}
	fi, err := os.Stat(filepath.Join(moduleRoot, filepath.FromSlash(dir)))
	if err != nil {
		return "", fmt.Errorf("under: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("under: %s is not a directory", dir)
	}
	return dir, nil
}

// subtree returns the go list pattern for every package at or below dir.
func subtree(dir string) string {
	if dir == "." {
		return "./..."
	}
	return "./" + dir + "/..."
}

// graph indexes one `go list -deps` result and caches file digests across
// the packages fingerprinted from it: every stage imports the same pipeline
// packages, and their files need reading only once.
type graph struct {
	byPath     map[string]*listedPackage
	byDir      map[string]*listedPackage // main module only, by module-relative dir
	mainModule *listedModule
	digests    map[fileRef]string
}

// fileRef identifies a file digest: Go files and raw files of the same path
// hash differently (a Go file may also be embedded).
type fileRef struct {
	kind, path string
}

func newGraph(listed []*listedPackage) (*graph, error) {
	g := &graph{
		byPath:  make(map[string]*listedPackage, len(listed)),
		byDir:   make(map[string]*listedPackage),
		digests: make(map[fileRef]string),
	}
	for _, p := range listed {
		g.byPath[p.ImportPath] = p
		if !p.isMain() {
			continue
		}
		g.mainModule = p.Module
		dir, err := p.moduleDir()
		if err != nil {
			return nil, err
		}
		g.byDir[dir] = p
	}
	return g, nil
}

// fingerprint returns the fingerprint of root and the module-relative
// directories of the main-module packages it was computed from.
func (g *graph) fingerprint(root *listedPackage, debug io.Writer) (string, []string, error) {
	rootKey, err := root.moduleDir()
	if err != nil {
		return "", nil, err
	}
	type source struct {
		key string
		pkg *listedPackage
	}
	var sources []source
	var mainDirs []string
	modules := make(map[string][]string) // module path → hashed fields
	for _, importPath := range append([]string{root.ImportPath}, root.Deps...) {
		p := g.byPath[importPath]
		if p == nil {
			return "", nil, fmt.Errorf("package %s: dependency %s missing from go list output", rootKey, importPath)
		}
		if err := p.err(); err != nil {
			return "", nil, err
		}
		switch {
		case p.Standard:
			continue
		case p.Module == nil:
			return "", nil, fmt.Errorf("package %s: dependency %s is not in a module", rootKey, importPath)
		case p.isMain():
			dir, err := p.moduleDir()
			if err != nil {
				return "", nil, err
			}
			sources = append(sources, source{dir, p})
			mainDirs = append(mainDirs, dir)
		case isLocalReplace(p.Module):
			dir, err := p.moduleDir()
			if err != nil {
				return "", nil, err
			}
			sources = append(sources, source{path.Join(p.Module.Path, dir), p})
			modules[p.Module.Path] = moduleValue(p.Module)
		default:
			modules[p.Module.Path] = moduleValue(p.Module)
		}
	}
	slices.SortFunc(sources, func(a, b source) int { return strings.Compare(a.key, b.key) })

	w := &lineWriter{h: sha256.New(), debug: debug, name: rootKey}
	w.line(strings.Fields(salt)...)
	w.line("package", rootKey)
	w.line("go", g.mainModule.GoVersion)
	for _, s := range sources {
		w.line("pkg", s.key)
		files, err := g.files(s.pkg, s.key)
		if err != nil {
			return "", nil, err
		}
		for _, f := range files {
			w.line(f.kind, f.path, f.digest)
		}
	}
	for _, modPath := range slices.Sorted(maps.Keys(modules)) {
		w.line(append([]string{"module"}, modules[modPath]...)...)
	}
	slices.Sort(mainDirs)
	sum := hex.EncodeToString(w.h.Sum(nil))
	if debug != nil {
		fmt.Fprintf(debug, "codeversion[%s] = %s\n", rootKey, sum)
	}
	return sum, mainDirs, nil
}

// hashedFile is one file line of a fingerprint.
type hashedFile struct {
	kind, path, digest string
}

// files returns the hashed files of p, sorted by path, named under key
// (p's directory as it appears in the fingerprint).
func (g *graph) files(p *listedPackage, key string) ([]hashedFile, error) {
	var out []hashedFile
	add := func(kind string, names ...[]string) error {
		for _, list := range names {
			for _, name := range list {
				rel := path.Join(key, filepath.ToSlash(name))
				digest, err := g.digest(kind, filepath.Join(p.Dir, name))
				if err != nil {
					return fmt.Errorf("hash %s: %w", rel, err)
				}
				out = append(out, hashedFile{kind, rel, digest})
			}
		}
		return nil
	}
	if err := add("gofile", p.GoFiles, p.CgoFiles); err != nil {
		return nil, err
	}
	if err := add("file", p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles,
		p.SFiles, p.SysoFiles, p.SwigFiles, p.SwigCXXFiles); err != nil {
		return nil, err
	}
	if err := add("embed", p.EmbedFiles); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b hashedFile) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.kind, b.kind)
	})
	return out, nil
}

// digest returns the hex SHA-256 of a file: of its canonical token stream
// for a Go file, of its bytes otherwise.
func (g *graph) digest(kind, file string) (string, error) {
	ref := fileRef{kind, file}
	if d, ok := g.digests[ref]; ok {
		return d, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	if kind == "gofile" {
		if data, err = canonicalGo(file, data); err != nil {
			return "", err
		}
	}
	sum := sha256.Sum256(data)
	d := hex.EncodeToString(sum[:])
	g.digests[ref] = d
	return d, nil
}

// isLocalReplace reports whether m is replaced by a directory, whose code
// can change without any version changing.
func isLocalReplace(m *listedModule) bool {
	return m.Replace != nil && m.Replace.Version == ""
}

// moduleValue returns the hashed identity of a dependency module:
// path@version, and what replaces it.
func moduleValue(m *listedModule) []string {
	v := []string{m.Path + "@" + m.Version}
	switch {
	case isLocalReplace(m):
		// The directory's path is machine-specific when absolute; the code
		// in it is hashed file by file instead, and its go directive here.
		v = append(v, "=>", "local", "go"+m.GoVersion)
	case m.Replace != nil:
		v = append(v, "=>", m.Replace.Path+"@"+m.Replace.Version)
	}
	return v
}

// lineWriter writes "key value" lines into a hash, echoing them to debug
// when that is set.
type lineWriter struct {
	h     hash.Hash
	debug io.Writer
	name  string
}

func (w *lineWriter) line(fields ...string) {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		// Quoting a field with a blank or a quote in it (a file name, say)
		// keeps the line split into the fields it was written with.
		quoted[i] = f
		if f == "" || strings.ContainsAny(f, " \t\r\n\"\\") {
			quoted[i] = strconv.Quote(f)
		}
	}
	l := strings.Join(quoted, " ")
	io.WriteString(w.h, l)
	io.WriteString(w.h, "\n")
	if w.debug != nil {
		fmt.Fprintf(w.debug, "codeversion[%s]: %s\n", w.name, l)
	}
}
