package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/storefile"
)

// ManifestName is the file, inside every version directory, that describes
// the version. Its presence is what makes a version visible.
const ManifestName = "manifest.json"

// manifestSchema is bumped whenever the manifest's meaning changes.
const manifestSchema = 1

// Manifest describes one stored version of a stage's output: what went into
// it, what came out, and when. Every path in it is relative to the version
// directory, so a store can be moved or copied as a whole.
type Manifest struct {
	Schema  int    `json:"schema"`
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Key is the full cache key; Version is its prefix.
	Key string `json:"key"`
	// Inputs records every influence hashed into Key.
	Inputs KeyInputs `json:"inputs"`
	// Output is the digest of the files' contents (see OutputDigest).
	Output   string    `json:"output"`
	Files    []File    `json:"files"`
	Created  time.Time `json:"created"`
	Duration float64   `json:"duration_s"`
	// Tool names the program and Go version that produced the version.
	Tool string `json:"tool"`
	// Notes holds what the stage reported about its run (Env.Notes).
	Notes map[string]string `json:"notes,omitempty"`
	// Memo lists the memo entries the run used (Env.Memo), which gc keeps
	// as long as this version.
	Memo []string `json:"memo,omitempty"`
	// Measured says that the output holds measurements of the machine
	// that made it (Stage.Measures): another machine's run of this
	// version has other output, rightly.
	Measured bool `json:"measured,omitempty"`
}

// KeyInputs lists what determines a stage's output, exactly as hashed.
type KeyInputs struct {
	Code   string            `json:"code"`
	Salt   string            `json:"salt,omitempty"`
	Seed   *int64            `json:"seed,omitempty"`
	Config json.RawMessage   `json:"config"`
	Extern map[string]string `json:"extern,omitempty"`
	// Refs are the stage's resolved Refs, in the stage's order.
	Refs     []RefInput `json:"refs,omitempty"`
	Upstream []Upstream `json:"upstream,omitempty"`
	// UpstreamVersions says the upstreams' versions entered the key too
	// (Stage.ShowsUpstreams).
	UpstreamVersions bool `json:"upstream_versions,omitempty"`
}

// RefInput is a resolved Ref: the version it names in full, and the
// content digest of the file read.
type RefInput struct {
	Key     string `json:"key"`
	Stage   string `json:"stage"`
	Version string `json:"version"`
	File    string `json:"file"`
	Content string `json:"content"`
}

// String names the file a reference reads: stage@version/file.
func (r RefInput) String() string { return r.Stage + "@" + r.Version + "/" + r.File }

// Upstream names an input artifact: its stage, version and output digest.
type Upstream struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	Output  string `json:"output"`
}

// File is one output file of a version.
type File struct {
	// Path is slash-separated and relative to the version directory.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// SHA256 is the digest of the raw bytes, checked by verify.
	SHA256 string `json:"sha256"`
	// Content is the digest that feeds the output digest: for Parquet files
	// it leaves out the provenance entries of the footer, so identical data
	// written under another version has the same content digest.
	Content string `json:"content"`
	// Rows is the Parquet row count, or -1 for other files.
	Rows int64 `json:"rows"`
	// ModTime is the modification time (Unix nanoseconds) seen when the
	// digest was taken; while size and ModTime match, the digest is trusted.
	ModTime int64 `json:"mtime_ns"`
}

// OutputDigest is the digest of a version's contents: the sorted list of its
// files' paths and content digests.
func OutputDigest(files []File) ID {
	h := newKeyHash("mlsched output v1", "output")
	for _, f := range files {
		h.line("file", f.Path+" "+f.Content)
	}
	return h.sum()
}

// readManifest reads and checks the manifest of dir, which must describe
// stage and version.
func readManifest(dir, stage, version string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := storefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s@%s: %w", stage, version, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return parseManifest(b, path, stage, version)
}

// ParseManifest decodes a manifest read from path (a remote's object, say)
// and checks that it describes stage@version and is sane (see
// parseManifest).
func ParseManifest(b []byte, path, stage, version string) (*Manifest, error) {
	return parseManifest(b, path, stage, version)
}

// parseManifest decodes a manifest read from path and checks that it
// describes stage@version and that what the runner relies on is sane: a
// damaged manifest is reported, wrapping ErrDamaged, never trusted.
func parseManifest(b []byte, path, stage, version string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &DamagedError{Path: path, Err: err}
	}
	if string(m.Inputs.Config) == "null" {
		// No config, as an absent key reads; written back, nil is null.
		m.Inputs.Config = nil
	}
	switch {
	case m.Schema != manifestSchema:
		return nil, fmt.Errorf("%s: manifest schema %d, this mlsched reads %d", path, m.Schema, manifestSchema)
	case m.Stage != stage || m.Version != version:
		return nil, &DamagedError{Path: path, Err: fmt.Errorf("it describes %s@%s, not %s@%s", m.Stage, m.Version, stage, version)}
	case !isHex(m.Key, 64) || !strings.HasPrefix(m.Key, m.Version):
		return nil, &DamagedError{Path: path, Err: fmt.Errorf("key %q is not a digest starting with the version", m.Key)}
	case !isHex(m.Output, 64):
		return nil, &DamagedError{Path: path, Err: fmt.Errorf("output %q is not a digest", m.Output)}
	}
	if err := checkFiles(m.Files); err != nil {
		return nil, &DamagedError{Path: path, Err: err}
	}
	if d := OutputDigest(m.Files).String(); d != m.Output {
		return nil, &DamagedError{Path: path, Err: fmt.Errorf("its files do not make its output digest %.16s (they make %.16s): a file was added to or dropped from it", m.Output, d)}
	}
	for _, u := range m.Inputs.Upstream {
		if !isHex(u.Version, versionLen) {
			return nil, &DamagedError{Path: path, Err: fmt.Errorf("upstream %s: malformed version %q", u.Stage, u.Version)}
		}
	}
	return &m, nil
}

// DamagedError reports a manifest that exists but cannot be trusted.
type DamagedError struct {
	Path string
	Err  error
}

func (e *DamagedError) Error() string { return fmt.Sprintf("%s: damaged manifest: %v", e.Path, e.Err) }

// Unwrap returns the underlying error.
func (e *DamagedError) Unwrap() error { return e.Err }

// checkFiles checks the file list of a manifest: each path relative,
// clean and inside its directory, listed once and in order, with a sane
// size and digest.
func checkFiles(files []File) error {
	for i, f := range files {
		switch {
		case f.Path == "" || !fs.ValidPath(f.Path) || f.Path == ManifestName:
			return fmt.Errorf("files[%d]: path %q is not a file inside the version", i, f.Path)
		case i > 0 && f.Path <= files[i-1].Path:
			return fmt.Errorf("files[%d]: path %q is out of order or repeated", i, f.Path)
		case f.Size < 0:
			return fmt.Errorf("files[%d]: %s: size %d", i, f.Path, f.Size)
		case !isHex(f.SHA256, 64):
			return fmt.Errorf("files[%d]: %s: sha256 %q is not a digest", i, f.Path, f.SHA256)
		}
	}
	return nil
}

// isHex says whether s is n lower-case hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// writeManifest writes m into dir atomically.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ManifestName), append(b, '\n'))
}

// rewriteManifest replaces the manifest of the stored version in dir
// through a temporary file in tmp (the store's folder for work in
// progress, on the same file system), not beside it: a writer killed
// meanwhile leaves nothing in the version's folder, where verify would
// find a file its manifest does not list, and the store's next writer
// clears tmp.
func rewriteManifest(dir, tmp string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	return replaceFileVia(tmp, filepath.Join(dir, ManifestName), time.Time{}, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// writeFileAtomic replaces path with data so that readers see either the
// old or the new content, never a mix, even after a crash.
func writeFileAtomic(path string, data []byte) error {
	return replaceFile(path, time.Time{}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// replaceFile writes path through write into a temporary file beside it,
// syncs it, gives it mode 0644 (and mtime, unless zero), and renames it into
// place. The temporary file's name holds this process's pid (tempPattern),
// and the temporary files of path that processes now gone left (killed
// while they wrote it) are removed first.
func replaceFile(path string, mtime time.Time, write func(io.Writer) error) error {
	return replaceFileVia(filepath.Dir(path), path, mtime, write)
}

// testHookRename, set by tests, is told the temporary file replaceFileVia
// is about to rename into place.
var testHookRename func(tmp string)

// replaceFileVia is replaceFile with the temporary file in dir, which must
// be on path's file system.
func replaceFileVia(dir, path string, mtime time.Time, write func(io.Writer) error) error {
	name := filepath.Base(path)
	if err := removeDeadTemps(dir, name); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, tempPattern(name, os.Getpid()))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(tmp.Name(), mtime, mtime); err != nil {
			return err
		}
	}
	if testHookRename != nil {
		testHookRename(tmp.Name())
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncPath(filepath.Dir(path))
}

// syncPath makes a file's bytes, or a directory's entries (a rename into
// it), durable.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
