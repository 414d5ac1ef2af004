// Command mlsched-worker runs one stage of the mlsched pipeline for the
// mlsched command, which starts it, beside itself, whenever a stage must
// run: mlsched links only the runner and the stages' declarations, and
// starts at once; this program links the stages' code. It reads the
// stage's task as JSON on its standard input and answers on its standard
// output (see package pipeline's Serve); it is not meant to be run by hand.
// A stage that brings its process down (a fault in onnxruntime's C code,
// say) fails alone, and the store stays as it was.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

const usage = `usage: mlsched-worker stage < task.json

mlsched-worker runs one stage of the mlsched pipeline for the mlsched
command, which starts it whenever a stage must run. It is not meant to be
run by hand: use 'mlsched run'.
`

func main() {
	if len(os.Args) != 2 || os.Args[1] != "stage" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// mlsched interrupts its workers when it is interrupted; each stage
	// returns promptly with the context's error.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile, err := startCPUProfile(os.Getenv(cpuProfileEnv))
	if err == nil {
		err = serve(ctx, os.Stdin, os.Stdout)
		err = errors.Join(err, stopProfile())
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mlsched-worker: %v\n", err)
		os.Exit(1)
	}
}

// cpuProfileEnv names a directory where each worker writes a CPU profile of
// the stage it runs, as mlsched-worker-*.pprof (go tool pprof reads it):
// where a stage spends its time, and what make pgo builds the worker with.
// It starts MLSCHED_DEBUG_ so that mlsched does not take it for a config
// key.
const cpuProfileEnv = "MLSCHED_DEBUG_CPUPROFILE"

// startCPUProfile profiles the process into a new file in dir, if dir is
// not empty, and returns what stops the profile and closes the file.
func startCPUProfile(dir string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	f, err := os.CreateTemp(dir, "mlsched-worker-*.pprof")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", cpuProfileEnv, err)
		}
		return nil
	}, nil
}
