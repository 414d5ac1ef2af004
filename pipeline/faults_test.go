package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// flipByte changes one byte of a file in place and restores its mtime, so
// that only reading its bytes can tell.
func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestCleanupSparesALiveRunsStaging: a second writer that gets the store
// (its lock file was deleted under the first) removes only the scratch
// directories whose owner is gone, never a live one's.
func TestCleanupSparesALiveRunsStaging(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	first, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := first.Lock(context.Background(), "first", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	staging, err := first.Begin("a", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staging, "out.txt"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a dead run left: an owner directory nobody holds. A staging
	// directory of an mlsched that kept none cannot be proved dead, and
	// stays (TestLockRemovesOnlyDeadRunsScratch).
	dead := filepath.Join(root, tmpDir, ownerPrefix+"1-12345")
	legacy := filepath.Join(root, tmpDir, "b-0123456789abcdef-42")
	for _, d := range []string{dead, legacy} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.Remove(filepath.Join(root, lockName)); err != nil {
		t.Fatal(err)
	}
	second, err := OpenStore(root) // another process, as far as flock(2) goes
	if err != nil {
		t.Fatal(err)
	}
	unlock2, err := second.Lock(context.Background(), "second", false, nil)
	if err != nil {
		t.Fatalf("second writer after the lock file was deleted: %v", err)
	}
	defer unlock2()
	if _, err := os.Stat(filepath.Join(staging, "out.txt")); err != nil {
		t.Errorf("the second writer removed the live run's staging directory: %v", err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was left behind: %v", filepath.Base(dead), err)
	}
	// The first run still commits.
	m := &Manifest{Schema: manifestSchema, Stage: "a", Version: "0123456789abcdef"}
	m.Key = m.Version + strings.Repeat("0", 48)
	files, err := collect(context.Background(), staging)
	if err != nil {
		t.Fatal(err)
	}
	m.Files, m.Output = files, OutputDigest(files).String()
	if err := writeManifest(staging, m); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(staging, "a", m.Version); err != nil {
		t.Fatalf("commit after the second writer's clean-up: %v", err)
	}
}

// memoFake is a stage that keeps one memo entry, "point", and counts its
// builds.
func memoFake(builds *atomic.Int32) *fake {
	f := &fake{name: "sweep", cfg: fakeConfig{N: 1}}
	f.run = func(ctx context.Context, env *Env) error {
		dir, err := env.Memo.Get("point", nil, [][2]string{{"point", "1"}}, func(dir string) error {
			builds.Add(1)
			return os.WriteFile(filepath.Join(dir, "point.txt"), []byte("the point's result"), 0o644)
		})
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, "point.txt"))
		if err != nil {
			return err
		}
		if string(b) != "the point's result" {
			return fmt.Errorf("used a damaged memo entry: %q", b)
		}
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), b, 0o644)
	}
	return f
}

// TestDamagedMemoEntry: a memo entry whose file was deleted, truncated or
// changed (its mtime kept or not), or whose manifest is gone, is reported
// by verify, and the next run computes it again (noting it in the
// manifest) instead of using it.
func TestDamagedMemoEntry(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, entry string)
		want   string // in verify's problem and the run's note
	}{
		{"deleted", func(t *testing.T, entry string) { os.Remove(filepath.Join(entry, "point.txt")) }, "point.txt is missing"},
		{"truncated", func(t *testing.T, entry string) { os.Truncate(filepath.Join(entry, "point.txt"), 3) }, "point.txt has 3 bytes"},
		{"flipped", func(t *testing.T, entry string) {
			p := filepath.Join(entry, "point.txt")
			flipByte(t, p, 2)
			later := time.Now().Add(time.Hour)
			os.Chtimes(p, later, later)
		}, "point.txt changed since it was written"},
		// A byte flipped in place with the mtime kept, as a disk or a
		// careless tool leaves it: only the bytes can tell.
		{"flipped, mtime kept", func(t *testing.T, entry string) { flipByte(t, filepath.Join(entry, "point.txt"), 2) }, "point.txt changed since it was written"},
		{"no manifest", func(t *testing.T, entry string) { os.Remove(filepath.Join(entry, ManifestName)) }, "no manifest.json"},
		{"damaged manifest", func(t *testing.T, entry string) {
			os.WriteFile(filepath.Join(entry, ManifestName), []byte("{\"schema\": 1, \"files\": [{"), 0o644)
		}, "damaged manifest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var builds atomic.Int32
			h := newHarness(t, memoFake(&builds))
			h.mustRun(RunOptions{})
			p := h.pipeline()
			entries, _ := filepath.Glob(filepath.Join(h.dir, "data", memoDir, "sweep", "*"))
			if len(entries) != 1 {
				t.Fatalf("memo entries %v", entries)
			}
			if problems, _, err := p.Verify(context.Background()); err != nil || len(problems) != 0 {
				t.Fatalf("verify of an intact store: %v, %v", problems, err)
			}
			tt.damage(t, entries[0])

			problems, _, err := p.Verify(context.Background())
			if err != nil || len(problems) != 1 || !problems[0].Memo || !strings.Contains(problems[0].String(), tt.want) ||
				!strings.Contains(problems[0].String(), "sweep memo entry "+filepath.Base(entries[0])) {
				t.Errorf("verify after the damage = %v, %v; want one problem naming the entry and %q", problems, err, tt.want)
			}
			var repaired string
			h.mustRun(RunOptions{Force: true, Reporter: ReporterFunc(func(e Event) {
				if e.Kind == EventDone && e.Stage == "sweep" {
					repaired = e.Repaired
				}
			})})
			if !strings.Contains(repaired, filepath.Base(entries[0])[:versionLen]) || !strings.Contains(repaired, tt.want) {
				t.Errorf("the run reports repaired %q, want the recomputed entry and %q", repaired, tt.want)
			}
			if got := builds.Load(); got != 2 {
				t.Errorf("the damaged entry was built %d times in all, want 2 (once again)", got)
			}
			vs, _ := p.Store.Versions("sweep")
			if note := vs[len(vs)-1].Notes[MemoNote]; !strings.Contains(note, filepath.Base(entries[0])[:versionLen]) || !strings.Contains(note, tt.want) {
				t.Errorf("manifest note %q does not name the recomputed entry and %q", note, tt.want)
			}
			if problems, _, err := p.Verify(context.Background()); err != nil || len(problems) != 0 {
				t.Errorf("verify after the rebuild: %v, %v", problems, err)
			}
		})
	}
}

// TestVerifyCatchesAFileDroppedFromItsManifest: a file whose entry was
// removed from the manifest and which was then deleted, and a file swapped
// together with its manifest entry, are both reported.
func TestVerifyCatchesAFileDroppedFromItsManifest(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		os.WriteFile(filepath.Join(env.Dir, "keep.txt"), []byte("kept"), 0o644)
		return os.WriteFile(filepath.Join(env.Dir, "lost.txt"), []byte("lost"), 0o644)
	}
	edit := func(t *testing.T, h *harness, change func(m map[string]any, dir string)) {
		t.Helper()
		vs, _ := filepath.Glob(filepath.Join(h.dir, "data", "a", "*"))
		path := filepath.Join(vs[0], ManifestName)
		b, _ := os.ReadFile(path)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		change(m, vs[0])
		b, _ = json.Marshal(m)
		os.WriteFile(path, b, 0o644)
	}
	t.Run("dropped", func(t *testing.T) {
		h := newHarness(t, a)
		h.mustRun(RunOptions{})
		edit(t, h, func(m map[string]any, dir string) {
			files := m["files"].([]any)
			m["files"] = files[:1] // keep.txt; lost.txt sorts after it
			os.Remove(filepath.Join(dir, "lost.txt"))
		})
		problems, _, err := h.pipeline().Verify(context.Background())
		if err != nil || len(problems) == 0 || !strings.Contains(fmt.Sprint(problems), "a file was added to or dropped from it") {
			t.Errorf("verify = %v, %v; want the manifest named as damaged", problems, err)
		}
	})
	t.Run("swapped", func(t *testing.T) {
		h := newHarness(t, a)
		h.mustRun(RunOptions{})
		edit(t, h, func(m map[string]any, dir string) {
			// Other bytes, with a manifest entry made to match them: the
			// store is self-consistent, pipeline.lock is not.
			p := filepath.Join(dir, "lost.txt")
			os.WriteFile(p, []byte("LOST"), 0o644)
			fi, _ := os.Stat(p)
			f := m["files"].([]any)[1].(map[string]any)
			f["sha256"] = "8e1c9de5f84c5a3b0a25e6b1ef3b8c5fbe23b8f1d7d1b0f9b4c0e2f07f3c8a11"
			f["mtime_ns"] = fi.ModTime().UnixNano()
		})
		problems, _, err := h.pipeline().Verify(context.Background())
		if err != nil || !strings.Contains(fmt.Sprint(problems), "pipeline.lock records 4 bytes, sha256") {
			t.Errorf("verify = %v, %v; want the difference from pipeline.lock", problems, err)
		}
	})
}

// TestStatusSaysDamaged: a stored file whose mtime changed is not reported
// up to date.
func TestStatusSaysDamaged(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	vs, _ := filepath.Glob(filepath.Join(h.dir, "data", "b", "*", "out.txt"))
	later := time.Now().Add(time.Hour)
	os.Chtimes(vs[0], later, later)
	st := mustStatus(t, p)
	if st["b"].State != Suspect || !strings.Contains(strings.Join(st["b"].Reasons, "\n"), "mlsched verify") {
		t.Errorf("status of b = %+v, want %q naming verify", st["b"], Suspect)
	}
	if st["a"].State != UpToDate || st["d"].State != UpToDate {
		t.Errorf("status of a, d = %v, %v; want up-to-date", st["a"].State, st["d"].State)
	}
}

// TestStatusAfterAForcedRebuild: an upstream rebuilt under the same
// version with another output is said so, not "changed (v → v)".
func TestStatusAfterAForcedRebuild(t *testing.T) {
	var n atomic.Int32
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), fmt.Appendf(nil, "measurement %d", n.Add(1)), 0o644)
	}
	b := &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}}
	h := newHarness(t, a, b)
	h.mustRun(RunOptions{})
	h.mustRun(RunOptions{Targets: []string{"a"}, Force: true})
	st := mustStatus(t, h.pipeline())["b"]
	why := strings.Join(st.Reasons, "\n")
	if st.State != Stale || !strings.Contains(why, "was rebuilt with another output") {
		t.Errorf("status of b = %+v, want stale: upstream a rebuilt", st)
	}
	for _, r := range st.Reasons {
		var from, to string
		if _, err := fmt.Sscanf(r, "upstream a changed (%s → %s)", &from, &to); err == nil && from == strings.TrimSuffix(to, ")") {
			t.Errorf("reason %q names the same version on both sides", r)
		}
	}
}

// TestOpenStoreRefusesAFile: a store path that is a regular file is
// refused, naming it.
func TestOpenStoreRefusesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	os.WriteFile(path, []byte("x"), 0o644)
	if _, err := OpenStore(path); err == nil || !strings.Contains(err.Error(), path+": not a directory") {
		t.Errorf("OpenStore(a file) = %v", err)
	}
}

// TestExchangeErrorNamesPaths: a failed swap of a version names both
// paths, not a bare errno.
func TestExchangeErrorNamesPaths(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "staging"), filepath.Join(dir, "version")
	os.Mkdir(b, 0o755)
	err := exchange(a, b)
	if err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Errorf("exchange of a missing directory = %v, want both paths named", err)
	}
}

// hugeEstimate estimates far more than any disk holds.
type hugeEstimate struct{}

func (hugeEstimate) EstimateOutput(map[string]*Manifest) (int64, string) {
	return math.MaxInt64 / 2, "a trillion rows"
}

// TestEstimateBeyondFreeSpaceRefuses: a stage whose estimated output does
// not fit is not started, and the message gives the estimate, its basis
// and the free space.
func TestEstimateBeyondFreeSpaceRefuses(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	h := newHarness(t, a)
	p := h.pipeline()
	r := NewRegistry()
	s := a.stage()
	s.Estimate = hugeEstimate{}
	r.Register(s)
	p.Graph, _ = r.Graph()
	_, err := p.Run(context.Background(), RunOptions{Jobs: 1})
	if err == nil || !strings.Contains(err.Error(), "a trillion rows") || !strings.Contains(err.Error(), "EiB") || !strings.Contains(err.Error(), "free") {
		t.Fatalf("run = %v; want a refusal giving the estimate and the free space", err)
	}
	if a.runs.Load() != 0 {
		t.Error("the stage ran")
	}
	free, err := p.Store.(*LocalStore).Free()
	if err != nil || free <= 0 {
		t.Errorf("Free() = %d, %v", free, err)
	}
}

// TestDamagedInputIsNamed: a stage that fails on an input damaged while
// it ran (after the check before it started passed it), with the mtime
// restored, gets an error naming the version, the file and the remedy
// beside its own, and the next run rebuilds the input.
func TestDamagedInputIsNamed(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	b := &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}}
	var damage atomic.Bool
	b.run = func(ctx context.Context, env *Env) error {
		in := env.Inputs["a"]
		data, err := os.ReadFile(in.Path("out.txt"))
		if err != nil {
			return err
		}
		if damage.CompareAndSwap(true, false) {
			// The byte flips under the running stage, its mtime kept.
			fi, err := os.Stat(in.Path("out.txt"))
			if err != nil {
				return err
			}
			data[0] ^= 0xff
			if err := os.WriteFile(in.Path("out.txt"), data, 0o644); err != nil {
				return err
			}
			if err := os.Chtimes(in.Path("out.txt"), fi.ModTime(), fi.ModTime()); err != nil {
				return err
			}
		}
		if !strings.HasPrefix(string(data), "a n=1") {
			return errors.New("checksum mismatch in page 3") // a reader's own words
		}
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), data, 0o644)
	}
	h := newHarness(t, a, b)
	h.mustRun(RunOptions{})
	vs, _ := filepath.Glob(filepath.Join(h.dir, "data", "a", "*", "out.txt"))
	version := filepath.Base(filepath.Dir(vs[0]))
	damage.Store(true)

	_, err := h.run(RunOptions{Targets: []string{"b"}, Force: true})
	var dmg *InputDamagedError
	if !errors.As(err, &dmg) {
		t.Fatalf("run = %v, want an InputDamagedError", err)
	}
	for _, want := range []string{"checksum mismatch in page 3", "input a@" + version + ": out.txt damaged (sha256 ", "mlsched verify", "next 'mlsched run' rebuilds it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	got := h.mustRun(RunOptions{})
	// a is rebuilt with the same bytes, so b keeps its stored version.
	wantOutcomes(t, got, map[string]Outcome{"a": Ran, "b": Cached})
}

// TestLockFileBelongsToItsStore: a lock file records its store; one that
// describes another store is refused, and another store keeps its own.
func TestLockFileBelongsToItsStore(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	lock, err := ReadLockFile(filepath.Join(h.dir, LockName))
	if err != nil || lock.Store != "data" {
		t.Fatalf("lock file store = %q, %v; want data", lock.Store, err)
	}
	other, _ := OpenStore(filepath.Join(h.dir, "other"))
	p := h.pipeline()
	p.Store = other
	if _, err := p.Run(context.Background(), RunOptions{Jobs: 1}); err == nil || !strings.Contains(err.Error(), "describes the store "+filepath.Join(h.dir, "data")) {
		t.Errorf("run against another store with the first's lock file = %v", err)
	}
	if got, want := LockPathFor(filepath.Join(h.dir, LockName), filepath.Join(h.dir, "data"), filepath.Join(h.dir, "other")), filepath.Join(h.dir, "other", LockName); got != want {
		t.Errorf("LockPathFor(another store) = %s, want %s", got, want)
	}
	if got, want := LockPathFor(filepath.Join(h.dir, LockName), filepath.Join(h.dir, "data"), filepath.Join(h.dir, ".", "data")), filepath.Join(h.dir, LockName); got != want {
		t.Errorf("LockPathFor(the config's store) = %s, want %s", got, want)
	}
}

// TestPublishRecordsProvenance: each folder outputs are published to says
// which store, stage and version every file came from.
func TestPublishRecordsProvenance(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		return os.WriteFile(filepath.Join(env.Dir, "model.onnx"), []byte("weights"), 0o644)
	}
	h := newHarness(t, a)
	build := func(store string) *Pipeline {
		r := NewRegistry()
		s := a.stage()
		s.Publish = []Publish{{Glob: "*.onnx", Dir: "models"}}
		r.Register(s)
		p := h.pipeline()
		p.Graph, _ = r.Graph()
		p.Root = h.dir
		p.Store, _ = OpenStore(store)
		p.LockPath = LockPathFor(filepath.Join(h.dir, LockName), filepath.Join(h.dir, "data"), store)
		return p
	}
	read := func() Source {
		b, err := os.ReadFile(filepath.Join(h.dir, "models", ProvenanceName))
		var pv Provenance
		if err == nil {
			err = json.Unmarshal(b, &pv)
		}
		if err != nil {
			t.Fatal(err)
		}
		return pv.Files["model.onnx"]
	}
	for _, store := range []string{filepath.Join(h.dir, "data"), filepath.Join(h.dir, "other"), filepath.Join(h.dir, "data")} {
		if _, err := build(store).Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
			t.Fatal(err)
		}
		if src := read(); src.Store != store || src.Stage != "a" || len(src.Version) != versionLen || len(src.SHA256) != 64 {
			t.Errorf("provenance after a run against %s = %+v", store, src)
		}
	}
}

// TestLockFileFIFO: a FIFO where pipeline.lock belongs is refused at once,
// naming it, instead of blocking the run on its open.
func TestLockFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockName)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadLockFile(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadLockFile(FIFO) = %v, want a refusal naming it", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadLockFile blocks on a FIFO")
	}
}

// TestAnotherStoresRunSparesThisStoresRecord (issue 14, finding 11): a run
// against another store, with another config, must leave the config's
// store's record alone. It used to rewrite the one pipeline.lock: verify
// of the config's store then reported the other store's versions as
// missing from it, gc --keep 0 deleted the versions its own newest ones
// were built from, and --locked refused the config's own state.
func TestAnotherStoresRunSparesThisStoresRecord(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	home := filepath.Join(h.dir, "data")
	configLock := filepath.Join(h.dir, LockName)
	onStore := func(root string) *Pipeline {
		t.Helper()
		p := h.pipeline()
		st, err := OpenStore(root)
		if err != nil {
			t.Fatal(err)
		}
		p.Store = st
		p.LockPath = LockPathFor(configLock, home, root)
		return p
	}
	versions := func(root string) map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for _, s := range []string{"a", "b", "c", "d"} {
			vs, _ := filepath.Glob(filepath.Join(root, s, "*"))
			for _, v := range vs {
				out[s+"@"+filepath.Base(v)] = true
			}
		}
		return out
	}
	before := versions(home)

	// The other store, with another config of a (so a, b and d differ).
	other := filepath.Join(h.dir, "other")
	a.cfg.N = 10
	if _, err := onStore(other).Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatalf("run against another store: %v", err)
	}
	a.cfg.N = 1
	differ := 0
	for v := range versions(other) {
		if !before[v] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the other store holds only the config's store's versions: the test shows nothing")
	}

	tests := []struct {
		name  string
		store string
	}{
		{"the config's store", home},
		{"the other store", other},
	}
	for _, tt := range tests {
		t.Run("verify "+tt.name, func(t *testing.T) {
			problems, _, err := onStore(tt.store).Verify(context.Background())
			if err != nil || len(problems) != 0 {
				t.Errorf("verify = %v, %v; want all intact", problems, err)
			}
		})
	}
	t.Run("locked run of the config's store", func(t *testing.T) {
		if _, err := onStore(home).Run(context.Background(), RunOptions{Jobs: 1, Locked: true}); err != nil {
			t.Errorf("run --locked = %v", err)
		}
	})
	t.Run("gc --keep 0 of the config's store", func(t *testing.T) {
		removed, err := onStore(home).GC(context.Background(), GCOptions{})
		if err != nil || len(removed) != 0 {
			t.Errorf("gc --keep 0 = %v, %v; want nothing removed", removed, err)
		}
		after := versions(home)
		for v := range before {
			if !after[v] {
				t.Errorf("%s was removed from the config's store", v)
			}
		}
	})
}
