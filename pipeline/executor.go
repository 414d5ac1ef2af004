package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// Executor runs a stage's code for the runner. The runner does everything
// around it, the key, the staging directory, the inputs, the memo, and
// commits what the code leaves in env.Dir; where the code runs is the
// executor's business: in this process (Inline), in a worker process
// (Process), and, later, on a cluster's workers. Snakemake's executor
// plugins draw the same line between storage and where jobs run.
type Executor interface {
	// Execute runs the stage's code with env and returns its error. It
	// returns promptly with ctx.Err() when ctx is cancelled.
	Execute(ctx context.Context, s *Stage, env *Env) error
}

// Finisher is implemented by an Executor that holds something open across
// a run's stages, such as a workflow on a cluster's scheduler, and must be
// told when the run is over. It is optional, as io.Closer is: Run does not
// call it; whoever runs a pipeline with such an executor calls Finish once
// after Run returns, whatever Run's outcome, with a context that is not
// the run's (which an interrupt has cancelled).
type Finisher interface {
	// Finish ends what the executor started for the run: cleanly after a
	// run that succeeded (cancelled false), or cancelling what still runs
	// elsewhere after one that failed or was interrupted (cancelled true).
	// It does nothing when the run started nothing there.
	Finish(ctx context.Context, cancelled bool) error
}

// Inline runs a stage's Run function in this process.
type Inline struct{}

var _ Executor = Inline{}

// Execute implements Executor.
func (Inline) Execute(ctx context.Context, s *Stage, env *Env) error {
	if s.Run == nil {
		return fmt.Errorf("stage %s has no Run function in this program (it runs in a worker process)", s.Name)
	}
	return callStage(ctx, s.Run, env)
}

// Process runs each stage in a worker process of its own: a program that
// links the stages' code, which the runner's program need not. The worker
// reads a Task, as JSON, on its standard input and answers on its standard
// output (see Serve). A stage that crashes its process (a fault in a C
// library, say) fails alone: the runner reports it and discards its
// staging directory, as for any failure.
type Process struct {
	// Command is the worker's path and arguments.
	Command []string
	// Payload goes to the worker with every task: what it needs to build
	// the stages' code, such as the app's configuration.
	Payload json.RawMessage
	// Stderr receives the worker's standard error; nil discards it.
	Stderr io.Writer
}

var _ Executor = (*Process)(nil)

// Task is a stage's Env as a worker receives it: everything but its
// functions, and the app's payload.
type Task struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Code is the stage's code version that Version's key names
	// (Stage.Code): a worker built from other code refuses the task,
	// since its output would be stored under a key it does not match.
	Code     string            `json:"code"`
	Dir      string            `json:"dir"`
	Seed     int64             `json:"seed"`
	Inputs   map[string]Input  `json:"inputs"`
	Refs     map[string]Input  `json:"refs,omitempty"`
	Metadata map[string]string `json:"metadata"`
	Memo     MemoSpec          `json:"memo"`
	Shard    *Shard            `json:"shard,omitempty"`
	Payload  json.RawMessage   `json:"payload,omitempty"`
}

// answer is one line a worker writes: progress, or its last word.
type answer struct {
	Progress *[2]int64 `json:"progress,omitempty"`
	Done     *outcome  `json:"done,omitempty"`
}

// outcome is what a worker's stage left besides its files.
type outcome struct {
	Notes map[string]string `json:"notes,omitempty"`
	Memo  []string          `json:"memo,omitempty"`
	Error string            `json:"error,omitempty"`
}

// interruptGrace is how long a cancelled worker has to stop by itself
// before it is killed.
const interruptGrace = 10 * time.Second

// Execute implements Executor.
func (p *Process) Execute(ctx context.Context, s *Stage, env *Env) error {
	if len(p.Command) == 0 {
		return errors.New("no worker command")
	}
	task, err := json.Marshal(Task{Stage: env.Stage, Version: env.Version, Code: s.Code, Dir: env.Dir, Seed: env.Seed,
		Inputs: env.Inputs, Refs: env.Refs, Metadata: env.Metadata, Memo: env.Memo.Spec(), Shard: env.Shard, Payload: p.Payload})
	if err != nil {
		return fmt.Errorf("worker task: %w", err)
	}
	cmd := exec.CommandContext(ctx, p.Command[0], p.Command[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = interruptGrace
	cmd.SysProcAttr = workerAttr()
	cmd.Stdin = bytes.NewReader(task)
	cmd.Stderr = p.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker %s: %w", p.Command[0], err)
	}
	var done *outcome
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var protoErr error
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			protoErr = fmt.Errorf("worker wrote %q: %w", truncate(sc.Text(), 200), err)
			break
		}
		switch {
		case a.Progress != nil:
			env.Progress(a.Progress[0], a.Progress[1])
		case a.Done != nil:
			done = a.Done
		}
	}
	if protoErr == nil {
		protoErr = sc.Err()
	}
	if protoErr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if protoErr != nil {
		return protoErr
	}
	if done == nil {
		if waitErr == nil {
			waitErr = errors.New("it closed its output")
		}
		return fmt.Errorf("worker %s died before the stage finished: %w", p.Command[0], waitErr)
	}
	maps.Copy(env.Notes, done.Notes)
	env.Memo.Use(done.Memo...)
	if done.Error != "" {
		return errors.New(done.Error)
	}
	return waitErr
}

// Serve is a worker's side of Process: it reads one Task from r, runs the
// stage that code returns for it, writes the stage's progress and then its
// outcome to w, one JSON object per line, and returns. The stage's own
// failure goes to w; Serve's error is for a task it could not read or an
// answer it could not write.
func Serve(ctx context.Context, r io.Reader, w io.Writer, code func(t *Task) (RunFunc, error)) error {
	var t Task
	if err := json.NewDecoder(r).Decode(&t); err != nil {
		return fmt.Errorf("read task: %w", err)
	}
	enc := json.NewEncoder(w)
	env := &Env{Stage: t.Stage, Version: t.Version, Dir: t.Dir, Seed: t.Seed, Inputs: t.Inputs, Refs: t.Refs,
		Metadata: t.Metadata, Notes: map[string]string{}, Memo: t.Memo.open(), Shard: t.Shard}
	// The stage may report from several goroutines and faster than the
	// pipe drains: one goroutine writes the latest report whenever it can,
	// and the last one always.
	var (
		mu     sync.Mutex
		latest *[2]int64
	)
	wake := make(chan struct{}, 1)
	env.Progress = func(done, total int64) {
		mu.Lock()
		latest = &[2]int64{done, total}
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	take := func() *[2]int64 {
		mu.Lock()
		defer mu.Unlock()
		p := latest
		latest = nil
		return p
	}
	writeErr := make(chan error, 1)
	go func() {
		var err error
		for range wake {
			if p := take(); p != nil && err == nil {
				err = enc.Encode(answer{Progress: p})
			}
		}
		if p := take(); p != nil && err == nil {
			err = enc.Encode(answer{Progress: p})
		}
		writeErr <- err
	}()
	var runErr error
	if run, err := code(&t); err != nil {
		runErr = err
	} else {
		runErr = callStage(ctx, run, env)
	}
	close(wake)
	if err := <-writeErr; err != nil {
		return fmt.Errorf("write progress: %w", err)
	}
	noteRecomputed(env.Notes, env.Memo)
	o := &outcome{Notes: env.Notes, Memo: env.Memo.Used()}
	if runErr != nil {
		o.Error = runErr.Error()
	}
	return enc.Encode(answer{Done: o})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// callStage runs a stage, turning a panic into an error so that one broken
// stage cannot take the process and the store's consistency with it.
func callStage(ctx context.Context, run RunFunc, env *Env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 8<<10)
			buf = buf[:runtime.Stack(buf, false)]
			err = fmt.Errorf("panic: %v\n%s", r, buf)
		}
	}()
	return run(ctx, env)
}

// OtherCodeError is a task refused because the code that would run it is
// not the code its key names: its output would be stored, and shared,
// under a version it does not match.
type OtherCodeError struct {
	// Stage and Version name the task; Want is the code version its key
	// names and Have the one the refusing program was built with.
	Stage, Version, Want, Have string
	// Program names the refusing program.
	Program string
}

func (e *OtherCodeError) Error() string {
	have := "none"
	if e.Have != "" {
		have = fmt.Sprintf("%.16s", e.Have)
	}
	want := "names no code version"
	if e.Want != "" {
		want = fmt.Sprintf("needs %s's code version %.16s", e.Stage, e.Want)
	}
	return fmt.Sprintf("%s@%s %s, but %s was built from other code (%s's code version %s): build it from the same commit as the coordinator (make build)",
		e.Stage, e.Version, want, e.Program, e.Stage, have)
}

// CheckCode refuses t unless own, the code version that program would run
// t's stage with, is the one t's key names.
func CheckCode(t *Task, own, program string) error {
	if t.Code == own && own != "" {
		return nil
	}
	return &OtherCodeError{Stage: t.Stage, Version: t.Version, Want: t.Code, Have: own, Program: program}
}
