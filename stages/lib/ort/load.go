package ort

import (
	"crypto/sha256"
	"debug/elf"
	_ "embed" // setupSum
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	onnx "github.com/yalue/onnxruntime_go"

	"github.com/mlsched/mlsched/pipeline/userfile"
)

// SupportedVersion is the oldest onnxruntime release this package loads:
// github.com/yalue/onnxruntime_go v1.27.0 is written against onnxruntime
// 1.24's C API (ORT_API_VERSION 24), and make setup installs 1.24.1. A later
// 1.x release is loaded too: onnxruntime only appends to its C API, and
// GetApi(24) on a newer library returns 1.24's function table, which is how
// a GPU build of another release (the CUDA provider of 1.29, say) can be
// measured with the same code. An older release, or another major version,
// is refused. The profile records the version it ran on, so numbers from
// another release are never passed off as 1.24's.
const SupportedVersion = "1.24"

// supportedMinor is SupportedVersion's minor version.
const supportedMinor = 24

// supported reports whether an onnxruntime version string ("1.24.1") is
// SupportedVersion or a later 1.x release.
func supported(v string) bool {
	major, rest, ok := strings.Cut(v, ".")
	if !ok || major != "1" {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	return err == nil && n >= supportedMinor
}

// loaded is the library this process loaded; onnxruntime_go keeps one
// environment per process, so there is at most one.
var (
	mu     sync.Mutex
	loaded *library
)

// library is a successfully initialised onnxruntime.
type library struct {
	path    string
	src     Source
	info    os.FileInfo // to recognise the same file under another name
	version string
	h       handle           // this package's own reference, for the C API calls onnxruntime_go lacks
	probes  map[string]error // ProbeProvider's answers; the library cannot change
}

// Init loads the onnxruntime library at path (src says where the path came
// from) and returns its version, for example "1.24.1". The library is loaded
// once per process: a later call naming the same file is a no-op, a call
// naming another file is an error.
//
// Before onnxruntime_go touches the file, Init checks it is a complete shared
// library for this machine (and, from the make setup folder, the very file
// make setup installed) and asks it for its version, so that a missing file,
// a truncated download or another onnxruntime release give an *Error naming
// the path and source instead of a crash or an opaque failure in cgo.
func Init(path string, src Source) (version string, err error) {
	mu.Lock()
	defer mu.Unlock()
	if path == "" {
		return "", &Error{Source: src, Err: errors.New("empty library path")}
	}
	if loaded != nil && path == loaded.path {
		return loaded.version, nil
	}
	fail := func(err error) (string, error) { return "", &Error{Path: path, Source: src, Err: err} }
	info, err := checkLibrary(path)
	if err != nil {
		return fail(err)
	}
	if loaded != nil && os.SameFile(info, loaded.info) {
		return loaded.version, nil // the same file by another name (a symlink, a hard link)
	}
	if src == SourceSetup {
		if err := checkSetupSum(path); err != nil {
			return fail(err)
		}
	}
	h, err := dlopen(path)
	if err != nil {
		return fail(err)
	}
	keep := false
	defer func() {
		if !keep {
			h.close()
		}
	}()
	v, err := h.version()
	if err != nil {
		return fail(err)
	}
	if !supported(v) {
		return fail(fmt.Errorf("is onnxruntime %s, and this build needs %s or a later 1.x (github.com/yalue/onnxruntime_go v1.27.0)", v, SupportedVersion))
	}
	// The file itself is fine; only now is another library in the way. The
	// checks above come first so that a bad file is reported as such.
	if loaded != nil {
		return fail(fmt.Errorf("onnxruntime is already loaded from %s (from %s), and a process can load only one", loaded.path, loaded.src))
	}
	onnx.SetSharedLibraryPath(path)
	if err := onnx.InitializeEnvironment(); err != nil {
		return fail(fmt.Errorf("initialise onnxruntime %s: %w", v, err))
	}
	keep = true
	loaded = &library{path: path, src: src, info: info, version: v, h: h}
	return v, nil
}

// Version returns the version of the loaded onnxruntime, or "" before a
// successful Init.
func Version() string {
	mu.Lock()
	defer mu.Unlock()
	if loaded == nil {
		return ""
	}
	return loaded.version
}

// errNotLoaded is the error of an operation that needs Init first.
func errNotLoaded(op string) error {
	return fmt.Errorf("ort: %s: onnxruntime is not loaded (call Init first)", op)
}

// elfMachines are the ELF machines whose libraries this process can load.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// checkLibrary makes sure path is a complete ELF shared library for this
// machine. dlopen would refuse most bad files by itself, but not a truncated
// one: it maps segments that extend past the end of the file, and the
// process dies of SIGBUS when the loader touches them. That is exactly what
// an interrupted copy looks like, so the segment bounds are checked here.
func checkLibrary(path string) (os.FileInfo, error) {
	// A directory, a named pipe or a symlink to a device is refused here,
	// saying what it is, before anything opens it.
	info, err := userfile.Check(path)
	if err != nil {
		// The *Error around this names the path already.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	f, err := elf.Open(path)
	if err != nil {
		// debug/elf says little more than "EOF" for most bad files; the
		// magic number tells a non-library from a damaged library.
		if hasELFMagic(path) {
			return nil, fmt.Errorf("a damaged or truncated ELF file (an interrupted copy?): %w", err)
		}
		return nil, errors.New("not a shared library (no ELF header)")
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return nil, fmt.Errorf("not a shared library (ELF type %s)", f.Type)
	}
	if m, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != m {
		return nil, fmt.Errorf("a library for %s, and this is %s", f.Machine, runtime.GOARCH)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off+p.Filesz > uint64(info.Size()) {
			return nil, fmt.Errorf("truncated: a segment ends at byte %d of a %d-byte file", p.Off+p.Filesz, info.Size())
		}
	}
	return info, nil
}

// hasELFMagic reports whether the file at path starts with the ELF magic
// number.
func hasELFMagic(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [len(elf.ELFMAG)]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == elf.ELFMAG
}

// setupSum is libonnxruntime.sha256, the checksum make setup verifies
// ("<hex>  libonnxruntime.so.1").
//
//go:embed libonnxruntime.sha256
var setupSum string

// checkSetupSum verifies that the library in the make setup folder is still
// the file make setup checked. A byte changed in the middle of the library
// passes every structural check and fails, if at all, somewhere inside
// onnxruntime; hashing it costs milliseconds, once per process. Libraries
// from the flag, the environment or the config are the user's own builds and
// are not hashed.
func checkSetupSum(path string) error {
	want, _, _ := strings.Cut(strings.TrimSpace(setupSum), " ")
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("sha256: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("sha256 is %s, not the %s that make setup installs (stages/ort/libonnxruntime.sha256)", got, want)
	}
	return nil
}
