package ort

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// requireVars are the variables that make a missing library a test failure
// instead of a skip; make test sets them. They stay outside the MLSCHED_
// namespace, which belongs to config overrides.
var requireVars = []string{"REQUIRE_ONNXRUNTIME"}

// requireLibrary loads the onnxruntime that Locate finds for this checkout,
// in the CLI's order with the repository root as the search directory, and
// returns its path and source. Without one the test is skipped, pointing at
// make setup, unless one of requireVars is 1. A library that is found but
// does not load always fails.
func requireLibrary(t *testing.T) (string, Source) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path, src, err := Locate("", "", os.Environ(), []string{root})
	if err != nil {
		for _, v := range requireVars {
			if os.Getenv(v) == "1" {
				t.Fatalf("%s=1 and %v", v, err)
			}
		}
		t.Skipf("%v (%s=1 makes this a failure)", err, requireVars[0])
	}
	if _, err := Init(path, src); err != nil {
		t.Fatal(err)
	}
	return path, src
}

// buildFake compiles testdata/fakeort.c into a shared library in a
// temporary directory, with the C compiler cgo uses for this package.
func buildFake(t *testing.T, name string, defines ...string) string {
	t.Helper()
	cc := strings.Fields(goEnv(t, "CC"))
	if len(cc) == 0 {
		t.Fatal("go env CC is empty")
	}
	out := filepath.Join(t.TempDir(), name)
	args := append(cc[1:], "-shared", "-fPIC", "-o", out, filepath.Join("testdata", "fakeort.c"))
	args = append(args, defines...)
	if b, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc[0], strings.Join(args, " "), err, b)
	}
	return out
}

// goEnv returns `go env key` for the go command that runs the tests.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	b, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(b))
}

// copyPrefix copies the first n bytes of src (all of it if n < 0) to a new
// file in a temporary directory.
func copyPrefix(t *testing.T, src string, n int64, name string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// literal is a regexp that matches s.
func literal(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }

// TestInitRejectsBadLibraries checks that each kind of wrong file gives an
// *Error that names the path, the source and make setup, and says what is
// wrong, instead of crashing the process.
func TestInitRejectsBadLibraries(t *testing.T) {
	tmp := t.TempDir()
	text := filepath.Join(tmp, "libonnxruntime.so.1")
	if err := os.WriteFile(text, []byte("this is not a shared library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path func(t *testing.T) string
		src  Source
		want *regexp.Regexp
	}{
		{"missing", func(*testing.T) string { return filepath.Join(tmp, "nope", "libonnxruntime.so.1") }, SourceFlag, literal("no such file or directory")},
		{"directory", func(*testing.T) string { return tmp }, SourceEnv, literal("a directory, not a regular file")},
		{"named pipe", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, SourceConfig, literal("a named pipe (FIFO), not a regular file")},
		{"link to /dev/zero", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
			return p
		}, SourceFlag, literal("a symlink to /dev/zero, a character device, not a regular file")},
		{"text file", func(*testing.T) string { return text }, SourceConfig, literal("not a shared library (no ELF header)")},
		// The test binary is an ELF executable, not a library.
		{"executable", func(*testing.T) string { return exe }, SourceFlag, literal("not a shared library (ELF type")},
		{"no OrtGetApiBase", func(t *testing.T) string { return buildFake(t, "libnotort.so", "-DFAKE_NO_API") }, SourceEnv,
			literal("not an onnxruntime library (no OrtGetApiBase symbol)")},
		{"other release", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="1.18.0"`) }, SourceConfig,
			literal("is onnxruntime 1.18.0, and this build needs 1.24 or a later 1.x")},
		{"other major version", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="2.24.0"`) }, SourceFlag,
			literal("is onnxruntime 2.24.0, and this build needs 1.24 or a later 1.x")},
		{"unparsable version", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="1.x.0"`) }, SourceFlag,
			literal("is onnxruntime 1.x.0, and this build needs 1.24 or a later 1.x")},
		// A later 1.x release passes the version check (its C API includes
		// 1.24's) and reaches onnxruntime_go, like the case below.
		{"later release", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="1.29.0"`) }, SourceFlag,
			regexp.MustCompile(`(initialise onnxruntime 1\.29\.0: .*Error setting ORT API base|onnxruntime is already loaded from)`)},
		// Passes the version check and reaches onnxruntime_go, which finds no
		// C API table; once a real library is loaded, that comes first.
		{"right version, no C API", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="1.24.9"`) }, SourceFlag,
			regexp.MustCompile(`(initialise onnxruntime 1\.24\.9: .*Error setting ORT API base|onnxruntime is already loaded from)`)},
		// make setup's folder is hashed before anything else reads the file.
		{"not the file make setup installs", func(t *testing.T) string { return buildFake(t, "libonnxruntime.so.1", `-DFAKE_VERSION="1.24.1"`) }, SourceSetup,
			regexp.MustCompile(`sha256 is [0-9a-f]{64}, not the 53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4 that make setup installs`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			v, err := Init(path, tc.src)
			if err == nil {
				t.Fatalf("Init(%q, %q) = %q, nil; want an error", path, tc.src, v)
			}
			var oe *Error
			if !errors.As(err, &oe) || oe.Path != path || oe.Source != tc.src {
				t.Errorf("Init error %#v: want an *Error with Path %q and Source %q", err, path, tc.src)
			}
			msg := err.Error()
			for _, want := range []string{"ort: load " + path + " (from " + string(tc.src) + "): ", "run make setup"} {
				if !strings.Contains(msg, want) {
					t.Errorf("Init error %q does not contain %q", msg, want)
				}
			}
			if !tc.want.MatchString(msg) {
				t.Errorf("Init error %q does not match %q", msg, tc.want)
			}
		})
	}
}

// TestInitRejectsDamagedSetupLibrary damages copies of the real library in
// the two ways an interrupted or corrupted install does: cut short, which
// dlopen would answer with SIGBUS, and one byte changed, which only the
// checksum sees.
func TestInitRejectsDamagedSetupLibrary(t *testing.T) {
	real, _ := requireLibrary(t)
	info, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("truncated", func(t *testing.T) {
		p := copyPrefix(t, real, info.Size()/2, "libonnxruntime.so.1")
		_, err := Init(p, SourceFlag)
		if err == nil || !strings.Contains(err.Error(), "damaged or truncated ELF file") || !strings.Contains(err.Error(), p) {
			t.Errorf("Init(half a library) error = %v, want one that names %s and says it is truncated", err, p)
		}
	})
	t.Run("one byte changed", func(t *testing.T) {
		p := copyPrefix(t, real, -1, filepath.FromSlash(SetupPath))
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := f.ReadAt(b[:], info.Size()/2); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0xff
		if _, err := f.WriteAt(b[:], info.Size()/2); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = Init(p, SourceSetup)
		if err == nil || !strings.Contains(err.Error(), "not the "+setupDigest(t)+" that make setup installs") {
			t.Errorf("Init(changed library from make setup) error = %v, want a sha256 mismatch", err)
		}
	})
}

// setupDigest returns the hex sha256 in libonnxruntime.sha256, checking the
// sha256sum -c format make setup relies on.
func setupDigest(t *testing.T) string {
	t.Helper()
	f, err := os.Open("libonnxruntime.sha256")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 1 {
		t.Fatalf("libonnxruntime.sha256 has %d lines, want 1", len(lines))
	}
	m := regexp.MustCompile(`^([0-9a-f]{64})  libonnxruntime\.so\.1$`).FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("libonnxruntime.sha256 line %q is not `<sha256>  libonnxruntime.so.1`", lines[0])
	}
	if want, _, _ := strings.Cut(setupSum, " "); want != m[1] {
		t.Fatalf("embedded checksum %q differs from the file's %q", want, m[1])
	}
	return m[1]
}

func TestInit(t *testing.T) {
	path, src := requireLibrary(t)
	v, err := Init(path, src)
	if err != nil {
		t.Fatalf("second Init(%q, %q): %v", path, src, err)
	}
	if !strings.HasPrefix(v, "1.24.") {
		t.Errorf("Init version = %q, want 1.24.x", v)
	}
	if got := Version(); got != v {
		t.Errorf("Version() = %q, want %q", got, v)
	}

	link := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if got, err := Init(link, SourceEnv); err != nil || got != v {
		t.Errorf("Init(symlink to the loaded library) = %q, %v; want %q, nil", got, err, v)
	}

	other := copyPrefix(t, path, -1, "libonnxruntime.so.1")
	_, err = Init(other, SourceFlag)
	want := fmt.Sprintf("ort: load %s (from flag): onnxruntime is already loaded from %s (from %s)", other, path, src)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Init(a second library) error = %v, want one containing %q", err, want)
	}
}

func TestProviders(t *testing.T) {
	path, _ := requireLibrary(t)
	built, err := BuiltProviders()
	if err != nil {
		t.Fatal(err)
	}
	usable, err := Providers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(usable, cpuProvider) {
		t.Errorf("Providers() = %q, want it to contain %s", usable, cpuProvider)
	}
	for _, p := range built {
		err := ProbeProvider(p)
		if got := slices.Contains(usable, p); got != (err == nil) {
			t.Errorf("%s: in Providers() = %v, but ProbeProvider = %v", p, got, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "ort: provider "+p+": ") {
			t.Errorf("ProbeProvider(%s) error %q lacks the ort: provider prefix", p, err)
		}
	}
	for _, p := range usable {
		if !slices.Contains(built, p) {
			t.Errorf("Providers() has %s, which BuiltProviders() %q lacks", p, built)
		}
	}
	if err := ProbeProvider("NoSuchExecutionProvider"); err == nil || !strings.Contains(err.Error(), "NoSuchExecutionProvider") {
		t.Errorf("ProbeProvider(NoSuchExecutionProvider) = %v, want an error naming it", err)
	}
	if isPinned(t, path) {
		// The npm build is compiled with CUDA but ships no CUDA provider
		// library: listed, yet never usable, whatever the machine.
		const cuda = "CUDAExecutionProvider"
		if !slices.Contains(built, cuda) || slices.Contains(usable, cuda) {
			t.Errorf("make setup's library: BuiltProviders() = %q, Providers() = %q; want %s in the first only", built, usable, cuda)
		}
	}
}

// isPinned reports whether the library at path is the file make setup
// installs, whichever setting named it (make test names it through
// ONNXRUNTIME_LIB).
func isPinned(t *testing.T, path string) bool {
	t.Helper()
	return checkSetupSum(path) == nil
}

// TestSetupChecksumMatchesLibrary checks the committed checksum against the
// library in the make setup folder (the Makefile verifies it with sha256sum;
// this verifies the Go side reads the same file the same way).
func TestSetupChecksumMatchesLibrary(t *testing.T) {
	setupDigest(t)
	requireLibrary(t)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, filepath.FromSlash(SetupPath))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s: not installed; the library in use comes from elsewhere", path)
	}
	if err := checkSetupSum(path); err != nil {
		t.Errorf("checkSetupSum(%s): %v", path, err)
	}
}

// TestOrtAPISlots recomputes the OrtApi slots and C API version this package
// hard-codes from onnxruntime_c_api.h as onnxruntime_go ships it. A wrong
// slot would call the wrong function; this catches it at the source.
func TestOrtAPISlots(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/yalue/onnxruntime_go: %v", err)
	}
	header := filepath.Join(strings.TrimSpace(string(dir)), "onnxruntime_c_api.h")
	if _, err := os.Stat(header); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.Skipf("%s is not in the module cache (go mod download fetches it)", header)
		}
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "slots.c")
	prog := `#include <stdio.h>
#include <stddef.h>
#include "onnxruntime_c_api.h"
#define SLOT(f) printf(#f " %zu\n", offsetof(OrtApi, f) / sizeof(void *))
int main(void) {
	printf("ORT_API_VERSION %d\n", ORT_API_VERSION);
	SLOT(GetErrorMessage);
	SLOT(ReleaseStatus);
	SLOT(GetAvailableProviders);
	SLOT(ReleaseAvailableProviders);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := strings.Fields(goEnv(t, "CC"))
	bin := filepath.Join(t.TempDir(), "slots")
	args := append(cc[1:], "-I", filepath.Dir(header), "-o", bin, src)
	if b, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("compile %s: %v\n%s", src, err, b)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ORT_API_VERSION %d\nGetErrorMessage %d\nReleaseStatus %d\nGetAvailableProviders %d\nReleaseAvailableProviders %d\n",
		ortAPIVersion, apiSlots.GetErrorMessage, apiSlots.ReleaseStatus, apiSlots.GetAvailableProviders, apiSlots.ReleaseAvailableProviders)
	if string(out) != want {
		t.Errorf("from %s:\n%s\nthis package uses:\n%s", header, out, want)
	}
}
