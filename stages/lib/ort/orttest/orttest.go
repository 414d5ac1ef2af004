// Package orttest finds the onnxruntime library for the tests of packages
// that run models: the one make setup installs in this checkout, or the one
// ONNXRUNTIME_LIB names. Without one a test is skipped, unless
// REQUIRE_ONNXRUNTIME=1 (as make test sets) makes that a failure, so that
// CI never passes by skipping.
package orttest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/ort"
)

// Library returns the library's path and where its choice came from, or
// skips (fails, under REQUIRE_ONNXRUNTIME=1) the test.
func Library(t testing.TB) (string, ort.Source) {
	t.Helper()
	path, src, err := ort.Locate("", "", os.Environ(), []string{moduleRoot(t)})
	if err != nil {
		if os.Getenv("REQUIRE_ONNXRUNTIME") == "1" {
			t.Fatalf("REQUIRE_ONNXRUNTIME=1 and %v", err)
		}
		t.Skipf("%v (REQUIRE_ONNXRUNTIME=1 makes this a failure)", err)
	}
	return path, src
}

// Require loads the library into the process (ort.Init), or skips the
// test as Library does.
func Require(t testing.TB) {
	t.Helper()
	path, src := Library(t)
	if _, err := ort.Init(path, src); err != nil {
		t.Fatal(err)
	}
}

// moduleRoot is the directory of the go.mod above the test's working
// directory (its package's directory).
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("orttest: no go.mod above the test's directory")
		}
		dir = up
	}
}
