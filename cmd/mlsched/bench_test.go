package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkCachedRun times `mlsched run` with everything cached, process
// start included, over a store holding large artifacts (5 million jobs and a
// profile with its models, published to models/): a cached run must not read
// them. Target: at most 10 ms per run, the median of a few; compare it side
// by side with BenchmarkSnakemakeNoop.
func BenchmarkCachedRun(b *testing.B) {
	dir := b.TempDir()
	// generate draws only the models the profile measures, which the
	// schedule stage needs curves of.
	yaml := `generate: {train: {jobs: 4000000}, eval: {jobs: 1000000}, models: {mlp: 0.5, resnet18: 0.5}}
train: {placement: {decisions: 2000}}
profile:
  models: [mlp, resnet18]
  batch_sizes: [1]
  threads: [1]
  repeats: 3
  matmul: {sizes: [64], repeats: 2}
  contention: {models: [mlp], sessions: [1], repeats: 3}
`
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func() {
		cmd := exec.Command(leanBin, "run") // bin/mlsched, as make build makes it
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mlsched run: %v\n%s", err, out)
		}
	}
	run() // generate the artifacts once
	var size int64
	filepath.Walk(filepath.Join(dir, "data"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(size)/(1<<20), "store-MiB")
}

// BenchmarkProcessFloor times a Go program that only prints a line, built
// as mlsched is (static), started and waited for as BenchmarkCachedRun
// starts mlsched: the floor under any Go command's time on this machine,
// to read BenchmarkCachedRun against (run them side by side).
func BenchmarkProcessFloor(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "floor")
	build := exec.Command("go", "build", "-o", bin, "./testdata/floor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the floor program: %v\n%s", err, out)
	}
	for b.Loop() {
		if out, err := exec.Command(bin).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}
