package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages"
)

// workerName is the program that runs the stages' code, which this one
// does not link (see cmd/mlsched-worker).
const workerName = "mlsched-worker"

// workerEnv names the worker's path when it is not beside mlsched.
const workerEnv = "MLSCHED_WORKER"

// workers runs each stage in an mlsched-worker process. It finds the
// worker and encodes the configuration for it only when a stage must run,
// so that a run with everything cached pays for neither.
type workers struct {
	cfg     stages.Config
	rt      stages.Runtime
	environ []string
	stderr  io.Writer

	once sync.Once
	p    *pipeline.Process
	err  error
}

// Execute implements pipeline.Executor.
func (w *workers) Execute(ctx context.Context, s *pipeline.Stage, env *pipeline.Env) error {
	w.once.Do(w.start)
	if w.err != nil {
		return w.err
	}
	return w.p.Execute(ctx, s, env)
}

func (w *workers) start() {
	path, err := workerPath(w.environ)
	if err != nil {
		w.err = err
		return
	}
	payload, err := stages.EncodePayload(w.cfg, w.rt)
	if err != nil {
		w.err = fmt.Errorf("encode the configuration for %s: %w", workerName, err)
		return
	}
	w.p = &pipeline.Process{Command: []string{path, "stage"}, Payload: payload, Stderr: w.stderr}
}

// workerPath finds mlsched-worker: where MLSCHED_WORKER says, or else
// beside this program, as make build puts it.
func workerPath(environ []string) (string, error) {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, workerEnv+"="); ok && v != "" {
			if _, err := userfile.Check(v); err != nil {
				return "", fmt.Errorf("%s=%s: %w", workerEnv, v, err)
			}
			return v, nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find %s: %w", workerName, err)
	}
	path := filepath.Join(filepath.Dir(exe), workerName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("a stage must run, but %s, which runs the stages' code, is not beside %s (build both with 'make build', or set %s to its path)", workerName, exe, workerEnv)
	} else if err != nil {
		return "", err
	}
	return path, nil
}
