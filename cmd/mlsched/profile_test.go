package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireORT skips a test that needs onnxruntime when it is not installed,
// unless REQUIRE_ONNXRUNTIME=1 (as make test sets).
func requireORT(t *testing.T) {
	t.Helper()
	lib := os.Getenv("ONNXRUNTIME_LIB")
	if _, err := os.Stat(lib); lib == "" || err != nil {
		if os.Getenv("REQUIRE_ONNXRUNTIME") == "1" {
			t.Fatalf("onnxruntime library %q not found: run make setup", lib)
		}
		t.Skip("onnxruntime not installed: run make setup, or set ONNXRUNTIME_LIB")
	}
}

func TestProfileMeasuresThisMachine(t *testing.T) {
	requireORT(t)
	p := newProject(t, "measure.yaml")
	if got := outcomes(p.mustCLI("run", "profile")); got["profile"] != "ran" {
		t.Fatalf("run profile: %v", got)
	}
	show := p.mustCLI("show", "profile")
	for _, want := range []string{"note     onnxruntime: 1.24", "note     cpu:", "samples.parquet", "summary.parquet", "machine.parquet", "resnet18.onnx"} {
		if !strings.Contains(show, want) {
			t.Errorf("show profile lacks %q:\n%s", want, show)
		}
	}
	for _, f := range []string{"mlp.onnx", "resnet18.onnx"} {
		if _, err := os.Stat(filepath.Join(p.dir, "models", f)); err != nil {
			t.Errorf("models/%s not published: %v", f, err)
		}
	}
	if got := outcomes(p.mustCLI("run", "profile")); got["profile"] != "cached" {
		t.Errorf("second run: %v", got)
	}
}

func TestMissingLibraryIsOneClearError(t *testing.T) {
	p := newProject(t, "measure.yaml")
	p.env = []string{"ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1"}
	_, errs, code := p.cli("run", "profile")
	if code != 1 || !strings.Contains(errs, "/nonexistent/libonnxruntime.so.1") || !strings.Contains(errs, "make setup") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	if strings.Contains(errs, "panic") || strings.Contains(errs, "SIGSEGV") {
		t.Errorf("a missing library crashed:\n%s", errs)
	}
}
