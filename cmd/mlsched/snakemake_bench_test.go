package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSnakemakeNoop times Snakemake's no-op run (`snakemake --cores 1`
// with every output up to date), process start included, on mlsched's DAG
// as testdata/snakemake/Snakefile writes it: the figure a fully cached
// `mlsched run` (BenchmarkCachedRun) is compared with, side by side in one
// `make bench BENCH='CachedRun|SnakemakeNoop' BENCHPKG=./cmd/mlsched`. It
// is skipped where snakemake is not installed (`make bench-tools` installs
// Debian's).
func BenchmarkSnakemakeNoop(b *testing.B) {
	snakemake, err := exec.LookPath("snakemake")
	if err != nil {
		b.Skip("snakemake is not on PATH; install it (Debian: apt-get install snakemake) to compare with its no-op run")
	}
	dir := b.TempDir()
	snakefile, err := os.ReadFile(filepath.Join("testdata", "snakemake", "Snakefile"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Snakefile"), snakefile, 0o644); err != nil {
		b.Fatal(err)
	}
	run := func() []byte {
		cmd := exec.Command(snakemake, "--cores", "1")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("snakemake --cores 1: %v\n%s", err, out)
		}
		return out
	}
	// noop runs snakemake with everything up to date; a run that did any
	// work would time the wrong thing. Snakemake 7 says, on stderr:
	// "Nothing to be done (all requested files are present and up to date)."
	noop := func() {
		if out := run(); !bytes.Contains(out, []byte("Nothing to be done")) {
			b.Fatalf("snakemake --cores 1 ran jobs with everything up to date:\n%s", out)
		}
	}
	run() // run every job once, so that everything is up to date
	noop()
	b.ResetTimer()
	for b.Loop() {
		noop()
	}
}
