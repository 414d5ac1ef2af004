package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartCPUProfile checks that the worker's CPU profile is a gzipped
// profile in the named directory, and that a directory it cannot write
// to is an error naming the variable.
func TestStartCPUProfile(t *testing.T) {
	dir := t.TempDir()
	stop, err := startCPUProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mlsched-worker-*.pprof"))
	if len(files) != 1 {
		t.Fatalf("profiles in %s: %v, want one", dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("%s starts % x, not gzip's magic", files[0], b[:min(4, len(b))])
	}

	stop, err = startCPUProfile("")
	if err != nil || stop() != nil {
		t.Errorf("no directory: %v, want no profile and no error", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := startCPUProfile(missing); err == nil || !strings.Contains(err.Error(), cpuProfileEnv) || !strings.Contains(err.Error(), missing) {
		t.Errorf("startCPUProfile(%q) = %v, want an error naming %s and the directory", missing, err, cpuProfileEnv)
	}
}
