package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refHarness: stage a has two stored versions (N=1, then N=2), and stage
// cmp reads a file of the version of a that its Ref names, prefix.
func refHarness(t *testing.T) (h *harness, cmp *fake, v1, v2 string) {
	t.Helper()
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	h = newHarness(t, a)
	h.mustRun(RunOptions{})
	a.cfg.N = 2
	h.mustRun(RunOptions{})
	vs, err := h.pipeline().Store.Versions("a")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions of a: %v, %v", vs, err)
	}
	cmp = &fake{name: "cmp", cfg: fakeConfig{N: 1}}
	cmp.run = func(ctx context.Context, env *Env) error {
		in, err := env.Ref("cmp.compare_to")
		if err != nil {
			return err
		}
		b, err := os.ReadFile(in.Path("out.txt"))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), append([]byte(in.Version+": "), b...), 0o644)
	}
	h.fakes = append(h.fakes, cmp)
	return h, cmp, vs[0].Version, vs[1].Version
}

// withRef is the harness's pipeline with cmp's Ref naming version.
func withRef(h *harness, version string) *Pipeline {
	p := h.pipeline()
	p.Graph.Stage("cmp").Refs = []Ref{{Key: "cmp.compare_to", Stage: "a", Version: version, File: "out.txt"}}
	return p
}

func runOutcomes(t *testing.T, p *Pipeline) map[string]Outcome {
	t.Helper()
	res, err := p.Run(context.Background(), RunOptions{Jobs: 2})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := map[string]Outcome{}
	for _, r := range res {
		out[r.Stage] = r.Outcome
	}
	return out
}

func TestRefIsResolvedKeyedAndKept(t *testing.T) {
	h, _, v1, v2 := refHarness(t)
	wantOutcomes(t, runOutcomes(t, withRef(h, v1[:6])), map[string]Outcome{"a": Cached, "cmp": Ran})
	p := withRef(h, v1[:6])
	cur, err := p.Current("cmp")
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.Inputs.Refs) != 1 || cur.Inputs.Refs[0].Version != v1 || cur.Inputs.Refs[0].Key != "cmp.compare_to" {
		t.Errorf("manifest refs = %+v, want cmp.compare_to resolved to a@%s", cur.Inputs.Refs, v1)
	}
	out, _ := os.ReadFile(filepath.Join(p.Store.(*LocalStore).Dir("cmp", cur.Version), "out.txt"))
	if !strings.HasPrefix(string(out), v1+": a n=1") {
		t.Errorf("cmp read %q, want a@%s's file", out, v1)
	}
	wantOutcomes(t, runOutcomes(t, withRef(h, v1)), map[string]Outcome{"cmp": Cached})

	// Naming the other version changes the key, and status says why.
	st := mustStatus(t, withRef(h, v2))["cmp"]
	if st.State != Stale || !strings.Contains(strings.Join(st.Reasons, "; "), "references changed") {
		t.Errorf("status with the other version = %+v", st)
	}
	wantOutcomes(t, runOutcomes(t, withRef(h, v2)), map[string]Outcome{"cmp": Ran})

	// gc keeps the version the locked cmp reads, though neither the lock
	// file nor the newest-versions rule names it, and removes the rest.
	wantOutcomes(t, runOutcomes(t, withRef(h, v1)), map[string]Outcome{"cmp": Cached})
	removed, err := withRef(h, v1).GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range removed {
		if r.Stage == "a" {
			t.Errorf("gc removed a@%s, which the kept cmp reads", r.Version)
		}
	}
	if len(removed) != 1 || removed[0].Stage != "cmp" {
		t.Errorf("gc removed %+v, want only the cmp version that read a@%s", removed, v2)
	}
}

// TestRefResolvesInThePipelinesStore: a reference is looked up in the store
// the pipeline runs on, whatever directory a config names, and one it
// cannot provide is an error naming the reference, before anything runs.
func TestRefResolvesInThePipelinesStore(t *testing.T) {
	h, cmp, v1, _ := refHarness(t)
	other, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := withRef(h, v1)
	p.Store = other
	err = p.CheckRefs(nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "cmp.compare_to: a@"+v1+": no such version in "+other.Root()) {
		t.Errorf("CheckRefs over an empty store = %v", err)
	}
	if _, err := p.Run(context.Background(), RunOptions{Jobs: 1}); err == nil || !strings.Contains(err.Error(), "cmp.compare_to") {
		t.Errorf("Run over an empty store = %v", err)
	}
	if n := cmp.runs.Load(); n != 0 {
		t.Errorf("cmp ran %d times with a reference the store lacks", n)
	}
	if err := withRef(h, v1).CheckRefs(nil); err != nil {
		t.Errorf("CheckRefs over the store that has it: %v", err)
	}
	p = withRef(h, v1)
	p.Graph.Stage("cmp").Refs[0].File = "nope.txt"
	if err := p.CheckRefs(nil); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "a@"+v1+" has no nope.txt") {
		t.Errorf("CheckRefs of a missing file = %v", err)
	}
}

// TestShowsUpstreams: a stage that names its upstreams' versions reruns
// when an upstream reruns with the same output; one that does not stays
// cached (early cutoff).
func TestShowsUpstreams(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("the same whatever n"), 0o644)
	}
	var shown []string
	report := &fake{name: "report", deps: []string{"a"}}
	report.run = func(ctx context.Context, env *Env) error {
		in, err := env.Input("a")
		if err != nil {
			return err
		}
		shown = append(shown, in.Version)
		return os.WriteFile(filepath.Join(env.Dir, "report.md"), []byte("made from a@"+in.Version), 0o644)
	}
	plain := &fake{name: "plain", deps: []string{"a"}}
	h := newHarness(t, a, report, plain)
	build := func() *Pipeline {
		p := h.pipeline()
		p.Graph.Stage("report").ShowsUpstreams = true
		return p
	}
	wantOutcomes(t, runOutcomes(t, build()), map[string]Outcome{"a": Ran, "report": Ran, "plain": Ran})
	a.cfg.N = 2
	wantOutcomes(t, runOutcomes(t, build()), map[string]Outcome{"a": Ran, "report": Ran, "plain": Cached})
	cur, err := build().Current("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != 2 || shown[1] != cur.Version {
		t.Errorf("report showed versions %v, want the second to be a's current %s", shown, cur.Version)
	}
	rep, err := build().Current("report")
	if err != nil || !rep.Inputs.UpstreamVersions {
		t.Errorf("report's manifest: %+v, %v; want upstream versions recorded as keyed", rep, err)
	}
}

func TestEnvInputNamesWhatIsMissing(t *testing.T) {
	a := &fake{name: "a"}
	b := &fake{name: "b", deps: []string{"a"}}
	b.run = func(ctx context.Context, env *Env) error {
		_, err := env.Input("zz")
		return err
	}
	_, err := newHarness(t, a, b).run(RunOptions{})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "stage b has no input from stage zz (its inputs: a)") {
		t.Errorf("Input(zz) = %v", err)
	}
}

// TestCurrent: the version commands mean by default is the lock file's when
// the store has it, else the newest stored one.
func TestCurrent(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	h := newHarness(t, a)
	p := h.pipeline()
	if _, err := p.Current("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Current before any run = %v, want ErrNotFound", err)
	}
	h.mustRun(RunOptions{})
	first, _ := p.Current("a")
	a.cfg.N = 2
	h.mustRun(RunOptions{})
	second, _ := p.Current("a")
	if first.Version == second.Version {
		t.Fatal("the second run kept the version")
	}
	// Lock the first again: Current follows the lock file, not the age.
	if _, err := p.Pin(context.Background(), "a", first.Version); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Current("a"); got.Version != first.Version {
		t.Errorf("Current = %s, want the locked %s", got.Version, first.Version)
	}
	// With the locked version gone, the newest.
	if err := os.RemoveAll(p.Store.(*LocalStore).Dir("a", first.Version)); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Current("a"); got.Version != second.Version {
		t.Errorf("Current with the locked version gone = %s, want the newest %s", got.Version, second.Version)
	}
}
