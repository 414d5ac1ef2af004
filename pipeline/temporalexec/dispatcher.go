package temporalexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/digest"
)

// Updater sends a stage to a run's workflow and waits for its reply; the
// coordinator's only use of Temporal besides starting and ending the
// workflow. Client implements it over a Temporal client; tests call a
// Worker directly.
type Updater interface {
	// Start starts the run's workflow.
	Start(ctx context.Context) error
	// Stage runs req in the run's workflow and returns the reply.
	Stage(ctx context.Context, req Request) (Reply, error)
	// Finish ends the run's workflow: done after a finished run, or
	// cancelled after an interrupted one.
	Finish(ctx context.Context, cancelled bool) error
}

// Dispatcher is the coordinator's side of a distributed run: the
// pipeline.Executor that dispatches each stage the runner decides to run to
// a Temporal worker, through the run's workflow, and moves the stage's
// inputs and output through Remote. It starts the workflow with the first
// stage, and Finish ends it.
type Dispatcher struct {
	// Updater sends each stage to the run's workflow.
	Updater Updater
	// Remote is the remote shared with the workers: a *remote.Remote,
	// or a fake in tests.
	Remote DispatcherRemote
	// Store is the runner's store: the inputs pushed to the remote come
	// from it, and the memo entries a worker built are pulled into it.
	Store pipeline.VersionSource
	// Payload goes to the worker with every stage, as Process's does; it
	// must hold nothing of this machine's (no environment).
	Payload json.RawMessage
	// Where, if set, is told where each stage ran (its worker, and its
	// parts' workers), as a line about the stage.
	Where func(stage, line string)
	// Extern maps the paths, relative to the config's directory, of the
	// files outside the store the config names to their local paths.
	Extern map[string]string

	once     sync.Once
	startErr error
	ext      []Extern
	mu       sync.Mutex
	started  bool
}

var (
	_ pipeline.Executor = (*Dispatcher)(nil)
	_ pipeline.Finisher = (*Dispatcher)(nil)
)

// start starts the run's workflow and uploads the files outside the
// store, once.
func (e *Dispatcher) start(ctx context.Context) error {
	e.once.Do(func() {
		uploads := map[string]string{}
		for rel, local := range e.Extern {
			d, err := digest.File(local)
			if err != nil {
				e.startErr = fmt.Errorf("%s: %w", local, err)
				return
			}
			e.ext = append(e.ext, Extern{Path: rel, SHA256: d.SHA256, Size: d.Size})
			uploads[d.SHA256] = local
		}
		if _, err := e.Remote.UploadFiles(ctx, uploads); err != nil {
			e.startErr = err
			return
		}
		if e.startErr = e.Updater.Start(ctx); e.startErr == nil {
			e.mu.Lock()
			e.started = true
			e.mu.Unlock()
		}
	})
	return e.startErr
}

// Execute implements pipeline.Executor.
func (e *Dispatcher) Execute(ctx context.Context, s *pipeline.Stage, env *pipeline.Env) error {
	if err := e.start(ctx); err != nil {
		return err
	}
	// The inputs go to the remote first: the worker pulls them from there.
	blank := func(in map[string]pipeline.Input) (map[string]pipeline.Input, error) {
		if in == nil {
			return nil, nil
		}
		out := make(map[string]pipeline.Input, len(in))
		for k, v := range in {
			m, err := e.Store.Manifest(v.Stage, v.Version)
			if err != nil {
				return nil, err
			}
			if err := e.Remote.Push(ctx, e.Store, m); err != nil {
				return nil, err
			}
			v.Dir = ""
			out[k] = v
		}
		return out, nil
	}
	inputs, err := blank(env.Inputs)
	if err != nil {
		return err
	}
	refs, err := blank(env.Refs)
	if err != nil {
		return err
	}
	spec := TaskSpec{
		Task: pipeline.Task{Stage: env.Stage, Version: env.Version, Code: s.Code, Seed: env.Seed, Inputs: inputs, Refs: refs,
			Metadata: env.Metadata, Memo: pipeline.MemoSpec{Stage: env.Stage, Base: env.Memo.Spec().Base}, Payload: e.Payload},
		Extern: e.ext,
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	task, err := e.Remote.PutBlob(ctx, b)
	if err != nil {
		return err
	}
	reply, err := e.Updater.Stage(ctx, Request{Stage: env.Stage, Version: env.Version, Task: task, Exclusive: s.Exclusive, Shards: s.Shards})
	if err != nil {
		return err
	}
	b, err = e.Remote.GetBlob(ctx, reply.Result, maxRecord)
	if err != nil {
		return fmt.Errorf("result of %s@%s: %w", env.Stage, env.Version, err)
	}
	res, err := decode[Result](b, "result of "+env.Stage+"@"+env.Version)
	if err != nil {
		return err
	}
	if res.Stage != env.Stage || res.Version != env.Version {
		return fmt.Errorf("result %.16s describes %s@%s, not %s@%s", reply.Result, res.Stage, res.Version, env.Stage, env.Version)
	}
	if err := e.Remote.DownloadFiles(ctx, env.Dir, res.Files); err != nil {
		return fmt.Errorf("output of %s@%s from %s: %w", env.Stage, env.Version, res.Worker, err)
	}
	notes(env.Notes, res.Notes)
	env.Memo.Use(res.Memo...)
	if e.Where != nil {
		e.Where(env.Stage, fmt.Sprintf("%s@%s %s", env.Stage, env.Version, res.where()))
	}
	// The worker's memo entries come here too, so that a later local run
	// reuses them.
	return e.Remote.PullMemo(ctx, e.Store, env.Stage, res.Memo)
}

// Finish implements pipeline.Finisher: it ends the run's workflow if one
// was started, done after a finished run, cancelled (stopping its stages
// on the workers) after an interrupted or failed one.
func (e *Dispatcher) Finish(ctx context.Context, cancelled bool) error {
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	if !started {
		return nil
	}
	return e.Updater.Finish(ctx, cancelled)
}

// Client is the Updater over a Temporal client.
type Client struct {
	Client    client.Client
	TaskQueue string
	// WorkflowID names the run's workflow; unique per run.
	WorkflowID string
	// Log, if set, is told of each retry of the run's activities while a
	// stage waits for them, in one line: what the activity runs, its
	// attempt and its last failure (watchRetries).
	Log func(format string, args ...any)
	// WatchEvery is how often Temporal is asked about retries; zero means
	// RetryWatchEvery.
	WatchEvery time.Duration

	runID   string
	retries retries
}

var _ Updater = (*Client)(nil)

// Start implements Updater.
func (c *Client) Start(ctx context.Context) error {
	run, err := c.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: c.WorkflowID, TaskQueue: c.TaskQueue}, WorkflowName)
	if err != nil {
		return fmt.Errorf("start workflow %s on task queue %s: %w", c.WorkflowID, c.TaskQueue, err)
	}
	c.runID = run.GetRunID()
	return nil
}

// Stage implements Updater.
func (c *Client) Stage(ctx context.Context, req Request) (Reply, error) {
	defer c.watchRetries(ctx)()
	h, err := c.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: c.WorkflowID, RunID: c.runID, UpdateName: UpdateStage,
		UpdateID: req.Stage + "@" + req.Version, Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return Reply{}, fmt.Errorf("send %s@%s to workflow %s: %w", req.Stage, req.Version, c.WorkflowID, err)
	}
	var reply Reply
	if err := h.Get(ctx, &reply); err != nil {
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		return Reply{}, fmt.Errorf("%s@%s in workflow %s: %w", req.Stage, req.Version, c.WorkflowID, err)
	}
	return reply, nil
}

// Finish implements Updater.
func (c *Client) Finish(ctx context.Context, cancelled bool) error {
	if c.runID == "" {
		return nil
	}
	if !cancelled {
		return c.Client.SignalWorkflow(ctx, c.WorkflowID, c.runID, SignalDone, nil)
	}
	if err := c.Client.CancelWorkflow(ctx, c.WorkflowID, c.runID); err != nil {
		return fmt.Errorf("cancel workflow %s: %w", c.WorkflowID, err)
	}
	// The cancellation closes the workflow once a worker runs its next
	// workflow task; with no worker left to do so it would stay
	// "Running", so after a grace it is terminated.
	wctx, cancel := context.WithTimeout(ctx, cancelGrace)
	defer cancel()
	err := c.Client.GetWorkflow(wctx, c.WorkflowID, c.runID).Get(wctx, nil)
	if err == nil || wctx.Err() == nil {
		return nil // closed: cancelled, or finished meanwhile
	}
	if err := c.Client.TerminateWorkflow(ctx, c.WorkflowID, c.runID, "the run failed or was interrupted, and no worker closed its cancelled workflow"); err != nil {
		return fmt.Errorf("terminate workflow %s: %w", c.WorkflowID, err)
	}
	return nil
}

// cancelGrace is how long a cancelled run's workflow has to close before
// the coordinator terminates it.
const cancelGrace = 10 * time.Second

// WorkflowID returns a new run's workflow ID: this host and process, and
// the time, so that two runs never share one.
func WorkflowID(now func() int64) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("mlsched-run-%s-%d-%d", host, os.Getpid(), now())
}

// TaskQueueDescriber is the part of a Temporal client WaitForWorker uses.
type TaskQueueDescriber interface {
	DescribeTaskQueue(ctx context.Context, taskQueue string, taskQueueType enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error)
}

// workerPoll is how often WaitForWorker asks Temporal again, and quietFor
// how long it waits before it says that no worker polls: a worker started
// a moment before the run takes about a second to show as a poller.
const workerPoll, quietFor = time.Second, 2 * time.Second

// WaitForWorker returns once some worker polls queue for activities,
// saying within seconds, through say, when none does yet; it fails after
// wait without one. Since each build polls its own queue (BuildQueue), a run
// with no worker built from its code learns so here rather than waiting
// forever for tasks nobody takes.
func WaitForWorker(ctx context.Context, c TaskQueueDescriber, queue string, wait time.Duration, say func(string)) error {
	deadline := time.Now().Add(wait)
	said := false
	for {
		resp, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return fmt.Errorf("describe task queue %s: %w", queue, err)
		}
		if len(resp.GetPollers()) > 0 {
			return nil
		}
		if !said && time.Since(deadline.Add(-wait)) >= quietFor {
			say(fmt.Sprintf("no worker built from this code polls task queue %s yet: waiting up to %s (start 'mlsched worker' built from this commit; workers built from other code poll other queues)", queue, wait))
			said = true
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("no worker built from this code polled task queue %s within %s: start 'mlsched worker', built from the same commit as this mlsched, where Temporal and the remote are reachable (workers built from other code poll other queues)", queue, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(workerPoll):
		}
	}
}
