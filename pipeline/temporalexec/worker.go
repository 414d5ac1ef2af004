package temporalexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/mlsched/mlsched/pipeline"
)

// Worker runs stages for runs' workflows on this machine: it pulls their
// inputs from the remote into Cache, runs their code with Exec and
// uploads what they made.
type Worker struct {
	// Remote is the remote shared with the runs' coordinators: a
	// *remote.Remote, or a fake in tests.
	Remote WorkerRemote
	// Cache is this worker's own store: the inputs it pulled, its
	// staging directories and the memo entries its stages built.
	Cache pipeline.Store
	// Exec runs a stage's code given the task's payload, rewritten by
	// Prepare for this machine; typically a pipeline.Process running the
	// stages' worker program.
	Exec func(payload json.RawMessage) pipeline.Executor
	// Prepare rewrites a task's app payload for this machine: configDir
	// is where the files outside the store that the config names were put.
	Prepare func(payload json.RawMessage, configDir string) (json.RawMessage, error)
	// Name identifies this worker in results and messages.
	Name string
	// Codes maps each stage this worker runs to its code version (what
	// Exec's program was built with): the worker registers an activity
	// per stage, and refuses a task whose key names other code.
	Codes map[string]string
	// Log, if set, is told of each activity this worker ran, in one line:
	// what it ran (stage@version, and which part), how it ended, how long
	// it took, its attempt and workflow, and its error.
	Log func(format string, args ...any)

	// exclusive lets a stage that measures the machine run alone here.
	exclusive sync.RWMutex
	// cacheMu serializes this process's writes to Cache (pulls), which
	// also take the store's lock against other processes.
	cacheMu sync.Mutex
}

// Register registers the workflows, and an activity for each stage in
// Codes, with w.
func (wk *Worker) Register(w worker.Registry) {
	w.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterWorkflowWithOptions(StageWorkflow, workflow.RegisterOptions{Name: StageWorkflowName})
	for stage := range wk.Codes {
		w.RegisterActivityWithOptions(wk.RunStage, activity.RegisterOptions{Name: ActivityName(stage)})
	}
}

// recordName is where a run's stage (or part of one) records its result:
// retries within the run find it; another run (a forced rerun) does not.
// No record's name is a folder of another's: an S3 server over a file
// system (versitygw) cannot hold an object where another's key needs a
// directory.
func recordName(workflowID string, req Request) string {
	name := "runs/" + workflowID + "/" + req.Stage + "/" + req.Version
	if req.Shard != nil {
		return name + fmt.Sprintf(".part-%d-of-%d", req.Shard.Index, req.Shard.Count)
	}
	return name + ".stage"
}

// RunStage is the activity: it runs one stage of a run on this machine.
func (wk *Worker) RunStage(ctx context.Context, req Request) (_ Reply, err error) {
	info := activity.GetInfo(ctx)
	start, ran := time.Now(), "ran"
	defer func() { wk.logActivity(ctx, info, req, time.Since(start), ran, err) }()
	record := recordName(info.WorkflowExecution.ID, req)
	// A retry after an attempt that finished returns its result.
	if d, err := wk.Remote.Record(ctx, record); err == nil {
		ran = "answered with an earlier attempt's result"
		return Reply{Result: string(d)}, nil
	} else if !errors.Is(err, pipeline.ErrNotFound) {
		return Reply{}, err
	}
	progress := &heartbeat{}
	stop := progress.run(ctx, heartbeatEvery)
	defer stop()

	if req.Exclusive {
		wk.exclusive.Lock()
		defer wk.exclusive.Unlock()
	} else {
		wk.exclusive.RLock()
		defer wk.exclusive.RUnlock()
	}
	result, err := wk.run(ctx, req, progress)
	if err != nil {
		if ctx.Err() == nil && errors.As(err, new(*pipeline.OtherCodeError)) {
			return Reply{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrOtherCode, nil)
		}
		if ctx.Err() == nil && errors.As(err, new(*stageError)) {
			return Reply{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrStageFailed, nil)
		}
		return Reply{}, err
	}
	b, err := json.Marshal(result)
	if err != nil {
		return Reply{}, err
	}
	d, err := wk.Remote.PutBlob(ctx, b)
	if err != nil {
		return Reply{}, err
	}
	created, err := wk.Remote.Create(ctx, record, []byte(d))
	if err != nil {
		return Reply{}, err
	}
	if !created {
		// Another attempt finished first: its result is the run's.
		first, err := wk.Remote.Record(ctx, record)
		if err != nil {
			return Reply{}, err
		}
		d = string(first)
	}
	return Reply{Result: d}, nil
}

// logActivity tells Log how an activity ended.
func (wk *Worker) logActivity(ctx context.Context, info activity.Info, req Request, took time.Duration, ran string, err error) {
	if wk.Log == nil {
		return
	}
	outcome, why := ran, ""
	var app *temporal.ApplicationError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome, why = "stopped", ": "+ctx.Err().Error()
	case errors.As(err, &app) && app.NonRetryable():
		outcome, why = "failed for good", ": "+app.Message()
	default:
		outcome, why = "failed", ": "+err.Error()
	}
	// The error last: it may be long (an object store's).
	wk.Log("%s: %s in %.2fs (attempt %d, workflow %s)%s", req.label(), outcome, took.Seconds(), info.Attempt, info.WorkflowExecution.ID, why)
}

// stageError is a failure of the stage's own code.
type stageError struct{ err error }

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// run pulls the stage's inputs, runs it, and uploads its output.
func (wk *Worker) run(ctx context.Context, req Request, progress *heartbeat) (*Result, error) {
	b, err := wk.Remote.GetBlob(ctx, req.Task, maxRecord)
	if err != nil {
		return nil, fmt.Errorf("task of %s@%s: %w", req.Stage, req.Version, err)
	}
	spec, err := decode[TaskSpec](b, "task of "+req.Stage+"@"+req.Version)
	if err != nil {
		return nil, err
	}
	t := spec.Task
	if t.Stage != req.Stage || t.Version != req.Version {
		return nil, fmt.Errorf("task %.16s describes %s@%s, not %s@%s", req.Task, t.Stage, t.Version, req.Stage, req.Version)
	}
	if err := pipeline.CheckCode(&t, wk.Codes[t.Stage], "mlsched worker "+wk.Name); err != nil {
		return nil, err
	}
	inputs, refs, err := wk.pullInputs(ctx, t)
	if err != nil {
		return nil, err
	}
	partsOn, err := wk.pullParts(ctx, t.Stage, req.After)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "mlsched-task-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	configDir := filepath.Join(work, "config")
	if err := wk.fetchExtern(ctx, configDir, spec.Extern); err != nil {
		return nil, err
	}
	payload, err := wk.Prepare(t.Payload, configDir)
	if err != nil {
		return nil, fmt.Errorf("task of %s@%s: %w", t.Stage, t.Version, err)
	}
	staging, err := wk.Cache.Begin(t.Stage, t.Version)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	env := &pipeline.Env{
		Stage: t.Stage, Version: t.Version, Dir: staging, Seed: t.Seed,
		Inputs: inputs, Refs: refs, Metadata: t.Metadata, Notes: map[string]string{},
		Memo:     wk.Cache.Memo(t.Stage, t.Memo.Base),
		Progress: progress.set,
		Shard:    req.Shard,
	}
	if err := wk.Exec(payload).Execute(ctx, &pipeline.Stage{Name: t.Stage, Code: t.Code}, env); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &stageError{fmt.Errorf("%s@%s on %s: %w", t.Stage, t.Version, wk.Name, err)}
	}
	used := env.Memo.Used()
	if err := wk.Remote.PushMemo(ctx, wk.Cache, t.Stage, used); err != nil {
		return nil, err
	}
	if req.Shard != nil {
		// A part's result is its memo entries; its files are discarded.
		return &Result{Stage: t.Stage, Version: t.Version, Memo: used, Worker: wk.Name}, nil
	}
	files, err := pipeline.Collect(ctx, staging)
	if err != nil {
		return nil, err
	}
	uploads := map[string]string{}
	for _, f := range files {
		uploads[f.SHA256] = filepath.Join(staging, filepath.FromSlash(f.Path))
	}
	if _, err := wk.Remote.UploadFiles(ctx, uploads); err != nil {
		return nil, err
	}
	return &Result{Stage: t.Stage, Version: t.Version, Files: files, Notes: env.Notes, Memo: used, Worker: wk.Name, PartsOn: partsOn}, nil
}

// pullInputs brings the task's inputs and references into the cache and
// returns them with their directories there.
func (wk *Worker) pullInputs(ctx context.Context, t pipeline.Task) (inputs, refs map[string]pipeline.Input, err error) {
	wk.cacheMu.Lock()
	defer wk.cacheMu.Unlock()
	unlock, err := wk.Cache.Lock(ctx, "mlsched worker", true, nil)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	place := func(in map[string]pipeline.Input) (map[string]pipeline.Input, error) {
		if in == nil {
			return nil, nil
		}
		out := make(map[string]pipeline.Input, len(in))
		for k, v := range in {
			if _, _, err := wk.Remote.Pull(ctx, wk.Cache, v.Stage, v.Version); err != nil {
				return nil, fmt.Errorf("input %s@%s: %w", v.Stage, v.Version, err)
			}
			dir, err := wk.Cache.Open(v.Stage, v.Version)
			if err != nil {
				return nil, err
			}
			v.Dir = dir
			out[k] = v
		}
		return out, nil
	}
	if inputs, err = place(t.Inputs); err != nil {
		return nil, nil, err
	}
	if refs, err = place(t.Refs); err != nil {
		return nil, nil, err
	}
	return inputs, refs, nil
}

// pullParts brings the memo entries of the parts whose Results are named
// into the cache, so that the stage finds them.
func (wk *Worker) pullParts(ctx context.Context, stage string, results []string) (partsOn map[string]int, err error) {
	var keys []string
	for _, d := range results {
		b, err := wk.Remote.GetBlob(ctx, d, maxRecord)
		if err != nil {
			return nil, fmt.Errorf("a part of %s: %w", stage, err)
		}
		res, err := decode[Result](b, "a part's result")
		if err != nil {
			return nil, err
		}
		if res.Stage != stage {
			return nil, fmt.Errorf("a part's result %.16s is %s's, not %s's", d, res.Stage, stage)
		}
		keys = append(keys, res.Memo...)
		if partsOn == nil {
			partsOn = map[string]int{}
		}
		partsOn[res.Worker]++
	}
	if len(keys) == 0 {
		return partsOn, nil
	}
	wk.cacheMu.Lock()
	defer wk.cacheMu.Unlock()
	unlock, err := wk.Cache.Lock(ctx, "mlsched worker", true, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return partsOn, wk.Remote.PullMemo(ctx, wk.Cache, stage, keys)
}

// fetchExtern puts each file outside the store at its relative path
// below dir, checked against its digest.
func (wk *Worker) fetchExtern(ctx context.Context, dir string, ext []Extern) error {
	files := make([]pipeline.File, 0, len(ext))
	for _, e := range ext {
		if !filepath.IsLocal(e.Path) {
			return fmt.Errorf("extern file %q is not a relative path inside the config's directory", e.Path)
		}
		files = append(files, pipeline.File{Path: filepath.ToSlash(e.Path), SHA256: e.SHA256, Size: e.Size, ModTime: time.Now().UnixNano()})
	}
	return wk.Remote.DownloadFiles(ctx, dir, files)
}

// heartbeat keeps a running activity's heartbeat going with the stage's
// latest progress.
type heartbeat struct {
	mu          sync.Mutex
	done, total int64
}

func (h *heartbeat) set(done, total int64) {
	h.mu.Lock()
	h.done, h.total = done, total
	h.mu.Unlock()
}

func (h *heartbeat) get() [2]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return [2]int64{h.done, h.total}
}

// run heartbeats every interval until the returned function is called.
func (h *heartbeat) run(ctx context.Context, every time.Duration) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, h.get())
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// notes merges a result's notes into a stage's.
func notes(dst, src map[string]string) { maps.Copy(dst, src) }
