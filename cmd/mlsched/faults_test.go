package main

// The fault tests run the real mlsched and mlsched-worker (built by
// TestMain) on the tiny config and kill them with SIGKILL at random,
// seeded moments: while each stage runs, while gc removes, while outputs
// are published to models/ and reports/, while a run re-hashes a store
// whose mtimes changed, while a run re-hashes a stage's inputs before it
// runs; they also run two mlsched processes on one store at once. After every fault the store must verify
// intact and status must answer sanely; in the end a plain run must give
// the artifacts of a clean run, byte for byte. The profile is imported
// (tiny.yaml), so every artifact is deterministic.
//
// make test runs them with a few faults of each kind; make test-faults
// lands -fault.kills=100 kills in the stages (and a tenth of that in gc,
// in publishing and in the input check, half of it in re-hashing). Every
// process gets a time limit: one that outlives it has hung, and the test
// ends it and fails naming it. A failure prints the
// seed that replays its choices (-fault.seed); the moments themselves
// depend on the machine's timing.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

var (
	faultKills = flag.Int("fault.kills", 10, "kill -9s TestFaultKillsDuringStages lands in the stages (make test-faults: 100); gc, publishing and the input check get a tenth each, at least 2")
	faultSeed  = flag.Uint64("fault.seed", 0, "seed of the fault tests' random choices; 0 picks one, printed on failure")
)

// Time limits. A process that outlives its limit has hung.
const (
	runLimit   = 3 * time.Minute  // a whole run of the tiny config, on a loaded machine
	quickLimit = 60 * time.Second // verify, status, gc, a reaped kill
	// orphanGrace is how long a killed mlsched's workers may outlive it.
	orphanGrace = 2 * time.Second
)

// faultStages are the stages kills are spread over, in turn.
var faultStages = []string{"generate", "profile", "train", "schedule", "evaluate"}

// faultRand returns the random source of a fault test, seeded from
// -fault.seed or else from the clock, and says the seed if the test fails.
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := *faultSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fault seed %d: replay its choices with go test ./cmd/mlsched -run '^%s$' -fault.seed=%d -fault.kills=%d",
				seed, t.Name(), seed, *faultKills)
		}
	})
	return rand.New(rand.NewPCG(seed, 0x6d6c7363686564))
}

// staging returns a marker that holds while a stage writes into its
// staging folder.
func (p *project) staging(stage string) func() bool {
	pattern := filepath.Join(p.dir, "data", ".tmp", "run-*", stage+"-*") // a run stages in its own run-<pid>-* folder
	return func() bool {
		m, _ := filepath.Glob(pattern)
		return len(m) > 0
	}
}

// randDelay draws a delay in [0, window].
func randDelay(rng *rand.Rand, window time.Duration) time.Duration {
	return time.Duration(rng.Int64N(int64(window) + 1))
}

// TestFaultKillsDuringStages lands -fault.kills kill -9s in the stages, in
// turn, each at a random moment after the stage's staging folder appears,
// in runs that force the stage for one of a few seeds (so that both new
// versions and replacements of stored ones are interrupted, with the
// schedule stage's memo cold and warm). After each kill the store verifies
// intact and status is sane; in the end a plain run equals a clean one.
func TestFaultKillsDuringStages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	seeds := max(3, *faultKills/10)
	// window[s] bounds the delay after s's staging folder appears: s's
	// duration in the clean run, then, whenever a run of s ends before
	// its kill, how long that one took (a warm memo makes schedule fast).
	window := map[string]time.Duration{}
	for _, s := range faultStages {
		window[s] = max(ref.durations[s], 20*time.Millisecond)
	}
	landed := map[string]int{}
	var kills, misses, staged int
	start := time.Now()
	for kills < *faultKills {
		stage := faultStages[kills%len(faultStages)]
		sets := []string{"--set", fmt.Sprintf("seed=%d", 3+rng.IntN(seeds))}
		delay := randDelay(rng, window[stage])
		c := p.start(append([]string{"run", "--force", stage}, sets...)...)
		hit, inStage, after := c.strike(p.staging(stage), delay, runLimit)
		what := fmt.Sprintf("kill %d (mlsched %s, %s after %s's staging folder appeared)", kills+1, c, delay.Round(time.Millisecond), stage)
		if !hit {
			misses++
			if code := c.wait(quickLimit); code != 0 {
				t.Fatalf("mlsched %s: exit %d\n%s%s", c, code, &c.out, &c.errb)
			}
			if after > 0 {
				window[stage] = max(after, time.Millisecond)
			}
			if misses > 2**faultKills+20 {
				t.Fatalf("%d kills landed and %d missed: the stages end before their kills", kills, misses)
			}
			continue
		}
		kills++
		landed[stage]++
		if inStage {
			staged++
		}
		c.checkNoSurvivors(what)
		p.checkIntact(ref, sets, what)
		if t.Failed() {
			t.FailNow()
		}
	}
	p.checkLikeClean(ref, fmt.Sprintf("after %d kills", kills))
	t.Logf("%d kills landed in the stages (%v), %d of them before the stage committed, the rest while it committed, published or wrote pipeline.lock; %d runs ended before their kill; in %s",
		kills, landed, staged, misses, time.Since(start).Round(time.Second))
}

// TestFaultKillsDuringGC kills gc -9 at random moments after it starts
// removing (its first trash folder appears in the store's .tmp), refilling
// the store with other seeds' versions and memo entries whenever gc has
// nothing left to remove. Another config beside pipeline.yaml shares the
// store, with its own lock file. gc never touches what either lock file
// names, so after each kill every stage of both configs is still up to
// date; in the end a plain run of each finds everything cached, a forced
// schedule (which reads the memo) gives the clean run's output, and a last
// gc completes.
func TestFaultKillsDuringGC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	p.mustFault(runLimit, "run")
	other := p.anotherConfig("other.yaml", "seed: 4")
	p.mustFault(runLimit, "--config", other, "run")
	n := max(2, *faultKills/10)
	window, seed := 100*time.Millisecond, 10
	trash := func() bool {
		m, _ := filepath.Glob(filepath.Join(p.dir, "data", ".tmp", "run-*", "gc-*"))
		return len(m) > 0
	}
	var kills, misses int
	for kills < n {
		if out := p.mustFault(quickLimit, "gc", "--keep", "0", "--dry-run"); strings.Contains(out, "Would remove 0 version(s) and 0 memo entries") {
			p.mustFault(runLimit, "run", "--set", fmt.Sprintf("seed=%d", seed))
			p.mustFault(runLimit, "run") // pipeline.lock names the base config's versions again
			seed++
		}
		delay := randDelay(rng, window)
		c := p.start("gc", "--keep", "0")
		hit, _, after := c.strike(trash, delay, quickLimit)
		if !hit {
			misses++
			if code := c.wait(quickLimit); code != 0 {
				t.Fatalf("mlsched %s: exit %d\n%s%s", c, code, &c.out, &c.errb)
			}
			if after > 0 {
				window = max(after, time.Millisecond)
			}
			if misses > 5*n+10 {
				t.Fatalf("%d kills landed in gc and %d missed", kills, misses)
			}
			continue
		}
		kills++
		what := fmt.Sprintf("kill %d of gc (%s after its first removal began)", kills, delay.Round(time.Millisecond))
		p.checkIntact(ref, nil, what)
		p.checkUpToDate(other, what)
		if t.Failed() {
			t.FailNow()
		}
	}
	for _, config := range []string{"pipeline.yaml", other} {
		if got := outcomes(p.mustFault(runLimit, "--config", config, "run", "--locked")); !allOutcome(got, "cached") {
			t.Errorf("after %d kills of gc, a run of %s: %v, want every stage cached", kills, config, got)
		}
	}
	p.mustFault(runLimit, "run", "--force", "schedule")
	p.mustFault(quickLimit, "gc", "--keep", "0")
	p.checkLikeClean(ref, fmt.Sprintf("after %d kills of gc", kills))
	t.Logf("%d kills landed in gc, %d gcs ended before their kill, %d seeds added", kills, misses, seed-10)
}

// TestFaultKillsDuringInputCheck kills runs -9 at random moments while
// evaluate's stored inputs are re-hashed before it runs (issue 29, item
// 7): after the run takes the store and before evaluate's staging folder
// appears, in runs that force evaluate. Every other run does so over a
// damaged input (a byte in the middle of one of schedule's traces changed,
// its mtime kept), so that kills also land while the check marks it for
// the next run to rebuild. After each kill the store holds no damage but
// that byte; the next forced run refuses on it, naming it with both
// digests, unless the killed one's mark landed first, and a plain run
// rebuilds it; the store then verifies intact. The eval workload is ten
// times tiny.yaml's, so that the check reads tens of MiB and lasts long
// enough to be hit.
func TestFaultKillsDuringInputCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	sets := []string{"--set", "generate.eval.jobs=10000"}
	with := func(args ...string) []string { return append(args, sets...) }
	p.mustFault(runLimit, with("run")...)
	staged := p.staging("evaluate")

	// The window: from the moment a forced run holds the store to the one
	// evaluate's staging folder appears, the longest of a few runs.
	var window time.Duration
	for range 3 {
		c := p.start(with("run", "--force", "evaluate")...)
		if !c.await(p.holding(c), runLimit) {
			t.Fatalf("mlsched %s ended before it was seen holding the store\n%s%s", c, &c.out, &c.errb)
		}
		held := time.Now()
		if c.await(staged, runLimit) {
			window = max(window, time.Since(held))
		}
		if code := c.wait(runLimit); code != 0 {
			t.Fatalf("mlsched %s: exit %d\n%s%s", c, code, &c.out, &c.errb)
		}
	}

	n := max(2, *faultKills/10)
	var kills, checking, misses int
	for kills < n {
		damaged := kills%2 == 1
		var trace, recorded string
		if damaged {
			trace = p.largest("data/schedule/"+lockVersions(t, p.read("pipeline.lock"))["schedule"], "trace.parquet")
			recorded = sha256Of(t, trace)
			fi, err := os.Stat(trace)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, trace, fi.Size()/2)
		}
		delay := randDelay(rng, window)
		c := p.start(with("run", "--force", "evaluate")...)
		checkingNow := func() bool { return p.holding(c)() && !staged() }
		hit, still, _ := c.strike(checkingNow, delay, runLimit)
		what := fmt.Sprintf("kill %d (mlsched %s, %s after it took the store, its inputs intact)", kills+1, c, delay.Round(time.Millisecond))
		if damaged {
			what = strings.Replace(what, "its inputs intact", "one of its inputs damaged", 1)
		}
		if !hit {
			misses++
			want := 0
			if damaged {
				want = 1
			}
			if code := c.wait(quickLimit); code != want {
				t.Fatalf("mlsched %s: exit %d, want %d\n%s%s", c, code, want, &c.out, &c.errb)
			}
			if misses > 5*n+10 {
				t.Fatalf("%d kills landed in the input check and %d missed", kills, misses)
			}
			if damaged {
				p.repairDamagedInput(trace, recorded, sets, what+", missed: the run refused")
			}
			continue
		}
		kills++
		if still {
			checking++
		}
		c.checkNoSurvivors(what)
		if damaged {
			p.repairDamagedInput(trace, recorded, sets, what)
		}
		p.checkIntact(ref, sets, what)
		if t.Failed() {
			t.FailNow()
		}
	}
	if checking == 0 {
		t.Errorf("none of %d kills landed before evaluate's staging folder appeared: the test did not hit the check (window %s)", kills, window)
	}
	if got := outcomes(p.mustFault(runLimit, with("run")...)); !allOutcome(got, "cached") {
		t.Errorf("after %d kills in the input check, a run: %v, want every stage cached", kills, got)
	}
	t.Logf("%d kills landed in runs forcing evaluate, %d of them before its staging folder appeared (window %s); %d runs ended before their kill",
		kills, checking, window.Round(time.Millisecond), misses)
}

// largest returns the largest file named name below the project's dir.
func (p *project) largest(dir, name string) string {
	p.t.Helper()
	var best string
	var size int64 = -1
	filepath.WalkDir(filepath.Join(p.dir, filepath.FromSlash(dir)), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != name {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Size() > size {
			best, size = path, fi.Size()
		}
		return nil
	})
	if best == "" {
		p.t.Fatalf("no %s below %s", name, dir)
	}
	return best
}

// repairDamagedInput checks what a run left after it met the damaged
// stored file path (recorded: its manifest's digest), and repairs it as a
// user would: verify names that file alone; a plain run rebuilds it if the
// mark the check left landed; otherwise a forced run of evaluate refuses
// on it, naming it with both digests, and marks it, and the plain run
// after that rebuilds it.
func (p *project) repairDamagedInput(path, recorded string, sets []string, after string) {
	p.t.Helper()
	rel, _ := filepath.Rel(filepath.Join(p.dir, "data"), path)
	stage, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	version, inVersion, _ := strings.Cut(rest, "/")
	out, errs, code := p.faultRun(quickLimit, "verify")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "DAMAGED") && !strings.HasPrefix(line, "DAMAGED "+stage+"@"+version+": "+inVersion+": ") {
			p.t.Errorf("%s: verify finds more than the damaged %s: %s", after, rel, line)
		}
	}
	if code != 1 {
		p.t.Fatalf("%s: verify over the damaged %s: exit %d, want 1\n%s%s", after, rel, code, out, errs)
	}
	onDisk := sha256Of(p.t, path)
	got := outcomes(p.mustFault(runLimit, append([]string{"run"}, sets...)...))
	if got["schedule"] != "ran" {
		// The killed run's mark had not landed: a forced run finds it.
		out, errs, code := p.faultRun(runLimit, append([]string{"run", "--force", "evaluate"}, sets...)...)
		want := inVersion + " damaged (sha256 " + onDisk + " on disk, " + recorded + " in its manifest)"
		if code != 1 || !strings.Contains(errs, want) {
			p.t.Fatalf("%s: run --force evaluate over the damaged %s: exit %d, want 1 saying %q\n%s%s", after, rel, code, want, out, errs)
		}
		if got := outcomes(p.mustFault(runLimit, append([]string{"run"}, sets...)...)); got["schedule"] != "ran" {
			p.t.Fatalf("%s: the run after the refusal: %v, want schedule rebuilt", after, got)
		}
	}
	if got := sha256Of(p.t, path); got != recorded {
		p.t.Fatalf("%s: %s after the rebuild: sha256 %s, recorded %s", after, rel, got, recorded)
	}
}

// anotherConfig writes a config beside pipeline.yaml, named name, that
// differs from it by one line (seed: 3 becomes line), and returns its
// name; the files it and its lock file are count as the test's own.
func (p *project) anotherConfig(name, line string) string {
	p.t.Helper()
	b := bytes.Replace(p.read("pipeline.yaml"), []byte("seed: 3"), []byte(line), 1)
	if err := os.WriteFile(filepath.Join(p.dir, name), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.extra = append(p.extra, name, pipeline.LockPathOf(name))
	return name
}

// checkUpToDate fails the test unless status finds every stage of config
// up to date, each version it names in the store.
func (p *project) checkUpToDate(config, after string) {
	p.t.Helper()
	out, errs, code := p.faultRun(quickLimit, "--config", config, "status", "--json")
	var sts []pipeline.StageStatus
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &sts); err != nil {
			p.t.Fatalf("%s: status --json of %s: %v\n%s", after, config, err, out)
		}
	}
	if code != 0 || len(sts) != len(faultStages) {
		p.t.Fatalf("%s: status of %s: exit %d, %d stages\n%s%s", after, config, code, len(sts), out, errs)
	}
	for _, st := range sts {
		if st.State != pipeline.UpToDate {
			p.t.Errorf("%s: %s's stage %s is %s: %v", after, config, st.Stage, st.State, st.Reasons)
		}
	}
}

// allOutcome reports whether every stage of a run had outcome want.
func allOutcome(got map[string]string, want string) bool {
	for _, s := range faultStages {
		if got[s] != want {
			return false
		}
	}
	return true
}

// TestFaultKillsDuringPublish kills a run -9 at random moments after a
// stage committed a new version and while it publishes that version's
// files to models/ or reports/. Every published file must then be whole:
// byte for byte a file of one of the stage's stored versions. In the end a
// plain run publishes exactly what a clean run did, leaving no temporary
// file behind.
func TestFaultKillsDuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	tests := []struct {
		stage, dir string
		set        string // a key of the stage alone, so that each run makes a new version
		from       int    // the key's first value; each run adds 1
	}{
		{"train", "models", "train.placement.network.epochs=%d", 21},
		{"evaluate", "reports", "evaluate.timeline.span=%dms", 201},
	}
	for _, tt := range tests {
		t.Run(tt.stage, func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			p.mustFault(runLimit, "run")
			versions := func() int {
				m, _ := filepath.Glob(filepath.Join(p.dir, "data", tt.stage, "*"))
				return len(m)
			}
			n := max(2, *faultKills/10)
			window := 50 * time.Millisecond
			var kills, misses int
			for i := 0; kills < n; i++ {
				before := versions()
				delay := randDelay(rng, window)
				c := p.start("run", tt.stage, "--set", fmt.Sprintf(tt.set, tt.from+i))
				hit, _, after := c.strike(func() bool { return versions() > before }, delay, runLimit)
				if !hit {
					misses++
					if code := c.wait(quickLimit); code != 0 {
						t.Fatalf("mlsched %s: exit %d\n%s%s", c, code, &c.out, &c.errb)
					}
					if after > 0 {
						window = max(after, time.Millisecond)
					}
					if misses > 5*n+10 {
						t.Fatalf("%d kills landed in publishing and %d missed", kills, misses)
					}
					continue
				}
				kills++
				what := fmt.Sprintf("kill %d (mlsched %s, %s after %s's version was committed)", kills, c, delay.Round(time.Millisecond), tt.stage)
				c.checkNoSurvivors(what)
				p.checkPublishedWhole(tt.stage, tt.dir, what)
				p.checkIntact(ref, nil, what)
				if t.Failed() {
					t.FailNow()
				}
			}
			p.checkLikeClean(ref, fmt.Sprintf("after %d kills while %s published", kills, tt.stage))
			t.Logf("%d kills landed while %s published to %s/, %d runs ended before their kill", kills, tt.stage, tt.dir, misses)
		})
	}
}

// holding returns a marker that holds once c holds the store's lock (its
// pid is in data/.lock).
func (p *project) holding(c *child) func() bool {
	path := filepath.Join(p.dir, "data", ".lock")
	prefix := fmt.Sprintf("pid %d ", c.cmd.Process.Pid)
	return func() bool {
		b, _ := os.ReadFile(path)
		return strings.HasPrefix(string(b), prefix)
	}
}

// storePath is the store's path as mlsched names it.
func (p *project) storePath() string {
	dir, err := filepath.EvalSymlinks(p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	return filepath.Join(dir, "data")
}

// TestFaultTwoRunsOnOneStore starts a second mlsched on a store while a
// first one runs in it: the second waits, saying for whom, and then does
// its own work or finds the first one's cached; with --no-wait it refuses
// naming the holder. Both end well, and the store is intact.
func TestFaultTwoRunsOnOneStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	ref := cleanReference(t)
	tests := []struct {
		name    string
		second  []string
		code    int    // the second's exit code
		stderr  string // what the second says: %[1]d is the first's pid, %[2]s the store
		outcome string // every stage's outcome in the second, if it runs
	}{
		{"same config waits then finds it cached", []string{"run"}, 0, "waiting for the store %[2]s, in use by pid %[1]d (mlsched run", "cached"},
		{"another seed waits then runs", []string{"run", "--set", "seed=4"}, 0, "waiting for the store %[2]s, in use by pid %[1]d (mlsched run", "ran"},
		{"no-wait refuses naming the holder", []string{"run", "--no-wait", "--set", "seed=4"}, 1, "store %[2]s is in use by pid %[1]d (mlsched run", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			first := p.start("run")
			if !first.await(p.holding(first), runLimit) {
				t.Fatalf("mlsched %s ended before it was seen holding the store", first)
			}
			second := p.start(tt.second...)
			busy := first.running()
			code := second.wait(runLimit)
			if c := first.wait(runLimit); c != 0 || !allOutcome(outcomes(first.out.String()), "ran") {
				t.Fatalf("the first mlsched %s: exit %d\n%s%s", first, c, &first.out, &first.errb)
			}
			if !busy {
				t.Fatalf("the first mlsched ended before the second started: the test cannot tell what the second did")
			}
			want := fmt.Sprintf(tt.stderr, first.cmd.Process.Pid, p.storePath())
			if code != tt.code || !strings.Contains(second.errb.String(), want) {
				t.Errorf("the second mlsched %s: exit %d, want %d saying %q\nstdout:\n%s\nstderr:\n%s", second, code, tt.code, want, &second.out, &second.errb)
			}
			if got := outcomes(second.out.String()); tt.outcome != "" && !allOutcome(got, tt.outcome) {
				t.Errorf("the second mlsched %s: %v, want every stage %s", second, got, tt.outcome)
			}
			p.checkIntact(ref, nil, "after two runs at once")
			p.checkLikeClean(ref, "after two runs at once")
		})
	}
}

// TestFaultGCDuringRun starts gc while a run holds the store: gc waits,
// saying for whom, then removes only what the run's pipeline.lock does not
// name, never a version the run made.
func TestFaultGCDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	p.mustFault(runLimit, "run")
	run := p.start("run", "--set", "seed=4")
	if !run.await(p.staging("generate"), runLimit) {
		t.Fatalf("mlsched %s ended before its first stage was seen running", run)
	}
	gc := p.start("gc", "--keep", "0", "--verbose") // every version it removes, by name
	gcCode := gc.wait(runLimit)
	if code := run.wait(runLimit); code != 0 {
		t.Fatalf("mlsched %s beside gc: exit %d\n%s%s", run, code, &run.out, &run.errb)
	}
	want := fmt.Sprintf("waiting for the store %s, in use by pid %d (mlsched run", p.storePath(), run.cmd.Process.Pid)
	if gcCode != 0 || !strings.Contains(gc.errb.String(), want) {
		t.Errorf("gc during a run: exit %d, want 0 saying %q\nstdout:\n%s\nstderr:\n%s", gcCode, want, &gc.out, &gc.errb)
	}
	for _, line := range strings.Split(strings.TrimSpace(run.out.String()), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && strings.Contains(gc.out.String(), f[0]+"@"+f[2]) {
			t.Errorf("gc removed %s@%s, which the run beside it made:\n%s", f[0], f[2], &gc.out)
		}
	}
	if got := outcomes(p.mustFault(runLimit, "run", "--set", "seed=4")); !allOutcome(got, "cached") {
		t.Errorf("after gc, the run's config again: %v, want every stage cached", got)
	}
	p.checkIntact(ref, []string{"--set", "seed=4"}, "after gc during a run")
	p.checkLikeClean(ref, "after gc during a run")
}

// TestFaultLockHolderKilled kills a run -9 while it holds the store: the
// next run gets in at once (--no-wait), keeps what the killed one
// committed, and does the rest.
func TestFaultLockHolderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	sets := []string{"--set", "seed=4"}
	first := p.start(append([]string{"run"}, sets...)...)
	if hit, _, _ := first.strike(p.staging("schedule"), 0, runLimit); !hit {
		t.Fatalf("mlsched %s ended before it could be killed while schedule ran\n%s%s", first, &first.out, &first.errb)
	}
	first.checkNoSurvivors("the killed lock holder")
	out, errs, code := p.faultRun(runLimit, append([]string{"run", "--no-wait"}, sets...)...)
	got := outcomes(out)
	if code != 0 || got["train"] != "cached" || got["schedule"] != "ran" {
		t.Errorf("run --no-wait after the lock holder was killed: exit %d, %v (want train cached, schedule ran)\n%s%s", code, got, out, errs)
	}
	p.checkIntact(ref, sets, "after the lock holder was killed")
	p.checkLikeClean(ref, "after the lock holder was killed")
}

// TestFaultKillsDuringRevalidation kills runs -9 at random moments while
// they re-hash a store whose files' mtimes all changed (as after a copy or
// a restore from backup) and rewrite the manifests to trust them again.
// The window is short, so this test kills more often than the others.
func TestFaultKillsDuringRevalidation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	p.touched = true
	p.mustFault(runLimit, "run")
	touch := func(i int) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(p.dir, "data", "*", "*", "*"))
		when := time.Now().Add(time.Duration(i+1) * time.Second)
		for _, f := range files {
			if filepath.Base(f) != pipeline.ManifestName {
				if err := os.Chtimes(f, when, when); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	n := max(5, *faultKills/2)
	window := 100 * time.Millisecond
	var kills, misses int
	for i := 0; kills < n; i++ {
		touch(i)
		delay := randDelay(rng, window)
		c := p.start("run")
		hit, _, after := c.strike(func() bool { return true }, delay, runLimit)
		if !hit {
			misses++
			if code := c.wait(quickLimit); code != 0 {
				t.Fatalf("mlsched %s: exit %d\n%s%s", c, code, &c.out, &c.errb)
			}
			if got := outcomes(c.out.String()); !allOutcome(got, "cached") {
				t.Fatalf("a run over a store whose mtimes changed: %v, want every stage cached (re-hashed)", got)
			}
			window = max(after, time.Millisecond)
			if misses > 5*n+10 {
				t.Fatalf("%d kills landed in revalidation and %d missed", kills, misses)
			}
			continue
		}
		kills++
		p.checkIntact(ref, nil, fmt.Sprintf("kill %d (%s after a run over a touched store started)", kills, delay.Round(time.Millisecond)))
		if t.Failed() {
			t.FailNow()
		}
	}
	p.checkLikeClean(ref, fmt.Sprintf("after %d kills during revalidation", kills))
	t.Logf("%d kills landed while runs re-hashed a touched store, %d runs ended before their kill", kills, misses)
}
