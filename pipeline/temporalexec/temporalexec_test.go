package temporalexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote"
)

// updateResult collects an update's outcome in the test environment.
type updateResult struct {
	reply    Reply
	err      error
	rejected error
	done     bool
}

func (u *updateResult) Accept()          {}
func (u *updateResult) Reject(err error) { u.rejected, u.done = err, true }
func (u *updateResult) Complete(v any, err error) {
	u.done, u.err = true, err
	if r, ok := v.(Reply); ok {
		u.reply = r
	}
}

func newWorkflowEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterWorkflowWithOptions(StageWorkflow, workflow.RegisterOptions{Name: StageWorkflowName})
	for _, stage := range []string{"a", "b", "c"} {
		env.RegisterActivityWithOptions(func(ctx context.Context, req Request) (Reply, error) { return Reply{}, nil },
			activity.RegisterOptions{Name: ActivityName(stage)})
	}
	return env
}

var task64 = strings.Repeat("ab", 32)

// TestWorkflowRunsEachStageAndEndsWhenDone checks the workflow of a run:
// every stage update runs its activity and answers with its reply, a
// malformed one is rejected before anything runs, and the workflow ends
// on the done signal only after the stages it was given finished.
func TestWorkflowRunsEachStageAndEndsWhenDone(t *testing.T) {
	env := newWorkflowEnv(t)
	var calls atomic.Int32
	var idsMu sync.Mutex // the two activities run at once
	ids := map[string]string{}
	for _, stage := range []string{"a", "b"} {
		env.OnActivity(ActivityName(stage), moq, moq).Return(func(ctx context.Context, req Request) (Reply, error) {
			calls.Add(1)
			info := activity.GetInfo(ctx)
			idsMu.Lock()
			ids[info.ActivityType.Name] = info.ActivityID
			idsMu.Unlock()
			return Reply{Result: strings.Repeat("0", 63) + req.Stage[:1]}, nil
		})
	}
	results := map[string]*updateResult{"a": {}, "b": {}, "bad": {}}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateStage, "a", results["a"], Request{Stage: "a", Version: "v", Task: task64})
		env.UpdateWorkflow(UpdateStage, "b", results["b"], Request{Stage: "b", Version: "v", Task: task64})
		env.UpdateWorkflow(UpdateStage, "bad", results["bad"], Request{Stage: "c"})
	}, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalDone, nil) }, 2*time.Second)
	env.ExecuteWorkflow(WorkflowName)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow completed %v with %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	for _, s := range []string{"a", "b"} {
		r := results[s]
		if !r.done || r.err != nil || r.reply.Result != strings.Repeat("0", 63)+s {
			t.Errorf("stage %s: %+v", s, r)
		}
	}
	if results["bad"].rejected == nil {
		t.Errorf("a malformed request was not rejected: %+v", results["bad"])
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d activities ran, want 2", n)
	}
	// Temporal's UI and CLI show which stage and version each activity ran.
	if want := map[string]string{"mlsched.stage.a": "a@v", "mlsched.stage.b": "b@v"}; !maps.Equal(ids, want) {
		t.Errorf("activities (type: ID) %v, want %v", ids, want)
	}
}

// TestWorkflowEndsWhenCancelled checks that a run's workflow closes when
// the coordinator cancels it (a failed or interrupted run), rather than
// waiting for the done signal, which never comes.
func TestWorkflowEndsWhenCancelled(t *testing.T) {
	env := newWorkflowEnv(t)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(WorkflowName)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the cancelled workflow is still running")
	}
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Errorf("workflow error %v, want cancelled", err)
	}
}

// moq matches any argument of a mocked activity.
const moq = mock.Anything

// TestWorkflowRetriesDeadWorkersNotFailedStages checks the retry policy:
// an attempt lost with its worker is retried, a stage whose own code
// failed is not.
func TestWorkflowRetriesDeadWorkersNotFailedStages(t *testing.T) {
	cases := []struct {
		name      string
		fail      error
		wantCalls int32
		wantErr   bool
	}{
		{"worker died", errors.New("heartbeat timeout"), 3, false},
		{"stage failed", temporal.NewNonRetryableApplicationError("bad input", ErrStageFailed, nil), 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newWorkflowEnv(t)
			var calls atomic.Int32
			env.OnActivity(ActivityName("a"), moq, moq).Return(func(ctx context.Context, req Request) (Reply, error) {
				if calls.Add(1) < 3 {
					return Reply{}, c.fail
				}
				return Reply{Result: task64}, nil
			})
			r := &updateResult{}
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(UpdateStage, "a", r, Request{Stage: "a", Version: "v", Task: task64})
			}, time.Second)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalDone, nil) }, 2*time.Second)
			env.ExecuteWorkflow(WorkflowName)
			if env.GetWorkflowError() != nil {
				t.Fatal(env.GetWorkflowError())
			}
			if got := calls.Load(); got != c.wantCalls {
				t.Errorf("%d attempts, want %d", got, c.wantCalls)
			}
			if (r.err != nil) != c.wantErr {
				t.Errorf("update error %v, want error %v", r.err, c.wantErr)
			}
			if c.wantErr && !strings.Contains(r.err.Error(), "bad input") {
				t.Errorf("update error %v does not carry the stage's", r.err)
			}
		})
	}
}

// stageCode is the two stages' code, run by a worker in this process.
type stageCode struct {
	runs   map[string]*atomic.Int32
	fail   string // a stage whose code fails
	shards int    // make's parts
	built  atomic.Int32
}

func (c *stageCode) run(ctx context.Context, env *pipeline.Env) error {
	c.runs[env.Stage].Add(1)
	if env.Stage == c.fail {
		return errors.New("the stage's own bug")
	}
	switch env.Stage {
	case "make":
		// Six units, each in the memo; a part computes its own alone.
		var b []byte
		for i := range 6 {
			if !env.Shard.Mine(i) {
				continue
			}
			unit, err := env.Memo.Get("unit", i, nil, func(dir string) error {
				c.built.Add(1)
				return os.WriteFile(filepath.Join(dir, "unit.txt"), []byte(fmt.Sprint("unit ", i, ";")), 0o644)
			})
			if err != nil {
				return err
			}
			u, err := os.ReadFile(filepath.Join(unit, "unit.txt"))
			if err != nil {
				return err
			}
			b = append(b, u...)
		}
		if err := os.MkdirAll(filepath.Join(env.Dir, "sub"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "sub", "a.txt"), append(b, []byte(strings.Repeat("x", 5000))...), 0o644)
	default:
		b, err := os.ReadFile(filepath.Join(env.Inputs["make"].Dir, "sub", "a.txt"))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "b.txt"), append(b, '!'), 0o644)
	}
}

func (c *stageCode) pipeline(t *testing.T, st pipeline.Store, exec pipeline.Executor) *pipeline.Pipeline {
	reg := pipeline.NewRegistry()
	for _, s := range []pipeline.Stage{
		{Name: "make", Code: "v1", Config: map[string]int{"n": 1}, Run: c.run, Shards: c.shards},
		{Name: "use", Deps: []string{"make"}, Code: "v1", Run: c.run},
	} {
		if err := reg.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	g, err := reg.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline.Pipeline{Graph: g, Store: st, LockPath: filepath.Join(t.TempDir(), "pipeline.lock"), Tool: "test", Executor: exec}
}

// inline is an Updater that runs each stage through the run workflow's
// own stage logic (runStage: the activity, or the parts' child workflow)
// in Temporal's workflow test environment, with the Worker's real activity;
// crash makes each stage's first attempt fail after its work (a worker
// that died before answering), so that Temporal retries it.
type inline struct {
	t     *testing.T
	wk    *Worker
	crash bool
}

func (u *inline) Start(ctx context.Context) error                  { return nil }
func (u *inline) Finish(ctx context.Context, cancelled bool) error { return nil }

func (u *inline) Stage(ctx context.Context, req Request) (Reply, error) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(runStage, workflow.RegisterOptions{Name: "test.stage"})
	env.RegisterWorkflowWithOptions(StageWorkflow, workflow.RegisterOptions{Name: StageWorkflowName})
	var crashedMu sync.Mutex // a stage's parts run at once
	crashed := map[string]bool{}
	env.RegisterActivityWithOptions(func(ctx context.Context, req Request) (Reply, error) {
		r, err := u.wk.RunStage(ctx, req)
		name := recordName("", req)
		crashedMu.Lock()
		defer crashedMu.Unlock()
		if err == nil && u.crash && !crashed[name] {
			crashed[name] = true
			return Reply{}, errors.New("worker lost") // its reply never arrives
		}
		return r, err
	}, activity.RegisterOptions{Name: ActivityName(req.Stage)})
	env.ExecuteWorkflow("test.stage", req)
	if err := env.GetWorkflowError(); err != nil {
		return Reply{}, err
	}
	var r Reply
	err := env.GetWorkflowResult(&r)
	return r, err
}

func newWorker(t *testing.T, rem *remote.Remote, code *stageCode) *Worker {
	cache, err := pipeline.OpenStore(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	return &Worker{Remote: rem, Cache: cache, Name: "test-worker", Codes: map[string]string{"make": "v1", "use": "v1"},
		Exec:    func(json.RawMessage) pipeline.Executor { return runIn{code} },
		Prepare: func(p json.RawMessage, _ string) (json.RawMessage, error) { return p, nil }}
}

// runIn runs a stage's code in this process.
type runIn struct{ code *stageCode }

func (r runIn) Execute(ctx context.Context, s *pipeline.Stage, env *pipeline.Env) error {
	return r.code.run(ctx, env)
}

func openStore(t *testing.T) *pipeline.LocalStore {
	st, err := pipeline.OpenStore(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDispatcherMatchesALocalRun runs the pipeline through the dispatcher,
// with a worker that pulls inputs and pushes outputs through a remote,
// and checks that every version is the one a local run makes, byte for
// byte, and that the coordinator ran no stage code.
func TestDispatcherMatchesALocalRun(t *testing.T) {
	cases := []struct {
		name   string
		crash  bool
		shards int
	}{
		{"clean", false, 0},
		{"a worker dies after its work", true, 0},
		{"make in 3 parts", false, 3},
		{"make in 3 parts, a worker dies after each", true, 3},
	}
	for _, c := range cases {
		crash := c.crash
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			local := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}}
			want := openStore(t)
			if _, err := local.pipeline(t, want, nil).Run(ctx, pipeline.RunOptions{Jobs: 1}); err != nil {
				t.Fatal(err)
			}

			rem, err := remote.Open(ctx, "mem://")
			if err != nil {
				t.Fatal(err)
			}
			remoteCode := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}, shards: c.shards}
			coordinator := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}, shards: c.shards}
			st := openStore(t)
			wk := newWorker(t, rem, remoteCode)
			var (
				mu  sync.Mutex
				log []string
			)
			wk.Log = func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				log = append(log, fmt.Sprintf(format, args...))
			}
			up := &inline{t: t, wk: wk, crash: crash}
			where := map[string]string{}
			var whereMu sync.Mutex
			exec := &Dispatcher{Updater: up, Remote: rem, Store: st, Payload: json.RawMessage(`{}`),
				Where: func(stage, line string) { whereMu.Lock(); where[stage] = line; whereMu.Unlock() }}
			p := coordinator.pipeline(t, st, exec)
			p.Remote = rem
			res, err := p.Run(ctx, pipeline.RunOptions{Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Outcome != pipeline.Ran {
					t.Errorf("%s: %s, want ran", r.Stage, r.Outcome)
				}
				wantWhere := r.Stage + "@" + r.Version + " ran on test-worker"
				if r.Stage == "make" && c.shards > 1 {
					wantWhere += fmt.Sprintf(", its %d parts on test-worker (%d)", c.shards, c.shards)
				}
				if where[r.Stage] != wantWhere {
					t.Errorf("%s: told %q, want %q", r.Stage, where[r.Stage], wantWhere)
				}
				wm, err := want.Versions(r.Stage)
				if err != nil || len(wm) != 1 {
					t.Fatal(err)
				}
				got, err := st.Manifest(r.Stage, r.Version)
				if err != nil {
					t.Fatal(err)
				}
				if got.Version != wm[0].Version || got.Output != wm[0].Output || len(got.Memo) != len(wm[0].Memo) {
					t.Errorf("%s: version %s output %s memo %v; a local run made %s %s %v", r.Stage, got.Version, got.Output, got.Memo, wm[0].Version, wm[0].Output, wm[0].Memo)
				}
			}
			for stage, n := range coordinator.runs {
				if n.Load() != 0 {
					t.Errorf("the coordinator ran %s's code", stage)
				}
			}
			// The first attempt's result stands: a retry after a lost reply
			// runs nothing again. A stage in parts runs each part, then
			// itself, and each unit is built once, by its part.
			for stage, n := range remoteCode.runs {
				want := int32(1)
				if stage == "make" && c.shards > 1 {
					want += int32(c.shards)
				}
				if n.Load() != want {
					t.Errorf("the worker ran %s %d times, want %d", stage, n.Load(), want)
				}
			}
			if n := remoteCode.built.Load(); n != 6 {
				t.Errorf("the worker built %d units, want each of the 6 once", n)
			}
			// The worker logged each activity: what it ran, and a retry
			// that found the first attempt's result.
			ran := regexp.MustCompile(`^(make|use)@[0-9a-f]{16}( part [1-3] of 3)?: ran in [0-9.]+s \(attempt 1, workflow `)
			again := regexp.MustCompile(`^(make|use)@[0-9a-f]{16}( part [1-3] of 3)?: answered with an earlier attempt's result in [0-9.]+s \(attempt 2, workflow `)
			var nran, nagain int32
			for _, l := range log {
				switch {
				case ran.MatchString(l):
					nran++
				case again.MatchString(l):
					nagain++
				default:
					t.Errorf("worker log line %q", l)
				}
			}
			runs := remoteCode.runs["make"].Load() + remoteCode.runs["use"].Load()
			if retried := map[bool]int32{true: runs}[crash]; nran != runs || nagain != retried {
				t.Errorf("worker log: %d ran, %d answered again; want %d and %d\n%s", nran, nagain, runs, retried, strings.Join(log, "\n"))
			}
			if probs, _, err := st.Verify(ctx); err != nil || len(probs) > 0 {
				t.Errorf("verify: %v %v", probs, err)
			}
			// The worker's memo entry came back with the version.
			m, _ := st.Versions("make")
			if _, _, _, err := st.Memo("make", pipeline.KeyInputs{}).Entry(m[0].Memo[0]); err != nil {
				t.Errorf("the worker's memo entry is not here: %v", err)
			}
		})
	}
}

// TestWorkerGetsTheFilesOutsideTheStore checks that a file outside the
// store that the config names reaches the stage on the worker, wherever
// it is on the coordinator (here by an absolute path in a folder of its
// own), at the relative path the worker's config names it by; and that a
// task naming a path outside the directory the worker gives as the
// config's is refused.
func TestWorkerGetsTheFilesOutsideTheStore(t *testing.T) {
	ctx := context.Background()
	rem, err := remote.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	far := filepath.Join(t.TempDir(), "far", "away", "samples.csv")
	if err := os.MkdirAll(filepath.Dir(far), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(far, []byte("model,batch\nmlp,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const shipped = "imports/profile.import/samples.csv"
	code := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}}
	wk := newWorker(t, rem, code)
	var got []string
	wk.Prepare = func(p json.RawMessage, configDir string) (json.RawMessage, error) {
		b, err := os.ReadFile(filepath.Join(configDir, shipped))
		got = append(got, string(b))
		return p, err
	}
	st := openStore(t)
	exec := &Dispatcher{Updater: &inline{t: t, wk: wk}, Remote: rem, Store: st, Payload: json.RawMessage(`{}`),
		Extern: map[string]string{shipped: far}}
	if _, err := code.pipeline(t, st, exec).Run(ctx, pipeline.RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "model,batch\nmlp,1\n" || got[1] != got[0] {
		t.Errorf("the stages found %q at %s, want the file's bytes for each", got, shipped)
	}

	b, err := json.Marshal(TaskSpec{Task: pipeline.Task{Stage: "make", Version: "0123456789abcdef", Code: "v1"},
		Extern: []Extern{{Path: far, SHA256: strings.Repeat("0", 64), Size: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := rem.PutBlob(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&inline{t: t, wk: wk}).Stage(ctx, Request{Stage: "make", Version: "0123456789abcdef", Task: task})
	if err == nil || !strings.Contains(err.Error(), "is not a relative path inside the config's directory") {
		t.Errorf("a task naming %s: %v, want it refused", far, err)
	}
}

// TestStageFailureIsNotRetried checks that a stage whose code fails
// fails the run with its error, marked as not to be retried, and that
// nothing of it is stored.
func TestStageFailureIsNotRetried(t *testing.T) {
	ctx := context.Background()
	rem, err := remote.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	code := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}, fail: "use"}
	st := openStore(t)
	wk := newWorker(t, rem, code)
	var log []string
	wk.Log = func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	exec := &Dispatcher{Updater: &inline{t: t, wk: wk}, Remote: rem, Store: st, Payload: json.RawMessage(`{}`)}
	_, err = code.pipeline(t, st, exec).Run(ctx, pipeline.RunOptions{Jobs: 1})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrStageFailed || !app.NonRetryable() || !strings.Contains(err.Error(), "the stage's own bug") {
		t.Fatalf("run: %v, want the stage's error as a non-retryable %s", err, ErrStageFailed)
	}
	if vs, _ := st.Versions("use"); len(vs) != 0 {
		t.Errorf("a failed stage stored %d versions", len(vs))
	}
	// The worker logged it, its error last.
	failed := regexp.MustCompile(`^use@[0-9a-f]{16}: failed for good in [0-9.]+s \(attempt 1, workflow [^)]*\): use@[0-9a-f]{16} on test-worker: the stage's own bug$`)
	if len(log) != 2 || !failed.MatchString(log[1]) {
		t.Errorf("worker log:\n%s\nwant make's line, then use's failure", strings.Join(log, "\n"))
	}
}

// TestWorkerRefusesADamagedTask checks that a task whose blob does not
// match its digest is refused, never run.
func TestWorkerRefusesADamagedTask(t *testing.T) {
	ctx := context.Background()
	rem, err := remote.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	code := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}}
	d, err := rem.PutBlob(ctx, []byte(`{"task":{"stage":"make","version":"0123456789abcdef"}}`))
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)
	up := &inline{t: t, wk: newWorker(t, rem, code)}
	for _, c := range []struct{ task, want string }{
		{wrong, "missing"},
		{d, "describes make@0123456789abcdef, not use@0123456789abcdef"},
	} {
		stage := "make"
		if c.task == d {
			stage = "use"
		}
		_, err := up.Stage(ctx, Request{Stage: stage, Version: "0123456789abcdef", Task: c.task})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("task %.8s: %v, want %q", c.task, err, c.want)
		}
	}
	if code.runs["make"].Load()+code.runs["use"].Load() != 0 {
		t.Error("a stage ran from a bad task")
	}
}

// TestRecordNamesNeverNest checks that no record's name is a folder of
// another's: an S3 server over a file system (versitygw) refused the
// stage's record after its parts' (409 ExistingObjectIsDirectory).
func TestRecordNamesNeverNest(t *testing.T) {
	req := Request{Stage: "schedule", Version: "96f49acac03cfc37"}
	names := []string{recordName("run-1", req), recordName("run-1/schedule@96f49acac03cfc37", req)}
	for i := range 3 {
		part := req
		part.Shard = &pipeline.Shard{Index: i, Count: 3}
		names = append(names, recordName("run-1", part), recordName("run-1/schedule@96f49acac03cfc37", part))
	}
	for _, a := range names {
		for _, b := range names {
			if a != b && strings.HasPrefix(b, a+"/") {
				t.Errorf("record %s is a folder of record %s", a, b)
			}
		}
	}
}

// unreachable is a fake shared remote whose uploads fail; it counts them.
// Nothing else of it may be called.
type unreachable struct {
	DispatcherRemote
	uploads atomic.Int32
}

func (u *unreachable) UploadFiles(context.Context, map[string]string) (int, error) {
	u.uploads.Add(1)
	return 0, errors.New("remote unreachable")
}

// countingUpdater is an Updater that only counts what it is asked.
type countingUpdater struct{ starts, stages, finishes atomic.Int32 }

func (u *countingUpdater) Start(context.Context) error { u.starts.Add(1); return nil }
func (u *countingUpdater) Stage(context.Context, Request) (Reply, error) {
	u.stages.Add(1)
	return Reply{}, errors.New("no workflow")
}
func (u *countingUpdater) Finish(context.Context, bool) error { u.finishes.Add(1); return nil }

// TestDispatcherStartsNoWorkflowWithoutTheRemote checks, with a fake remote
// standing in for the shared one, that a run whose files outside the store
// cannot reach the remote fails every stage with the remote's error
// before any workflow starts, trying the upload once, and that Finish then
// has no workflow to end.
func TestDispatcherStartsNoWorkflowWithoutTheRemote(t *testing.T) {
	ctx := context.Background()
	extern := filepath.Join(t.TempDir(), "profile.parquet")
	if err := os.WriteFile(extern, []byte("rows"), 0o644); err != nil {
		t.Fatal(err)
	}
	rem, up := &unreachable{}, &countingUpdater{}
	exec := &Dispatcher{Updater: up, Remote: rem, Store: openStore(t), Extern: map[string]string{"profile.parquet": extern}}
	for _, stage := range []string{"make", "use"} {
		env := &pipeline.Env{Stage: stage, Version: "0123456789abcdef", Dir: t.TempDir(), Notes: map[string]string{}}
		if err := exec.Execute(ctx, &pipeline.Stage{Name: stage}, env); err == nil || !strings.Contains(err.Error(), "remote unreachable") {
			t.Errorf("Execute(%s) = %v, want the remote's error", stage, err)
		}
	}
	if err := exec.Finish(ctx, true); err != nil {
		t.Errorf("Finish = %v, want nil", err)
	}
	if n := rem.uploads.Load(); n != 1 {
		t.Errorf("%d uploads, want 1", n)
	}
	if s, st, f := up.starts.Load(), up.stages.Load(), up.finishes.Load(); s+st+f != 0 {
		t.Errorf("the updater was asked to start %d, run %d stages and finish %d times; want nothing", s, st, f)
	}
}

// TestWorkerRefusesOtherCode checks that a worker built from other code
// than a task's key names refuses it, for good and naming both code
// versions, before it pulls or runs anything; and that nothing is stored.
func TestWorkerRefusesOtherCode(t *testing.T) {
	ctx := context.Background()
	rem, err := remote.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	code := &stageCode{runs: map[string]*atomic.Int32{"make": {}, "use": {}}}
	wk := newWorker(t, rem, code)
	wk.Codes["make"] = "v2"
	st := openStore(t)
	exec := &Dispatcher{Updater: &inline{t: t, wk: wk}, Remote: rem, Store: st, Payload: json.RawMessage(`{}`)}
	_, err = code.pipeline(t, st, exec).Run(ctx, pipeline.RunOptions{Jobs: 1})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrOtherCode || !app.NonRetryable() {
		t.Fatalf("run: %v, want a non-retryable %s", err, ErrOtherCode)
	}
	for _, want := range []string{"needs make's code version v1", "mlsched worker test-worker was built from other code (make's code version v2)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("run: %v\nwant it to say %q", err, want)
		}
	}
	if n := code.runs["make"].Load(); n != 0 {
		t.Errorf("the worker ran make %d times", n)
	}
	if vs, _ := st.Versions("make"); len(vs) != 0 {
		t.Errorf("a refused stage stored %d versions", len(vs))
	}
}

// TestBuildQueue checks that builds share a task queue exactly when every
// stage's code version is the same.
func TestBuildQueue(t *testing.T) {
	codes := map[string]string{"generate": "aa", "train": "bb"}
	q := BuildQueue("mlsched", codes)
	if !strings.HasPrefix(q, "mlsched.") || len(q) != len("mlsched.")+12 {
		t.Errorf("BuildQueue = %q, want mlsched. and 12 hex digits", q)
	}
	for _, c := range []struct {
		name  string
		codes map[string]string
		same  bool
	}{
		{"same codes", map[string]string{"train": "bb", "generate": "aa"}, true},
		{"one stage changed", map[string]string{"generate": "ab", "train": "bb"}, false},
		{"a stage more", map[string]string{"generate": "aa", "train": "bb", "evaluate": "cc"}, false},
		{"names and codes shifted", map[string]string{"generate": "a", "train": "abb"}, false},
	} {
		if got := BuildQueue("mlsched", c.codes); (got == q) != c.same {
			t.Errorf("%s: queue %s, first %s: same %v, want %v", c.name, got, q, got == q, c.same)
		}
	}
	if BuildQueue("team-a", codes) == q {
		t.Error("another base name gave the same queue")
	}
}

// pollers is a TaskQueueDescriber whose queue gains a poller on its
// after-th description (never when after is 0).
type pollers struct {
	after, calls int
	queue        string
}

func (p *pollers) DescribeTaskQueue(_ context.Context, queue string, typ enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	p.calls++
	p.queue = queue
	if typ != enumspb.TASK_QUEUE_TYPE_ACTIVITY {
		return nil, fmt.Errorf("asked for %v", typ)
	}
	resp := &workflowservice.DescribeTaskQueueResponse{}
	if p.after > 0 && p.calls >= p.after {
		resp.Pollers = []*taskqueuepb.PollerInfo{{Identity: "mlsched-worker@test"}}
	}
	return resp, nil
}

// TestWaitForWorker checks that a run whose build has a worker goes on
// without a word, that one without says so at once and goes on when one
// comes, and that one where none comes fails after the wait, naming the
// queue.
func TestWaitForWorker(t *testing.T) {
	for _, c := range []struct {
		name    string
		after   int
		wait    time.Duration
		said    int
		wantErr string
	}{
		{"a worker polls", 1, time.Minute, 0, ""},
		{"a worker comes at once", 2, time.Minute, 0, ""},
		{"a worker comes later", 4, time.Minute, 1, ""},
		{"none comes", 0, 0, 0, "no worker built from this code polled task queue q.1 within 0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &pollers{after: c.after}
			var said []string
			err := WaitForWorker(context.Background(), p, "q.1", c.wait, func(s string) { said = append(said, s) })
			if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("WaitForWorker = %v, want %q", err, c.wantErr)
			}
			if len(said) != c.said || c.said > 0 && !strings.Contains(said[0], "no worker built from this code polls task queue q.1 yet") {
				t.Errorf("said %q, want %d line(s)", said, c.said)
			}
			if p.queue != "q.1" {
				t.Errorf("described queue %q", p.queue)
			}
		})
	}
}
