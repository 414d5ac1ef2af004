package main

// The fault tests run the real mlsched and mlsched-worker (built by
// TestMain) on the tiny config and kill them with SIGKILL at random,
// seeded moments: while each stage runs, while gc removes, while outputs
// are published to models/ and reports/, while a run re-hashes a store
// whose mtimes changed; they also run two mlsched
// processes on one store at once. After every fault the store must verify
// intact and status must answer sanely; in the end a plain run must give
// the artifacts of a clean run, byte for byte. The profile is imported
// (tiny.yaml), so every artifact is deterministic.
//
// make test runs them with a few faults of each kind; make test-faults
// lands -fault.kills=100 kills in the stages (and a tenth of that in gc and
// in publishing, half of it in re-hashing). Every process gets a time limit: one that outlives it has
// hung, and the test ends it and fails naming it. A failure prints the
// seed that replays its choices (-fault.seed); the moments themselves
// depend on the machine's timing.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

var (
	faultKills = flag.Int("fault.kills", 10, "kill -9s TestFaultKillsDuringStages lands in the stages (make test-faults: 100); gc and publishing get a tenth each, at least 2")
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

// child is an mlsched process a fault test started. It leads a process
// group of its own, with the workers it starts, so that a hung one can be
// ended whole and its workers found once it is killed.
type child struct {
	t         *testing.T
	args      []string
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
}

// start starts mlsched in the project with args.
func (p *project) start(args ...string) *child {
	p.t.Helper()
	c := &child{t: p.t, args: args, done: make(chan struct{})}
	c.cmd = exec.Command(mlschedBin, args...)
	c.cmd.Dir = p.dir
	c.cmd.Env = append(os.Environ(), p.env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errb
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A worker that outlives mlsched holds its output pipes open; Wait
	// stops waiting for them this long after mlsched exits (survivors
	// reports such workers).
	c.cmd.WaitDelay = time.Second
	if err := c.cmd.Start(); err != nil {
		p.t.Fatalf("start mlsched %s: %v", c, err)
	}
	go func() {
		c.cmd.Wait()
		close(c.done)
	}()
	p.t.Cleanup(c.end)
	return c
}

func (c *child) String() string { return strings.Join(c.args, " ") }

// running reports whether the process has not exited yet.
func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// end kills the process group, if mlsched still runs, and reaps mlsched.
// (Once mlsched is reaped, its group's id may name another's group.)
func (c *child) end() {
	if c.running() {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-c.done
}

// wait waits at most limit for the process to exit and returns its exit
// code, or -signal if a signal ended it. A process still running at the
// limit has hung: the test ends its process group and fails naming it.
func (c *child) wait(limit time.Duration) int {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(limit):
		c.end()
		c.t.Fatalf("mlsched %s (pid %d) hung: still running after %s\nstdout:\n%s\nstderr:\n%s", c, c.cmd.Process.Pid, limit, &c.out, &c.errb)
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}

// kill9 kills mlsched alone with SIGKILL, as a user's kill -9 would,
// reaps it, and reports whether the kill landed: false when the process
// had exited by itself first.
func (c *child) kill9() bool {
	c.t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	return c.wait(quickLimit) == -int(syscall.SIGKILL)
}

// survivors returns the processes of the group still alive (the workers of
// a killed mlsched) after waiting up to grace for them to end, and how long
// it waited.
func (c *child) survivors(grace time.Duration) ([]string, time.Duration) {
	pgid := c.cmd.Process.Pid
	start := time.Now()
	for deadline := start.Add(grace); ; time.Sleep(20 * time.Millisecond) {
		var alive []string
		for _, p := range processes() {
			// Only the test's binaries: the group's id may have been
			// taken by another group since its leader was reaped.
			if p.state == "Z" || p.pgrp != pgid || !strings.HasPrefix(p.cmdline, filepath.Dir(mlschedBin)+string(filepath.Separator)) {
				continue
			}
			alive = append(alive, fmt.Sprintf("pid %d (%s)", p.pid, p.cmdline))
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive, time.Since(start)
		}
	}
}

// checkNoSurvivors fails the test if a worker of the killed c outlives it
// by more than orphanGrace, and ends it.
func (c *child) checkNoSurvivors(what string) {
	c.t.Helper()
	alive, waited := c.survivors(orphanGrace)
	if len(alive) == 0 && waited > 100*time.Millisecond {
		c.t.Logf("%s: its workers outlived mlsched by %s", what, waited.Round(10*time.Millisecond))
	}
	if len(alive) > 0 {
		c.t.Errorf("%s: %s outlived the mlsched that started it (killed -9) by %s", what, strings.Join(alive, ", "), orphanGrace)
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// await waits until marker holds (the process reached a phase the test
// aims at) and reports true, or false if the process exits first. A
// process that reaches neither within limit has hung.
func (c *child) await(marker func() bool, limit time.Duration) bool {
	c.t.Helper()
	for deadline := time.Now().Add(limit); !marker(); time.Sleep(time.Millisecond) {
		if !c.running() {
			return marker()
		}
		if time.Now().After(deadline) {
			c.end()
			c.t.Fatalf("mlsched %s hung: it neither exited nor reached the moment the test aims at within %s\nstdout:\n%s\nstderr:\n%s", c, limit, &c.out, &c.errb)
		}
	}
	return true
}

// strike waits until marker holds, then for delay more, and kills the
// process -9. landed is false when the process exited by itself first;
// after is then how long it ran once marker held (zero if it never held).
// still says whether marker held yet just before the kill (a stage's
// staging folder: the stage had not committed).
func (c *child) strike(marker func() bool, delay time.Duration, limit time.Duration) (landed, still bool, after time.Duration) {
	c.t.Helper()
	if !c.await(marker, limit) {
		return false, false, 0
	}
	seen := time.Now()
	select {
	case <-c.done:
	case <-time.After(delay):
	}
	still = marker()
	if c.kill9() {
		return true, still, 0
	}
	return false, false, time.Since(seen)
}

// faultRun runs mlsched in the project, at most limit, and returns its
// stdout, stderr and exit code.
func (p *project) faultRun(limit time.Duration, args ...string) (string, string, int) {
	p.t.Helper()
	c := p.start(args...)
	code := c.wait(limit)
	return c.out.String(), c.errb.String(), code
}

// mustFault is faultRun that fails the test unless mlsched exits 0.
func (p *project) mustFault(limit time.Duration, args ...string) string {
	p.t.Helper()
	out, errs, code := p.faultRun(limit, args...)
	if code != 0 {
		p.t.Fatalf("mlsched %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// reference is what a clean run of tiny.yaml leaves.
type reference struct {
	lock      []byte
	versions  map[string]string        // stage → version, from pipeline.lock
	published map[string]string        // path under the project → sha256
	durations map[string]time.Duration // stage → how long it ran
}

var (
	referenceMu   sync.Mutex
	cleanRunCache *reference
)

// cleanReference runs tiny.yaml once, in a project of its own, and keeps
// what it left for every fault test of this process.
func cleanReference(t *testing.T) *reference {
	t.Helper()
	referenceMu.Lock()
	defer referenceMu.Unlock()
	if cleanRunCache != nil {
		return cleanRunCache
	}
	p := newProject(t, "tiny.yaml")
	out := p.mustFault(runLimit, "run")
	ref := &reference{durations: map[string]time.Duration{}, published: published(t, p.dir)}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != "ran" {
			t.Fatalf("clean run: %q", line)
		}
		d, err := time.ParseDuration(f[3])
		if err != nil {
			t.Fatalf("clean run: %q: %v", line, err)
		}
		ref.durations[f[0]] = d
	}
	var err error
	if ref.lock, err = os.ReadFile(filepath.Join(p.dir, "pipeline.lock")); err != nil {
		t.Fatal(err)
	}
	ref.versions = lockVersions(t, ref.lock)
	cleanRunCache = ref
	return ref
}

// lockVersions returns each stage's version in a pipeline.lock.
func lockVersions(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var lf pipeline.LockFile
	if err := json.Unmarshal(b, &lf); err != nil {
		t.Fatalf("pipeline.lock: %v", err)
	}
	vs := map[string]string{}
	for st, e := range lf.Stages {
		vs[st] = e.Version
	}
	return vs
}

// published returns every file under the project's models/ and reports/,
// temporary files included, with its sha256.
func published(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sub := range []string{"models", "reports"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if d.Name() == pipeline.ProvenanceName {
				// It names the store by its path, which is this project's.
				b = bytes.ReplaceAll(b, []byte(dir), []byte("<project>"))
			}
			sum := sha256.Sum256(b)
			out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			t.Fatalf("published files: %v", err)
		}
	}
	return out
}

// checkIntact is what must hold after every fault: verify finds every
// stored file intact, and status, for the config of sets, names each stage
// once with a known state, says nothing of damage, and finds in the store
// every version it calls up to date (for the base config, the clean run's).
func (p *project) checkIntact(ref *reference, sets []string, after string) {
	p.t.Helper()
	out, errs, code := p.faultRun(quickLimit, "verify")
	if code != 0 || !strings.Contains(out, "all intact") {
		p.t.Fatalf("%s: verify: exit %d\n%s%s", after, code, out, errs)
	}
	out, errs, code = p.faultRun(quickLimit, append([]string{"status", "--json"}, sets...)...)
	if code != 0 {
		p.t.Fatalf("%s: status: exit %d\n%s%s", after, code, out, errs)
	}
	var sts []pipeline.StageStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		p.t.Fatalf("%s: status --json: %v\n%s", after, err, out)
	}
	var names []string
	for _, st := range sts {
		names = append(names, st.Stage)
		switch st.State {
		case pipeline.UpToDate:
			if _, err := os.Stat(filepath.Join(p.dir, "data", st.Stage, st.Version, pipeline.ManifestName)); err != nil {
				p.t.Errorf("%s: status calls %s@%s up to date, but the store lacks it: %v", after, st.Stage, st.Version, err)
			}
			if want := ref.versions[st.Stage]; len(sets) == 0 && st.Version != want {
				p.t.Errorf("%s: status calls %s@%s up to date; the clean run made %s", after, st.Stage, st.Version, want)
			}
		case pipeline.Stale, pipeline.Missing:
		case pipeline.Suspect:
			if !p.touched {
				p.t.Errorf("%s: status: stage %s is %q, and no stored file's mtime was changed", after, st.Stage, st.State)
			}
		default:
			p.t.Errorf("%s: status: stage %s is %q", after, st.Stage, st.State)
		}
		for _, r := range st.Reasons {
			if strings.Contains(r, "is missing") || strings.Contains(r, "manifest says") || strings.Contains(r, "changed since it was written") {
				p.t.Errorf("%s: status finds %s damaged: %s", after, st.Stage, r)
			}
		}
	}
	if slices.Sort(names); !slices.Equal(names, slices.Sorted(slices.Values(faultStages))) {
		p.t.Errorf("%s: status names stages %v", after, names)
	}
}

// checkLikeClean runs a plain run and checks that the project now holds
// what a clean run left: the same pipeline.lock (every stage's version,
// output digest and file digests), the same published files and nothing
// else beside them, a store that verifies intact, no staging folder left,
// and no file in the project a clean run would not leave.
func (p *project) checkLikeClean(ref *reference, after string) {
	p.t.Helper()
	p.mustFault(runLimit, "run")
	lock, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		p.t.Fatal(err)
	}
	if !bytes.Equal(lock, ref.lock) {
		p.t.Errorf("%s: a plain run's pipeline.lock differs from a clean run's:\n%s\nclean:\n%s", after, lock, ref.lock)
	}
	got := published(p.t, p.dir)
	for _, path := range slices.Sorted(mapKeys(got, ref.published)) {
		if g, w := got[path], ref.published[path]; g != w {
			p.t.Errorf("%s: published %s: sha256 %.12s, a clean run's %.12s (empty: absent)", after, path, g, w)
		}
	}
	p.checkIntact(ref, nil, after)
	if ents, _ := os.ReadDir(filepath.Join(p.dir, "data", ".tmp")); len(ents) > 0 {
		p.t.Errorf("%s: a completed run left %d entries in the store's .tmp, the first %s", after, len(ents), ents[0].Name())
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, e := range ents {
		switch e.Name() {
		case "pipeline.yaml", "imported-profile.csv", "pipeline.lock", "data", "models", "reports":
		default:
			p.t.Errorf("%s: the project holds %s, which a clean run does not leave", after, e.Name())
		}
	}
}

func mapKeys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
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
// nothing left to remove. gc never touches what pipeline.lock names, so
// after each kill every stage is still up to date; in the end a plain run
// finds everything cached, a forced schedule (which reads the memo) gives
// the clean run's output, and a last gc completes.
func TestFaultKillsDuringGC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mlsched many times")
	}
	t.Parallel()
	rng := faultRand(t)
	ref := cleanReference(t)
	p := newProject(t, "tiny.yaml")
	p.mustFault(runLimit, "run")
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
		if t.Failed() {
			t.FailNow()
		}
	}
	if got := outcomes(p.mustFault(runLimit, "run")); !allOutcome(got, "cached") {
		t.Errorf("after %d kills of gc, a plain run: %v, want every stage cached", kills, got)
	}
	p.mustFault(runLimit, "run", "--force", "schedule")
	p.mustFault(quickLimit, "gc", "--keep", "0")
	p.checkLikeClean(ref, fmt.Sprintf("after %d kills of gc", kills))
	t.Logf("%d kills landed in gc, %d gcs ended before their kill, %d seeds added", kills, misses, seed-10)
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
		{"evaluate", "reports", "evaluate.bootstrap.resamples=%d", 201},
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

// checkPublishedWhole checks that every file in the project's dir (but
// temporary files, whose names start with a dot) is byte for byte a file
// of a stored version of stage.
func (p *project) checkPublishedWhole(stage, dir, after string) {
	p.t.Helper()
	stored := map[string]bool{} // base name + " " + sha256
	ms, _ := filepath.Glob(filepath.Join(p.dir, "data", stage, "*", pipeline.ManifestName))
	for _, path := range ms {
		b, err := os.ReadFile(path)
		if err != nil {
			p.t.Fatal(err)
		}
		var m pipeline.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			p.t.Fatalf("%s: %v", path, err)
		}
		for _, f := range m.Files {
			stored[filepath.Base(f.Path)+" "+f.SHA256] = true
		}
	}
	for path, sum := range published(p.t, p.dir) {
		base := filepath.Base(path)
		if !strings.HasPrefix(path, dir+"/") || strings.HasPrefix(base, ".") {
			continue
		}
		if base == pipeline.ProvenanceName {
			// Not a stored file: whole when it decodes, each entry naming
			// a stored file.
			b, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(path)))
			var pv pipeline.Provenance
			if err == nil {
				err = json.Unmarshal(b, &pv)
			}
			if err != nil {
				p.t.Errorf("%s: published %s does not decode: half-written? %v", after, path, err)
				continue
			}
			for name, src := range pv.Files {
				if src.Stage == stage && !stored[name+" "+src.SHA256] {
					p.t.Errorf("%s: %s names %s@%s's %s (sha256 %.12s), which no stored version holds", after, path, src.Stage, src.Version, name, src.SHA256)
				}
			}
			continue
		}
		if !stored[base+" "+sum] {
			p.t.Errorf("%s: published %s (sha256 %.12s) is no stored %s version's %s: half-written?", after, path, sum, stage, base)
		}
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
	gc := p.start("gc", "--keep", "0")
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
