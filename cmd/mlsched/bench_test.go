package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

// BenchmarkCachedRun times `mlsched run` with everything cached, process
// start included, over a store holding large artifacts (5 million jobs and a
// profile with its models, published to models/): a cached run must not read
// them. Target: at most 10 ms per run, the median of a few; compare it side
// by side with BenchmarkSnakemakeNoop. With BENCH_MLSCHED_PROJECT it
// times the project there (run once before) instead, which makes its store
// once for several builds' runs (E2E_MLSCHED_BINS) to be timed side by
// side; the store then is the project's.
func BenchmarkCachedRun(b *testing.B) {
	dir := os.Getenv(benchProjectEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	// generate draws only the models the profile measures, which the
	// schedule stage needs curves of.
	yaml := `generate: {train: {jobs: 4000000}, eval: {jobs: 1000000}, models: {mlp: 0.5, resnet18: 0.5}}
train: {placement: {decisions: 2000}, predictor: {folds: 2}} # folds: grouped cross-validation needs as many configurations as folds, and the profile below measures 4
profile:
  models: [mlp, resnet18]
  batch_sizes: [1]
  threads: [1]
  repeats: 3
  matmul: {sizes: [64], repeats: 2}
  contention: {models: [mlp], sessions: [1], repeats: 3}
`
	if _, err := os.Stat(filepath.Join(dir, "pipeline.yaml")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(yaml), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run := func() {
		cmd := exec.Command(leanBin, "run") // bin/mlsched, as make build makes it
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mlsched run: %v\n%s", err, out)
		}
	}
	run() // generate the artifacts once, or (a project's) warm the caches
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

// benchProjectEnv names a project (a folder with its pipeline.yaml and
// store, run once) that BenchmarkInputCheck checks the stages of; the
// environment's MLSCHED_ variables apply to its config, as they do to
// mlsched's. Without it, the benchmark runs tiny.yaml in a folder of its
// own first.
const benchProjectEnv = "BENCH_MLSCHED_PROJECT"

// BenchmarkInputCheck times the check a stage's stored inputs get before
// it runs (issue 29, item 7), stage by stage over a stored run: each
// iteration forces the stage with an executor that runs nothing, so that
// the run settles the upstreams, re-hashes the files the stage would read,
// makes its staging folder and stops there. check-ms is the time from the
// stage's start to its executor's call (the check, and the staging
// folder's making), input-MiB what the check read. The files are in the
// page cache after the first iteration, as an upstream's output just
// written, or read by the run before, is; a stage with no stored input
// shows the floor. Compare check-ms with the stage's own duration in the
// run (mlsched ls).
func BenchmarkInputCheck(b *testing.B) {
	dir := os.Getenv(benchProjectEnv)
	if dir == "" {
		dir = b.TempDir()
		for _, f := range []string{"tiny.yaml", "imported-profile.csv"} {
			data, err := os.ReadFile(filepath.Join("testdata", f))
			if err != nil {
				b.Fatal(err)
			}
			if f == "tiny.yaml" {
				f = "pipeline.yaml"
			}
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		cmd := exec.Command(mlschedBin, "run")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mlsched run: %v\n%s", err, out)
		}
	}
	a := &app{stdout: io.Discard, stderr: io.Discard, environ: os.Environ(), configPath: filepath.Join(dir, "pipeline.yaml")}
	l, err := a.load()
	if err != nil {
		b.Fatal(err)
	}
	for _, stage := range l.p.Graph.Names() {
		b.Run(stage, func(b *testing.B) {
			stop := &stopAtStart{}
			l.p.Executor = stop
			var started time.Time
			rep := pipeline.ReporterFunc(func(e pipeline.Event) {
				if e.Kind == pipeline.EventStart {
					started = time.Now()
				}
			})
			var check time.Duration
			for b.Loop() {
				_, err := l.p.Run(b.Context(), pipeline.RunOptions{Targets: []string{stage}, Force: true, Jobs: 1, Reporter: rep})
				if !errors.Is(err, errStopped) {
					b.Fatalf("run --force %s with the stopping executor: %v", stage, err)
				}
				check += stop.at.Sub(started)
			}
			b.ReportMetric(float64(check.Microseconds())/1e3/float64(b.N), "check-ms")
			b.ReportMetric(float64(stop.bytes)/(1<<20), "input-MiB")
		})
	}
}

// stopAtStart is an Executor that runs nothing: it notes when it was
// called and how many bytes of stored files the stage was given, and
// fails with errStopped.
type stopAtStart struct {
	at    time.Time
	bytes int64
}

var errStopped = errors.New("stopped before the stage's code")

func (s *stopAtStart) Execute(_ context.Context, _ *pipeline.Stage, env *pipeline.Env) error {
	s.at = time.Now()
	s.bytes = 0
	for _, ins := range []map[string]pipeline.Input{env.Inputs, env.Refs} {
		for _, in := range ins {
			for _, f := range in.Files {
				s.bytes += f.Size
			}
		}
	}
	return errStopped
}
