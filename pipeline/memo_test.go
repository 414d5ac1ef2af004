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
	"sync/atomic"
	"testing"
)

// TestMemoSurvivesAConfigChange: a stage memoizes one result per point of
// its config; adding a point reruns the stage, which builds only the new
// point, and the manifest lists the entries used. A failed build keeps
// nothing, and gc drops the entries no kept version uses.
func TestMemoSurvivesAConfigChange(t *testing.T) {
	var builds atomic.Int32
	f := &fake{name: "sweep", cfg: fakeConfig{N: 2}}
	f.run = func(ctx context.Context, env *Env) error {
		var out []string
		for i := range f.cfg.N {
			dir, err := env.Memo.Get("point", nil, [][2]string{{"point", fmt.Sprint(i + 1)}}, func(dir string) error {
				builds.Add(1)
				return os.WriteFile(filepath.Join(dir, "point.txt"), fmt.Appendf(nil, "point %d", i), 0o644)
			})
			if err != nil {
				return err
			}
			b, err := os.ReadFile(filepath.Join(dir, "point.txt"))
			if err != nil {
				return err
			}
			out = append(out, string(b))
		}
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte(strings.Join(out, "\n")), 0o644)
	}
	h := newHarness(t, f)
	h.mustRun(RunOptions{})
	if got := builds.Load(); got != 2 {
		t.Fatalf("first run built %d points, want 2", got)
	}
	f.cfg.N = 3
	h.mustRun(RunOptions{})
	if got := builds.Load(); got != 3 {
		t.Fatalf("after adding a point, %d builds in all, want 3", got)
	}
	p := h.pipeline()
	vs, err := p.Store.Versions("sweep")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %v, %v", vs, err)
	}
	m := p.Store.Memo("sweep", vs[1].Inputs)
	key := func(point int) string {
		id, err := m.Key("point", nil, [][2]string{{"point", fmt.Sprint(point)}})
		if err != nil {
			t.Fatal(err)
		}
		return id.String()
	}
	if want := slices.Sorted(slices.Values([]string{key(1), key(2), key(3)})); !slices.Equal(vs[1].Memo, want) {
		t.Errorf("manifest memo %v, want %v", vs[1].Memo, want)
	}

	boom := errors.New("boom")
	if _, err := m.Get("point", nil, [][2]string{{"point", "255"}}, func(dir string) error {
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed build: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Store.(*LocalStore).Root(), memoDir, "sweep", key(255))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed build left an entry: %v", err)
	}
	if _, err := m.get("../escape", func(string) error { return nil }); err == nil {
		t.Error("a key that is not a hex digest was accepted")
	}

	// Only the newest version stays (keep 1, no lock entry for the old
	// one): it used all three entries, so gc removes none; with N back at 1
	// and a new run, entries 2 and 3 are unused once the others go.
	removed, err := p.GC(context.Background(), GCOptions{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range removed {
		if r.Memo {
			t.Errorf("gc removed memo entry %s, which the kept version uses", r.Version)
		}
	}
	f.cfg.N = 1
	h.mustRun(RunOptions{})
	removed, err = p.GC(context.Background(), GCOptions{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	var memo []string
	for _, r := range removed {
		if r.Memo {
			memo = append(memo, r.Version)
		}
	}
	if want := slices.Sorted(slices.Values([]string{key(2), key(3)})); !slices.Equal(memo, want) {
		t.Errorf("gc removed memo entries %v, want %v", memo, want)
	}
}

// TestUnitKeyLines: a unit's key is made of the stage's own key lines (so a
// change of any input of the stage reaches it) with the unit's config in
// place of the stage's, then the unit's lines; and a key is what names the
// unit, whatever the memo's directory.
func TestUnitKeyLines(t *testing.T) {
	seed := int64(7)
	base := KeyInputs{Code: "code-v1", Config: []byte(`{"whole":1}`), Seed: &seed,
		Extern:   map[string]string{"import.csv": "e1"},
		Refs:     []RefInput{{Key: "x.compare_to", Stage: "x", Version: "0123456789abcdef", File: "m.parquet", Content: "c1"}},
		Upstream: []Upstream{{Stage: "up", Version: "v1", Output: "o1"}}}
	type unitCfg struct {
		Lanes int `koanf:"lanes"`
	}
	lines := [][2]string{{"spec", "edf"}, {"load", "0.7"}}
	key := func(in KeyInputs, unit string, cfg any, lines [][2]string) ID {
		t.Helper()
		id, err := NewMemo(t.TempDir(), "schedule", in).Key(unit, cfg, lines)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ref := key(base, "point", unitCfg{2}, lines)
	changed := func(f func(in *KeyInputs)) KeyInputs {
		in := base
		in.Seed = &seed
		in.Extern = maps.Clone(base.Extern)
		in.Refs = slices.Clone(base.Refs)
		in.Upstream = slices.Clone(base.Upstream)
		f(&in)
		return in
	}
	other := int64(8)
	tests := []struct {
		name     string
		in       KeyInputs
		unit     string
		cfg      any
		lines    [][2]string
		wantSame bool
	}{
		{"same", base, "point", unitCfg{2}, lines, true},
		{"the stage's whole config is not the unit's", changed(func(in *KeyInputs) { in.Config = []byte(`{"whole":2}`) }), "point", unitCfg{2}, lines, true},
		{"upstream versions are not read", changed(func(in *KeyInputs) { in.Upstream[0].Version = "v2"; in.UpstreamVersions = true }), "point", unitCfg{2}, lines, true},
		{"unit config", base, "point", unitCfg{3}, lines, false},
		{"unit line", base, "point", unitCfg{2}, [][2]string{{"spec", "edf"}, {"load", "0.8"}}, false},
		{"unit name", base, "search", unitCfg{2}, lines, false},
		{"code", changed(func(in *KeyInputs) { in.Code = "code-v2" }), "point", unitCfg{2}, lines, false},
		{"seed", changed(func(in *KeyInputs) { in.Seed = &other }), "point", unitCfg{2}, lines, false},
		{"extern", changed(func(in *KeyInputs) { in.Extern["import.csv"] = "e2" }), "point", unitCfg{2}, lines, false},
		{"ref", changed(func(in *KeyInputs) { in.Refs[0].Content = "c2" }), "point", unitCfg{2}, lines, false},
		{"upstream output", changed(func(in *KeyInputs) { in.Upstream[0].Output = "o2" }), "point", unitCfg{2}, lines, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := key(tt.in, tt.unit, tt.cfg, tt.lines); (got == ref) != tt.wantSame {
				t.Errorf("key %s, reference %s: same = %v, want %v", got.Short(), ref.Short(), got == ref, tt.wantSame)
			}
		})
	}

	// Under MLSCHED_DEBUG_KEY the lines are printed as the stage's are.
	var buf strings.Builder
	m := NewMemo(t.TempDir(), "schedule", base)
	h := newKeyHash(unitSchema, "unit schedule/point")
	h.dbg = &buf
	in := base
	in.Config, _ = canonicalConfig(unitCfg{2})
	in.write(h)
	for _, l := range lines {
		h.line(l[0], l[1])
	}
	if got, _ := m.Key("point", unitCfg{2}, lines); got != h.sum() {
		t.Errorf("Key = %s, the debug hash gives %s", got.Short(), h.sum().Short())
	}
	for _, want := range []string{"HASH[unit schedule/point]: code code-v1", "ref x.compare_to x@0123456789abcdef/m.parquet c1", "input up o1", `config {"lanes":2}`, "spec edf", "load 0.7"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("debug lines lack %q:\n%s", want, buf.String())
		}
	}
}
