package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// fakeConfig is a fake stage's config section.
type fakeConfig struct {
	N    int    `koanf:"n"`
	Text string `koanf:"text"`
}

// fake is a test stage that counts its runs and writes one file derived from
// its config and its inputs, so that content flows down the graph.
type fake struct {
	name    string
	deps    []string
	cfg     fakeConfig
	code    string
	parquet bool // write a Parquet file carrying the provenance metadata
	runs    atomic.Int32
	run     func(ctx context.Context, env *Env) error // optional override
	reads   map[string][]string                       // Stage.Reads
}

func (f *fake) stage() Stage {
	return Stage{Name: f.name, Deps: f.deps, Reads: f.reads, Config: f.cfg, Code: f.code, UsesSeed: true,
		Run: func(ctx context.Context, env *Env) error {
			f.runs.Add(1)
			if f.run != nil {
				return f.run(ctx, env)
			}
			return f.write(env)
		}}
}

type fakeRow struct {
	Name  string `parquet:"name"`
	Value string `parquet:"value"`
}

func (f *fake) write(env *Env) error {
	var in []string
	for _, d := range slices.Sorted(maps.Keys(env.Inputs)) {
		for _, file := range env.Inputs[d].Files {
			b, err := os.ReadFile(env.Inputs[d].Path(file.Path))
			if err != nil {
				return err
			}
			in = append(in, fmt.Sprintf("%s/%s=%x", d, file.Path, b))
		}
	}
	content := fmt.Sprintf("%s n=%d text=%s seed=%d inputs=[%s]", f.name, f.cfg.N, f.cfg.Text, env.Seed, strings.Join(in, ";"))
	if !f.parquet {
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte(content), 0o644)
	}
	out, err := os.Create(filepath.Join(env.Dir, "out.parquet"))
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[fakeRow](out, parquetio.WriterOptions(env.Metadata)...)
	if _, err := w.Write([]fakeRow{{Name: f.name, Value: content}}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return out.Close()
}

// harness is a pipeline over fakes in a temporary store.
type harness struct {
	t     *testing.T
	dir   string
	fakes []*fake
	seed  int64
}

func newHarness(t *testing.T, fakes ...*fake) *harness {
	t.Helper()
	for _, f := range fakes {
		if f.code == "" {
			f.code = "code-v1"
		}
	}
	return &harness{t: t, dir: t.TempDir(), fakes: fakes, seed: 7}
}

func (h *harness) pipeline() *Pipeline {
	h.t.Helper()
	r := NewRegistry()
	for _, f := range h.fakes {
		if err := r.Register(f.stage()); err != nil {
			h.t.Fatal(err)
		}
	}
	g, err := r.Graph()
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := OpenStore(filepath.Join(h.dir, "data"))
	if err != nil {
		h.t.Fatal(err)
	}
	return &Pipeline{Graph: g, Store: st, LockPath: filepath.Join(h.dir, "pipeline.lock"), Seed: h.seed, Tool: "test"}
}

// run runs the pipeline and returns each stage's outcome.
func (h *harness) run(opts RunOptions) (map[string]Outcome, error) {
	h.t.Helper()
	if opts.Jobs == 0 {
		opts.Jobs = 4
	}
	res, err := h.pipeline().Run(context.Background(), opts)
	out := map[string]Outcome{}
	for _, r := range res {
		out[r.Stage] = r.Outcome
	}
	return out, err
}

func (h *harness) mustRun(opts RunOptions) map[string]Outcome {
	h.t.Helper()
	out, err := h.run(opts)
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return out
}

func (h *harness) runs() map[string]int {
	out := map[string]int{}
	for _, f := range h.fakes {
		out[f.name] = int(f.runs.Load())
	}
	return out
}

func wantOutcomes(t *testing.T, got, want map[string]Outcome) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stage %s: outcome %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// diamond: a and c independent, b <- a, d <- b, c.
func diamond() (a, b, c, d *fake) {
	a = &fake{name: "a", cfg: fakeConfig{N: 1}}
	b = &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}}
	c = &fake{name: "c", cfg: fakeConfig{N: 3}}
	d = &fake{name: "d", deps: []string{"b", "c"}, cfg: fakeConfig{N: 4}}
	return
}

func TestSecondRunIsCached(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Ran, "c": Ran, "d": Ran})
	before, err := os.Stat(filepath.Join(h.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Cached, "b": Cached, "c": Cached, "d": Cached})
	if got := h.runs(); got["a"] != 1 || got["d"] != 1 {
		t.Errorf("runs = %v, want each stage once", got)
	}
	// Nothing changed, so nothing was written: not even the lock file.
	after, err := os.Stat(filepath.Join(h.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Error("a cached run rewrote pipeline.lock")
	}
}

func TestChangeRerunsStageAndDownstreamOnly(t *testing.T) {
	tests := []struct {
		name   string
		change func(a, b, c, d *fake, h *harness)
		want   map[string]Outcome
	}{
		{"config of a", func(a, b, c, d *fake, h *harness) { a.cfg.N = 10 },
			map[string]Outcome{"a": Ran, "b": Ran, "c": Cached, "d": Ran}},
		{"config of c", func(a, b, c, d *fake, h *harness) { c.cfg.Text = "x" },
			map[string]Outcome{"a": Cached, "b": Cached, "c": Ran, "d": Ran}},
		{"config of leaf d", func(a, b, c, d *fake, h *harness) { d.cfg.N = 0 },
			map[string]Outcome{"a": Cached, "b": Cached, "c": Cached, "d": Ran}},
		// b reruns but writes the same bytes, so d stays cached (early cutoff).
		{"code of b", func(a, b, c, d *fake, h *harness) { b.code = "code-v2" },
			map[string]Outcome{"a": Cached, "b": Ran, "c": Cached, "d": Cached}},
		{"seed", func(a, b, c, d *fake, h *harness) { h.seed = 8 },
			map[string]Outcome{"a": Ran, "b": Ran, "c": Ran, "d": Ran}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, c, d := diamond()
			h := newHarness(t, a, b, c, d)
			h.mustRun(RunOptions{})
			tt.change(a, b, c, d, h)
			wantOutcomes(t, h.mustRun(RunOptions{}), tt.want)
		})
	}
}

func TestEarlyCutoff(t *testing.T) {
	// a's code changes but it writes the same data; its Parquet footer now
	// names a new version, yet b must stay cached.
	a := &fake{name: "a", cfg: fakeConfig{N: 1}, parquet: true}
	b := &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}, parquet: true}
	h := newHarness(t, a, b)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	before, _ := p.Status(nil)
	a.code = "code-v2"
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Cached})
	after, _ := h.pipeline().Status(nil)
	if before[0].Version == after[0].Version {
		t.Fatalf("a kept version %s after a code change", before[0].Version)
	}
	old, _ := p.Store.Manifest("a", before[0].Version)
	cur, _ := p.Store.Manifest("a", after[0].Version)
	if old.Files[0].SHA256 == cur.Files[0].SHA256 {
		t.Errorf("raw digests equal: the footer should carry the new version")
	}
	if old.Output != cur.Output {
		t.Errorf("output digest changed (%s → %s) though the data did not", old.Output, cur.Output)
	}
	meta, _, err := digest.Footer(filepath.Join(p.Store.(*LocalStore).Dir("a", cur.Version), "out.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if meta[parquetio.KeyVersion] != cur.Version || meta[parquetio.KeyStage] != "a" {
		t.Errorf("footer provenance = %v, want stage a version %s", meta, cur.Version)
	}
	// A real change of a's output must still reach b.
	a.cfg.N = 5
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Ran})
}

// TestReadsKeysOnTheFilesRead: a stage that reads one file of an upstream
// that writes two reruns when that file changes, not when the other does,
// sees only its file, and is checked the same way by status and --locked.
func TestReadsKeysOnTheFilesRead(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1, Text: "x"}}
	a.run = func(_ context.Context, env *Env) error {
		if err := os.WriteFile(filepath.Join(env.Dir, "n.txt"), []byte(fmt.Sprint(a.cfg.N)), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "text.txt"), []byte(a.cfg.Text), 0o644)
	}
	var seen []string
	b := &fake{name: "b", deps: []string{"a"}, reads: map[string][]string{"a": {"n.txt"}}}
	b.run = func(_ context.Context, env *Env) error {
		seen = seen[:0]
		for _, f := range env.Inputs["a"].Files {
			seen = append(seen, f.Path)
		}
		return b.write(env)
	}
	h := newHarness(t, a, b)
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Ran})
	if !slices.Equal(seen, []string{"n.txt"}) {
		t.Errorf("b sees files %v of a, want only n.txt", seen)
	}
	a.cfg.Text = "y"
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Cached})
	if _, err := h.run(RunOptions{Locked: true}); err != nil {
		t.Errorf("--locked after a change b does not read: %v", err)
	}
	st, err := h.pipeline().Status(nil)
	if err != nil || st[1].State != UpToDate {
		t.Errorf("status of b = %+v, %v; want up to date", st, err)
	}
	a.cfg.N = 2
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Ran})
	// A file the upstream does not write is an error naming it.
	b.reads = map[string][]string{"a": {"none.txt"}}
	if _, err := h.run(RunOptions{}); err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Errorf("reading a file a lacks: %v", err)
	}
}

func TestIndependentStagesOverlap(t *testing.T) {
	// Each stage waits until the other has started: they finish only if the
	// runner really runs them at the same time.
	started := map[string]chan struct{}{"a": make(chan struct{}), "c": make(chan struct{})}
	rendezvous := func(self, other string) func(context.Context, *Env) error {
		return func(ctx context.Context, env *Env) error {
			close(started[self])
			select {
			case <-started[other]:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("%s never overlapped with %s", self, other)
			}
			return os.WriteFile(filepath.Join(env.Dir, "x"), []byte(self), 0o644)
		}
	}
	a := &fake{name: "a", run: rendezvous("a", "c")}
	c := &fake{name: "c", run: rendezvous("c", "a")}
	h := newHarness(t, a, c)
	h.mustRun(RunOptions{Jobs: 2})
}

func TestJobsAndExclusiveBoundConcurrency(t *testing.T) {
	var cur, peak, exclPeak atomic.Int32
	var exclRunning atomic.Bool
	work := func(ctx context.Context, env *Env) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if exclRunning.Load() && n > 1 {
			exclPeak.Store(n)
		}
		time.Sleep(20 * time.Millisecond)
		return os.WriteFile(filepath.Join(env.Dir, "x"), []byte(env.Stage), 0o644)
	}
	var fakes []*fake
	for i := range 6 {
		fakes = append(fakes, &fake{name: fmt.Sprintf("s%d", i), run: work})
	}
	excl := &fake{name: "excl", run: func(ctx context.Context, env *Env) error {
		exclRunning.Store(true)
		defer exclRunning.Store(false)
		return work(ctx, env)
	}}
	h := newHarness(t, append(fakes, excl)...)
	r := NewRegistry()
	for _, f := range h.fakes {
		s := f.stage()
		s.Exclusive = f.name == "excl"
		if err := r.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	g, _ := r.Graph()
	p := h.pipeline()
	p.Graph = g
	if _, err := p.Run(context.Background(), RunOptions{Jobs: 3}); err != nil {
		t.Fatal(err)
	}
	if peak.Load() > 3 {
		t.Errorf("peak concurrency %d with -j 3", peak.Load())
	}
	if exclPeak.Load() != 0 {
		t.Errorf("%d stages ran alongside the exclusive stage", exclPeak.Load())
	}
}

func TestFailedStageLeavesNoVersionAndCancelsOthers(t *testing.T) {
	// Each failing run waits until c is running, so that c's cancellation,
	// not its never starting, is what the test sees.
	tests := []struct {
		name string
		run  func(cStarted <-chan struct{}) func(ctx context.Context, env *Env) error
	}{
		{"error after a partial write", func(cStarted <-chan struct{}) func(ctx context.Context, env *Env) error {
			return func(ctx context.Context, env *Env) error {
				<-cStarted
				os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("half"), 0o644)
				return errors.New("disk on fire")
			}
		}},
		{"panic after a partial write", func(cStarted <-chan struct{}) func(ctx context.Context, env *Env) error {
			return func(ctx context.Context, env *Env) error {
				<-cStarted
				os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("half"), 0o644)
				panic("disk on fire")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, c, d := diamond()
			h := newHarness(t, a, b, c, d)
			h.mustRun(RunOptions{})
			p := h.pipeline()
			okVersion := mustStatus(t, p)["a"].Version

			a.cfg.N = 99
			cStarted, cancelled := make(chan struct{}), make(chan struct{})
			a.run = tt.run(cStarted)
			c.cfg.N = 33
			c.run = func(ctx context.Context, env *Env) error {
				close(cStarted)
				<-ctx.Done() // must be cancelled by a's failure
				close(cancelled)
				return ctx.Err()
			}
			out, err := h.run(RunOptions{})
			var se *StageError
			if !errors.As(err, &se) || se.Stage != "a" || !strings.Contains(err.Error(), "disk on fire") {
				t.Fatalf("err = %v, want a StageError naming stage a", err)
			}
			select {
			case <-cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("stage c was not cancelled")
			}
			wantOutcomes(t, out, map[string]Outcome{"a": Failed, "b": Skipped, "d": Skipped})
			vs, _ := p.Store.Versions("a")
			if len(vs) != 1 || vs[0].Version != okVersion {
				t.Errorf("versions of a after failure = %d, want only the earlier %s", len(vs), okVersion)
			}
			if ents, _ := os.ReadDir(filepath.Join(p.Store.(*LocalStore).Root(), "a")); len(ents) != 1 {
				t.Errorf("store/a holds %d entries, want 1", len(ents))
			}
			if _, err := os.Stat(filepath.Join(p.Store.(*LocalStore).Root(), "a", okVersion, "out.txt")); err != nil {
				t.Errorf("earlier version damaged: %v", err)
			}
		})
	}
}

// TestInterruptedRunLabelsStages: a stage the run's cancellation stopped,
// and those it never started, are "interrupted", not "skipped", which is
// for stages another stage's failure stopped.
func TestInterruptedRunLabelsStages(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	ctx, cancel := context.WithCancel(context.Background())
	a.run = func(ctx context.Context, env *Env) error {
		cancel() // the user presses Ctrl-C while a runs
		<-ctx.Done()
		return ctx.Err()
	}
	c.run = func(ctx context.Context, env *Env) error {
		<-ctx.Done()
		return ctx.Err()
	}
	res, err := h.pipeline().Run(ctx, RunOptions{Jobs: 4})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Run() = %v, want an interruption", err)
	}
	out := map[string]Outcome{}
	for _, r := range res {
		out[r.Stage] = r.Outcome
	}
	wantOutcomes(t, out, map[string]Outcome{"a": Interrupted, "b": Interrupted, "c": Interrupted, "d": Interrupted})
}

func mustStatus(t *testing.T, p *Pipeline) map[string]StageStatus {
	t.Helper()
	sts, err := p.Status(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]StageStatus{}
	for _, s := range sts {
		out[s.Stage] = s
	}
	return out
}

func TestExternFileEntersTheKey(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	build := func(digest string) *Pipeline {
		r := NewRegistry()
		for _, f := range h.fakes {
			s := f.stage()
			if f.name == "c" {
				s.Extern = map[string]string{"gpu.csv": digest}
			}
			r.Register(s)
		}
		p := h.pipeline()
		p.Graph, _ = r.Graph()
		return p
	}
	run := func(p *Pipeline) map[string]Outcome {
		res, err := p.Run(context.Background(), RunOptions{Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Outcome{}
		for _, r := range res {
			out[r.Stage] = r.Outcome
		}
		return out
	}
	run(build("aaaa"))
	wantOutcomes(t, run(build("aaaa")), map[string]Outcome{"c": Cached})
	st := mustStatus(t, build("bbbb"))["c"]
	if st.State != Stale || !slices.Contains(st.Reasons, "input file gpu.csv changed") {
		t.Errorf("status after the file changed = %+v", st)
	}
	wantOutcomes(t, run(build("bbbb")), map[string]Outcome{"c": Ran, "a": Cached})
}

// TestStartSaysHowLongTheLastComparableRunTook checks Event.Previous: a
// stage that reruns with the config of its last version (forced, or after
// its code or an upstream changed) is told how long that version took; one
// whose config changed, or that never ran, is told nothing.
func TestStartSaysHowLongTheLastComparableRunTook(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	b := &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}}
	b.run = func(ctx context.Context, env *Env) error {
		time.Sleep(20 * time.Millisecond)
		return b.write(env)
	}
	h := newHarness(t, a, b)
	previous := func(opts RunOptions) map[string]time.Duration {
		t.Helper()
		got := map[string]time.Duration{}
		var mu sync.Mutex
		opts.Reporter = ReporterFunc(func(e Event) {
			if e.Kind == EventStart {
				mu.Lock()
				got[e.Stage] = e.Previous
				mu.Unlock()
			}
		})
		h.mustRun(opts)
		return got
	}
	if got := previous(RunOptions{}); got["a"] != 0 || got["b"] != 0 {
		t.Errorf("first run: previous %v, want none", got)
	}
	stored := func(stage string) time.Duration {
		vs, err := h.pipeline().Store.Versions(stage)
		if err != nil || len(vs) == 0 {
			t.Fatal(err)
		}
		return time.Duration(vs[len(vs)-1].Duration * float64(time.Second))
	}
	want := stored("b")
	if got := previous(RunOptions{Targets: []string{"b"}, Force: true}); got["b"] != want || want < 20*time.Millisecond {
		t.Errorf("forced rerun: previous %v, want b's %s", got, want)
	}
	b.code = "code-v2"
	want = stored("b")
	if got := previous(RunOptions{}); got["b"] != want {
		t.Errorf("rerun for new code: previous %v, want b's last %s", got, want)
	}
	b.cfg.N = 3
	if got := previous(RunOptions{}); got["b"] != 0 {
		t.Errorf("rerun for a new config: previous %v, want none", got)
	}
}
