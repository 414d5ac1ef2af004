package codeversion_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/mlsched/mlsched/pipeline/codeversion"
)

// This is the check that keeps stale code versions from shipping: a test in
// package stages (directory stages/, so the module root is "..") regenerates
// the committed file and compares bytes.
func ExampleGenerate() {
	var t *testing.T // the *testing.T of TestCodeVersionsUpToDate

	want, err := codeversion.Generate("..", "stages", "stages/codeversion_gen.go", "stages")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("codeversion_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("stale code versions: run make build")
	}
}
