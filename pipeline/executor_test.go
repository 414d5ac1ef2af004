package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// workerEnv, set, makes this test binary a worker (TestMain-free: the
// test named by -test.run serves one task and exits).
const workerEnv = "MLSCHED_TEST_WORKER"

// workerCode is the stages' code a test worker runs, by stage name: what
// it writes depends on the payload, its inputs, the memo and the seed, so
// that a worker run can be compared with an inline one.
func workerCode(t *Task) (RunFunc, error) {
	var payload struct{ Greeting string }
	if err := json.Unmarshal(t.Payload, &payload); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	switch t.Stage {
	case "a", "b":
		return func(ctx context.Context, env *Env) error {
			var in []string
			for _, name := range []string{"a"} {
				if up, err := env.Input(name); err == nil {
					b, err := os.ReadFile(up.Path("out.txt"))
					if err != nil {
						return err
					}
					in = append(in, string(b))
				}
			}
			dir, err := env.Memo.Get("part", nil, [][2]string{{"n", "1"}}, func(dir string) error {
				return os.WriteFile(filepath.Join(dir, "part.txt"), []byte("memoized"), 0o644)
			})
			if err != nil {
				return err
			}
			part, err := os.ReadFile(filepath.Join(dir, "part.txt"))
			if err != nil {
				return err
			}
			for i := range int64(5) {
				env.Progress(i+1, 5)
			}
			env.Notes["machine"] = "test"
			out := fmt.Sprintf("%s %s seed=%d part=%s in=[%s]", env.Stage, payload.Greeting, env.Seed, part, strings.Join(in, ";"))
			return os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte(out), 0o644)
		}, nil
	case "boom":
		return func(context.Context, *Env) error { return errors.New("boom: the stage failed") }, nil
	case "panic":
		return func(context.Context, *Env) error { panic("the stage panicked") }, nil
	case "crash":
		return func(ctx context.Context, env *Env) error {
			os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("partial"), 0o644)
			os.Exit(3) // as a fault in a C library would end it
			return nil
		}, nil
	case "hang":
		return func(ctx context.Context, env *Env) error {
			os.WriteFile(filepath.Join(env.Dir, "started"), []byte(strconv.Itoa(os.Getpid())), 0o644)
			<-ctx.Done()
			return ctx.Err()
		}, nil
	}
	return nil, fmt.Errorf("no stage %s here", t.Stage)
}

func TestWorkerProcess(t *testing.T) {
	if os.Getenv(workerEnv) != "" {
		ctx, stop := signalContext()
		defer stop()
		if err := Serve(ctx, os.Stdin, os.Stdout, workerCode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	worker := func() *Process {
		return &Process{Command: []string{os.Args[0], "-test.run=^TestWorkerProcess$"}, Payload: json.RawMessage(`{"Greeting":"hello"}`), Stderr: os.Stderr}
	}
	t.Setenv(workerEnv, "1")

	// The same graph, once inline and once in workers: the same outputs,
	// notes and memo use, and the progress comes through.
	graph := func(h *harness, exec Executor) *Pipeline {
		a := &fake{name: "a", code: "v1"}
		b := &fake{name: "b", deps: []string{"a"}, code: "v1"}
		for _, f := range []*fake{a, b} {
			run, _ := workerCode(&Task{Stage: f.name, Payload: json.RawMessage(`{"Greeting":"hello"}`)})
			f.run = run
		}
		h.fakes = []*fake{a, b}
		p := h.pipeline()
		p.Executor = exec
		return p
	}
	var mu sync.Mutex
	progress := map[string][2]int64{}
	rep := ReporterFunc(func(e Event) {
		if e.Kind == EventProgress {
			mu.Lock()
			progress[e.Stage] = [2]int64{e.Done, e.Total}
			mu.Unlock()
		}
	})
	inline, inProcess := newHarness(t), newHarness(t)
	pi := graph(inline, nil)
	if _, err := pi.Run(context.Background(), RunOptions{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	pw := graph(inProcess, worker())
	if _, err := pw.Run(context.Background(), RunOptions{Jobs: 2, Reporter: rep}); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"a", "b"} {
		mi, _ := pi.Current(stage)
		mw, _ := pw.Current(stage)
		if mi.Output != mw.Output || mi.Version != mw.Version {
			t.Errorf("%s: inline %s output %s, worker %s output %s", stage, mi.Version, mi.Output[:12], mw.Version, mw.Output[:12])
		}
		if mw.Notes["machine"] != "test" || len(mw.Memo) != 1 || mw.Memo[0] != mi.Memo[0] {
			t.Errorf("%s: worker manifest notes %v memo %v, inline memo %v", stage, mw.Notes, mw.Memo, mi.Memo)
		}
		if progress[stage] != [2]int64{5, 5} {
			t.Errorf("%s: last progress %v, want 5 of 5", stage, progress[stage])
		}
	}

	// A failure, a panic and a crash each fail their stage alone, with a
	// message that says what happened, and store nothing.
	for _, tt := range []struct{ stage, want string }{
		{"boom", "boom: the stage failed"},
		{"panic", "panic: the stage panicked"},
		{"crash", "died before the stage finished: exit status 3"},
		{"nope", "no stage nope here"},
	} {
		t.Run(tt.stage, func(t *testing.T) {
			h := newHarness(t, &fake{name: tt.stage})
			p := h.pipeline()
			p.Executor = worker()
			_, err := p.Run(context.Background(), RunOptions{Jobs: 1})
			var se *StageError
			if !errors.As(err, &se) || se.Stage != tt.stage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want a stage error containing %q", err, tt.want)
			}
			if vs, _ := p.Store.Versions(tt.stage); len(vs) != 0 {
				t.Errorf("a failed worker left %d versions", len(vs))
			}
		})
	}

	// Cancelling the run interrupts the worker, which stops at once.
	h := newHarness(t, &fake{name: "hang"})
	p := h.pipeline()
	p.Executor = worker()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if m, _ := filepath.Glob(filepath.Join(h.dir, "data", tmpDir, "*", "*", "started")); len(m) > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := p.Run(ctx, RunOptions{Jobs: 1})
	if !errors.Is(err, context.Canceled) || time.Since(start) > interruptGrace/2 {
		t.Errorf("cancelled run: %v after %v", err, time.Since(start))
	}
}

// TestKilledRunnerTakesItsWorkerAlong kills -9 a runner whose worker runs
// a stage that reports nothing: the worker must not go on, orphaned.
func TestKilledRunnerTakesItsWorkerAlong(t *testing.T) {
	const runnerEnv = "MLSCHED_TEST_RUNNER"
	if dir := os.Getenv(runnerEnv); dir != "" {
		h := &harness{t: t, dir: dir, fakes: []*fake{{name: "hang"}}, seed: 1}
		p := h.pipeline()
		p.Executor = &Process{Command: []string{os.Args[0], "-test.run=^TestWorkerProcess$"}, Payload: json.RawMessage(`{}`), Stderr: os.Stderr}
		p.Run(context.Background(), RunOptions{Jobs: 1})
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	runner := exec.Command(os.Args[0], "-test.run=^TestKilledRunnerTakesItsWorkerAlong$")
	runner.Env = append(os.Environ(), runnerEnv+"="+dir, workerEnv+"=1")
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer runner.Process.Kill()
	var worker int
	for deadline := time.Now().Add(30 * time.Second); worker == 0; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, "data", tmpDir, "*", "*", "started")); len(m) > 0 {
			b, _ := os.ReadFile(m[0])
			worker, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never started its stage")
		}
	}
	runner.Process.Kill() // SIGKILL: the runner cannot stop its worker
	runner.Wait()
	for deadline := time.Now().Add(2 * time.Second); alive(worker); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(worker, syscall.SIGKILL)
			t.Fatalf("worker pid %d still runs 2s after its runner was killed -9", worker)
		}
	}
}

// alive reports whether process pid runs (exists and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestInlineNeedsRun(t *testing.T) {
	err := Inline{}.Execute(context.Background(), &Stage{Name: "declared"}, &Env{})
	if err == nil || !strings.Contains(err.Error(), "stage declared has no Run function in this program") {
		t.Errorf("Execute = %v", err)
	}
}

// signalContext is cancelled by SIGINT, as a worker's should be.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}
