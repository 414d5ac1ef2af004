package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportedWorkload runs the whole pipeline on docs/workloads.md's example
// workload (docs/examples/workload.csv) as the eval workload, through the real
// CLI: every stage downstream takes it as it takes a synthetic one. Then an
// edit of the file reruns generate, a file out of order fails naming its
// file, row and column, and paths that are not a regular CSV or Parquet
// file are refused as config errors (exit 2) at once.
func TestImportedWorkload(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	example, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "workload.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(p.dir, "workload.csv")
	if err := os.WriteFile(csv, example, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := strings.Count(string(example), "\n") - 1
	set := []string{"--set", "generate.eval.import=workload.csv"}

	if got := outcomes(p.mustCLI(append([]string{"run"}, set...)...)); got["generate"] != "ran" || got["evaluate"] != "ran" {
		t.Fatalf("run with an imported workload: %v", got)
	}
	show := p.mustCLI("show", "generate")
	if want := "jobs-eval.parquet"; !strings.Contains(show, want) || !strings.Contains(show, " 240 rows") || rows != 240 {
		t.Errorf("show generate, %d rows in the example:\n%s", rows, show)
	}
	md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil || !strings.Contains(string(md), "replications of about 240 eval jobs") || !strings.Contains(string(md), "The replications share one eval workload") {
		t.Errorf("report.md: %v\n%.400s", err, md)
	}
	if got := outcomes(p.mustCLI(append([]string{"run"}, set...)...)); got["generate"] != "cached" {
		t.Errorf("a second run: %v, want generate cached", got)
	}

	// The file's content is in the key.
	if err := os.WriteFile(csv, append(example, []byte("9.5,mlp,1,interactive,fp32\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := p.mustCLI(append([]string{"status"}, set...)...); !strings.Contains(st, "stale") {
		t.Errorf("status after editing the imported file:\n%s", st)
	}
	if got := outcomes(p.mustCLI(append([]string{"run", "generate"}, set...)...)); got["generate"] != "ran" {
		t.Errorf("run after editing the imported file: %v, want generate ran", got)
	}

	// A row out of order: the stage fails naming the file, row and column.
	if err := os.WriteFile(csv, append(example, []byte("0.5,mlp,1,interactive,fp32\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := p.cli(append([]string{"run", "generate"}, set...)...)
	if code != 1 || !strings.Contains(errs, "generate.eval.import workload.csv: row 241, column arrival_s: 0.5 is before the previous row's 4.2082") {
		t.Errorf("an import out of order: exit %d\n%s", code, errs)
	}

	// Paths that are not a regular .csv or .parquet file.
	if err := syscall.Mkfifo(filepath.Join(p.dir, "p.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{"p.csv", "generate.eval.import: open p.csv: a named pipe (FIFO), not a regular file"},
		{"trace.json", `generate.eval.import: want a .csv or .parquet file, got "trace.json"`},
		{"absent.parquet", "generate.eval.import: "},
	} {
		start := time.Now()
		_, errs, code := p.cli("status", "--set", "generate.eval.import="+tt.path)
		if code != 2 || !strings.Contains(errs, tt.want) || time.Since(start) > 20*time.Second {
			t.Errorf("status with generate.eval.import=%s: exit %d after %v\n%s", tt.path, code, time.Since(start), errs)
		}
	}

	// The holdout workload imports as the others do: its content is in
	// generate's key, and it may not be another workload's jobs.
	holdout := filepath.Join(p.dir, "holdout.csv")
	if err := os.WriteFile(holdout, example, 0o644); err != nil {
		t.Fatal(err)
	}
	hset := []string{"--set", "generate.holdout.import=holdout.csv"}
	if got := outcomes(p.mustCLI(append([]string{"run", "generate"}, hset...)...)); got["generate"] != "ran" {
		t.Fatalf("run generate with an imported holdout workload: %v", got)
	}
	if show := p.mustCLI("show", "generate"); !strings.Contains(show, "jobs-holdout.parquet") {
		t.Errorf("show generate lacks the holdout workload:\n%s", show)
	}
	if err := os.WriteFile(holdout, append(example, []byte("9.5,mlp,1,interactive,fp32\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := p.mustCLI(append([]string{"status"}, hset...)...); !strings.Contains(st, "stale") {
		t.Errorf("status after editing the imported holdout file:\n%s", st)
	}
	_, errs, code = p.cli(append([]string{"status", "--set", "generate.train.import=holdout.csv"}, hset...)...)
	if code != 2 || !strings.Contains(errs, "--set generate.holdout.import=holdout.csv: generate.holdout.import: holds the same jobs as generate.train.import") {
		t.Errorf("a holdout of the train workload's jobs: exit %d\n%s", code, errs)
	}
}
