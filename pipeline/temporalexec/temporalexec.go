// Package temporalexec runs a pipeline's stages on Temporal workers: a
// pipeline.Executor for the machine that runs `mlsched run` (the
// coordinator; Dispatcher), and the workflow and activity that `mlsched
// worker` machines serve (Worker). The runner stays the brain: it computes keys, decides
// what is stale and walks the DAG; this package only moves a stage's
// work to another machine and its output back. Snakemake's executor
// plugins draw the same line.
//
// # One workflow per run
//
// The coordinator starts one workflow per `mlsched run` (RunWorkflow) and
// sends it an update (UpdateStage) for each stage the runner decides to
// run. The update's handler runs the stage as an activity (ActivityStage)
// on whichever worker takes it, and answers with the activity's reply; a
// signal (SignalDone) ends the workflow once the run is over. Each stage
// costs the workflow's history a handful of events, so a run's history
// stays far below Temporal's limits.
//
// # Keys, not data
//
// Temporal caps payloads at 2 MB, and a workflow's history is no place for
// artifacts. Everything travels through the shared remote store (package
// remote): the coordinator pushes the stage's input versions and stores
// the stage's task (pipeline.Task, with every directory left for the
// worker to fill, and the files outside the store the config names) as a
// blob; the update and the activity carry only the stage, its version and
// that blob's digest. The worker pulls the inputs into its own cache store
// (verifying every file's digest), runs the stage's code in a worker
// process (pipeline.Process), uploads the output files and memo entries,
// and stores a Result naming them; its reply is the Result's digest. The
// coordinator downloads the files into the runner's staging directory,
// checking each digest, and the runner commits them as it commits a local
// run: the version is byte-identical to one computed here.
//
// # Faults
//
// The activity heartbeats while the stage runs; a worker killed mid-stage
// stops heartbeating, and Temporal retries the activity elsewhere after
// HeartbeatTimeout. Writes are idempotent: the first attempt to finish
// records its result under the run and the stage's version (Remote.Create
// never overwrites), and a retry that finds that record returns it
// without running. A stage that fails in its own code (a bad input, a bug)
// fails for good (ErrStageFailed is not retried): running it again
// elsewhere would fail the same way.
package temporalexec

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/mlsched/mlsched/pipeline"
)

// Names registered with Temporal.
const (
	// WorkflowName is the workflow of one `mlsched run`.
	WorkflowName = "mlsched.Run"
	// UpdateStage asks a run's workflow to run one stage.
	UpdateStage = "stage"
	// SignalDone tells a run's workflow that the run is over.
	SignalDone = "done"
	// activityPrefix starts the name of each stage's activity (see
	// ActivityName).
	activityPrefix = "mlsched.stage."
	// StageWorkflowName is the child workflow of a stage whose work splits
	// into parts: each part an activity, then the stage's.
	StageWorkflowName = "mlsched.ShardedStage"
	// ErrStageFailed is the type of the error of a stage whose own code
	// failed: Temporal does not retry it.
	ErrStageFailed = "StageFailed"
	// ErrOtherCode is the type of the error of a worker asked to run a
	// stage whose key names other code than the worker's: not retried.
	ErrOtherCode = "OtherCode"
	// DefaultTaskQueue is the task queue workers poll unless told another.
	DefaultTaskQueue = "mlsched"
)

// ActivityName is the activity that runs stage: one name per stage, so
// that Temporal's UI and CLI say which stage each activity runs.
func ActivityName(stage string) string { return activityPrefix + stage }

// activityID names one stage's (or one part's) activity within its
// workflow: the stage, its version and the part.
func activityID(req Request) string {
	id := req.Stage + "@" + req.Version
	if req.Shard != nil {
		id += fmt.Sprintf("/part-%d-of-%d", req.Shard.Index+1, req.Shard.Count)
	}
	return id
}

// BuildQueue is the task queue that coordinators and workers built from
// the same code use, given the queue's base name and the build's stage
// code versions: base, a dot and a fingerprint of them. A worker built
// from other code polls another queue, so it never sees a task whose key
// names code it would not run; a coordinator with no worker of its build
// finds its queue without pollers (WaitForWorker).
func BuildQueue(base string, codes map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(codes)) {
		fmt.Fprintf(h, "%s %s\n", name, codes[name])
	}
	return fmt.Sprintf("%s.%x", base, h.Sum(nil)[:6])
}

// Timeouts of a stage's activity.
const (
	// HeartbeatTimeout is how long a worker may be silent before its
	// stage is retried elsewhere: the cost, in time, of a killed worker.
	HeartbeatTimeout = 20 * time.Second
	// heartbeatEvery is how often a running stage heartbeats.
	heartbeatEvery = 2 * time.Second
	// stageTimeout bounds one attempt at a stage.
	stageTimeout = 7 * 24 * time.Hour
	// maxAttempts bounds the attempts at a stage whose worker keeps dying.
	maxAttempts = 10
)

// maxRecord bounds a task or result read from the remote.
const maxRecord = 64 << 20

// Request asks for one stage of a run: keys and digests only.
type Request struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Task is the sha256 of the stage's TaskSpec, a blob in the remote.
	Task string `json:"task"`
	// Exclusive says the stage must run alone on its worker (it
	// measures the machine).
	Exclusive bool `json:"exclusive,omitempty"`
	// Shards, when over 1, is how many parts the stage's work splits into
	// (pipeline.Stage.Shards): the parts run first, each an activity
	// anywhere, then the stage.
	Shards int `json:"shards,omitempty"`
	// Shard, when set, asks for that part alone.
	Shard *pipeline.Shard `json:"shard,omitempty"`
	// After names the Results of the parts that ran before the stage:
	// their memo entries are brought to the worker before the stage runs.
	After []string `json:"after,omitempty"`
}

// Reply names what a stage's activity produced.
type Reply struct {
	// Result is the sha256 of the stage's Result, a blob in the remote.
	Result string `json:"result"`
}

// TaskSpec is a stage's task as stored in the remote.
type TaskSpec struct {
	// Task is the stage's pipeline.Task with every directory empty (Dir,
	// each input's and reference's Dir, the memo's Root and Tmp): the
	// worker fills them with its own.
	Task pipeline.Task `json:"task"`
	// Extern lists the files outside the store the config names (an
	// imported profile, say), by their path relative to the config's
	// directory, with their sha256: the worker puts each at the same
	// relative path below a directory it gives the stage as the config's.
	Extern []Extern `json:"extern,omitempty"`
}

// Extern is a file outside the store that a stage reads.
type Extern struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Result is what a stage's activity stored: its output files (by digest)
// and what the stage reported.
type Result struct {
	Stage   string            `json:"stage"`
	Version string            `json:"version"`
	Files   []pipeline.File   `json:"files"`
	Notes   map[string]string `json:"notes,omitempty"`
	Memo    []string          `json:"memo,omitempty"`
	// Worker names the worker that ran it, for messages, and PartsOn,
	// for a stage in parts, how many of them each worker ran.
	Worker  string         `json:"worker"`
	PartsOn map[string]int `json:"parts_on,omitempty"`
}

// where says where a result's stage ran: its worker and, for a stage in
// parts, how many parts each worker ran.
func (r *Result) where() string {
	s := "ran on " + r.Worker
	if len(r.PartsOn) == 0 {
		return s
	}
	var on []string
	n := 0
	for _, w := range slices.Sorted(maps.Keys(r.PartsOn)) {
		on = append(on, fmt.Sprintf("%s (%d)", w, r.PartsOn[w]))
		n += r.PartsOn[w]
	}
	return fmt.Sprintf("%s, its %d parts on %s", s, n, strings.Join(on, ", "))
}

func decode[T any](b []byte, what string) (*T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &v, nil
}

// RunWorkflow is the workflow of one `mlsched run`: it runs each stage an
// UpdateStage asks for as an activity, and ends when SignalDone arrives
// and every stage it was asked for has finished.
func RunWorkflow(ctx workflow.Context) error {
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateStage, runStage, workflow.UpdateHandlerOptions{
		Validator: func(req Request) error {
			if req.Stage == "" || req.Version == "" || len(req.Task) != 64 {
				return fmt.Errorf("malformed stage request %+v", req)
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	// A cancelled run (the coordinator failed or was interrupted) ends
	// here, its pending activities cancelled with it, rather than
	// waiting for a signal that will never come.
	done := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalDone), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		done = true
	})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	if !done {
		return temporal.NewCanceledError()
	}
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// maxShards bounds the parts of one stage run as activities: each costs
// the stage's child workflow about six history events.
const maxShards = 1024

// runStage runs one stage: its activity, or, for a stage whose work splits
// into parts, a child workflow that runs the parts and then the stage, so
// that a large sweep's events stay out of the run's history.
func runStage(ctx workflow.Context, req Request) (Reply, error) {
	if req.Shards < 2 {
		return stageActivity(ctx, req)
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + req.Stage + "@" + req.Version,
	})
	var reply Reply
	err := workflow.ExecuteChildWorkflow(cctx, StageWorkflowName, req).Get(ctx, &reply)
	return reply, err
}

// StageWorkflow runs a stage whose work splits into parts: every part at
// once, each an activity on any worker, and then the stage on the parts'
// memo entries.
func StageWorkflow(ctx workflow.Context, req Request) (Reply, error) {
	n := min(req.Shards, maxShards)
	futures := make([]workflow.Future, n)
	for i := range n {
		part := req
		part.Shards, part.Shard = 0, &pipeline.Shard{Index: i, Count: n}
		futures[i] = activityFuture(ctx, part)
	}
	final := req
	final.Shards = 0
	for i, f := range futures {
		var r Reply
		if err := f.Get(ctx, &r); err != nil {
			return Reply{}, fmt.Errorf("part %d of %d: %w", i+1, n, err)
		}
		final.After = append(final.After, r.Result)
	}
	return stageActivity(ctx, final)
}

// stageActivity runs one stage's (or part's) activity and waits for it.
func stageActivity(ctx workflow.Context, req Request) (Reply, error) {
	var reply Reply
	err := activityFuture(ctx, req).Get(ctx, &reply)
	return reply, err
}

// activityFuture starts one stage's (or part's) activity, retried while
// its worker dies, not when its code fails.
func activityFuture(ctx workflow.Context, req Request) workflow.Future {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          activityID(req),
		StartToCloseTimeout: stageTimeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        maxAttempts,
			NonRetryableErrorTypes: []string{ErrStageFailed, ErrOtherCode},
		},
	})
	return workflow.ExecuteActivity(actx, ActivityName(req.Stage), req)
}
