package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/digest"
)

// keySchema starts every stage key; bump it when the key's recipe changes.
const keySchema = "mlsched stage key v1"

// Pipeline is a stage graph bound to a store and a lock file.
type Pipeline struct {
	Graph *Graph
	Store Store
	// LockPath is the path of pipeline.lock.
	LockPath string
	// Seed is the global seed, given to the stages that use it.
	Seed int64
	// Tool describes this program for manifests, e.g. "mlsched 0.1.0 go1.26".
	Tool string
	// Now is the clock used for manifests' creation times.
	Now func() time.Time
	// Root is the project directory that Publish destinations are relative
	// to; empty disables publishing.
	Root string
	// Executor runs the stages' code; nil runs it in this process (Inline).
	Executor Executor
	// Remote, if set, is a store shared with other machines: a stage that
	// must run is first looked for there, and fetched rather than run when
	// the remote holds its version; each version a run makes is pushed
	// there unless ReadOnlyRemote is set.
	Remote Remote
	// ReadOnlyRemote fetches from Remote but never pushes to it.
	ReadOnlyRemote bool
	// Waiting is told who holds the store while pin, unpin or gc waits
	// for it, so that a wait is never silent; nil tells nobody. (A run is
	// told through RunOptions.Waiting.)
	Waiting func(holder string)

	publishing sync.Mutex // one stage at a time writes a provenance file
}

func (p *Pipeline) executor() Executor {
	if p.Executor == nil {
		return Inline{}
	}
	return p.Executor
}

// Outcome is what happened to a stage in a run.
type Outcome string

// The outcomes of a stage in a run.
const (
	Cached  Outcome = "cached"  // a stored version matched the key
	Ran     Outcome = "ran"     // the stage ran and stored a new version
	Pinned  Outcome = "pinned"  // the pinned version was used
	Fetched Outcome = "fetched" // the shared remote held the version: it was downloaded, not run
	Failed  Outcome = "failed"  // the stage returned an error
	Skipped Outcome = "skipped" // not attempted, or stopped: another stage failed
	// Interrupted is a stage stopped, or never started, because the run's
	// context was cancelled (Ctrl-C): nothing of it was stored.
	Interrupted Outcome = "interrupted"
)

// EventKind tells a Reporter what an Event announces.
type EventKind int

// The kinds of events a run reports.
const (
	EventStart    EventKind = iota // a stage began running
	EventProgress                  // a running stage reported progress
	EventDone                      // a stage finished, whatever its outcome
)

// Event is one report from a run.
type Event struct {
	Kind     EventKind
	Stage    string
	Outcome  Outcome
	Version  string
	Duration time.Duration
	// Done and Total are the progress of a running stage, in the stage's
	// own units.
	Done, Total int64
	// Reason says why a stage ran (for example "output damaged").
	Reason string
	Err    error
}

// Reporter receives the events of a run. It must be safe for concurrent use.
type Reporter interface{ Report(Event) }

// ReporterFunc adapts a function to Reporter.
type ReporterFunc func(Event)

// Report calls f(e).
func (f ReporterFunc) Report(e Event) { f(e) }

// RunOptions controls a run.
type RunOptions struct {
	// Targets are the stages to bring up to date, with their upstreams;
	// none means every stage.
	Targets []string
	// Force reruns the targets even when a stored version matches.
	Force bool
	// Locked refuses to run when any version would differ from the lock
	// file, and fails when a rerun's output differs from the recorded one.
	Locked bool
	// Jobs bounds how many stages run at once (at least 1).
	Jobs int
	// NoWait fails at once when another process holds the store.
	NoWait bool
	// Waiting is told who holds the store while this run waits for it.
	Waiting func(holder string)
	// Reporter receives progress; nil discards it.
	Reporter Reporter
}

// Result is the outcome of one stage in a run.
type Result struct {
	Stage    string
	Outcome  Outcome
	Version  string
	Duration time.Duration
}

// node is a stage's state during a run.
type node struct {
	done chan struct{}
	m    *Manifest // set when the stage is available to its dependents
	res  Result
}

// Run brings the targets and their upstreams up to date. Independent stages
// run in parallel; the first failure cancels the rest, and every version
// stored before it stays intact. On success the lock file records every
// stage of the run.
func (p *Pipeline) Run(ctx context.Context, opts RunOptions) ([]Result, error) {
	names, err := p.Graph.Closure(opts.Targets)
	if err != nil {
		return nil, err
	}
	rep := opts.Reporter
	if rep == nil {
		rep = ReporterFunc(func(Event) {})
	}
	unlock, err := p.Store.Lock(ctx, "mlsched run", !opts.NoWait, opts.Waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := p.CheckRefs(names); err != nil {
		return nil, err
	}
	lock, err := p.ReadLock()
	if err != nil {
		return nil, err
	}
	if opts.Locked {
		if err := p.checkLocked(names, lock); err != nil {
			return nil, err
		}
	}
	force := map[string]bool{}
	if opts.Force {
		for _, t := range opts.Targets {
			force[t] = true
		}
		if len(opts.Targets) == 0 {
			for _, n := range names {
				force[n] = true
			}
		}
	}

	jobs := max(opts.Jobs, 1)
	sem := make(chan struct{}, jobs)
	var exclusive sync.RWMutex
	nodes := map[string]*node{}
	for _, n := range names {
		nodes[n] = &node{done: make(chan struct{}), res: Result{Stage: n, Outcome: Skipped}}
	}
	newRun := func(name string, ups []*Manifest) *runStage {
		return &runStage{p: p, s: p.Graph.Stage(name), ups: ups, rep: rep, lock: lock, locked: opts.Locked,
			force: force[name], sem: sem, exclusive: &exclusive}
	}
	// finish records a stage's outcome and reports it; its dependents may
	// go on once it returns nil.
	finish := func(stageCtx context.Context, r *runStage, m *Manifest, res Result, err error) error {
		n, name := nodes[r.s.Name], r.s.Name
		n.res = res
		if err == nil {
			err = p.publish(r.s, m)
		}
		if err != nil {
			n.res.Outcome = Failed
			if stageCtx.Err() != nil && errors.Is(err, context.Canceled) {
				n.res.Outcome = Skipped // a sibling failed
				if ctx.Err() != nil {
					n.res.Outcome = Interrupted // the run was
				}
			}
			rep.Report(Event{Kind: EventDone, Stage: name, Outcome: n.res.Outcome, Version: res.Version, Duration: res.Duration, Err: err})
			return &StageError{Stage: name, Err: err}
		}
		n.m = m
		rep.Report(Event{Kind: EventDone, Stage: name, Outcome: res.Outcome, Version: res.Version, Duration: res.Duration, Reason: r.reason})
		return nil
	}

	// First, in order, every stage the store settles: pinned, or cached
	// with its upstreams settled. This is all a run that changes nothing
	// does, and it needs no goroutine.
	var pending []string
	for _, name := range names {
		s := p.Graph.Stage(name)
		ups := make([]*Manifest, len(s.Deps))
		ready := true
		for i, d := range s.Deps {
			if ups[i] = nodes[d].m; ups[i] == nil {
				ready = false
			}
		}
		if !ready {
			pending = append(pending, name)
			continue
		}
		r := newRun(name, ups)
		m, res, ok, err := r.settle()
		if err == nil && !ok {
			pending = append(pending, name)
			continue
		}
		if err := finish(ctx, r, m, res, err); err != nil {
			return p.results(names, nodes), err
		}
		close(nodes[name].done)
	}

	// Then the stages that must run, independent ones in parallel.
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range pending {
		n, s := nodes[name], p.Graph.Stage(name)
		g.Go(func() error {
			defer close(n.done)
			ups := make([]*Manifest, len(s.Deps))
			for i, d := range s.Deps {
				select {
				case <-nodes[d].done:
				case <-gctx.Done():
					return nil
				}
				if ups[i] = nodes[d].m; ups[i] == nil {
					return nil // upstream failed: the group already has its error
				}
			}
			r := newRun(name, ups)
			m, res, err := r.bring(gctx)
			return finish(gctx, r, m, res, err)
		})
	}
	runErr := g.Wait()
	if ctx.Err() != nil {
		for _, name := range pending {
			if n := nodes[name]; n.res.Outcome == Skipped {
				n.res.Outcome = Interrupted // never started
			}
		}
	}
	results := p.results(names, nodes)
	if err := ctx.Err(); err != nil {
		return results, fmt.Errorf("interrupted; every stored version is intact: %w", err)
	}
	if runErr != nil {
		return results, runErr
	}
	for _, n := range names {
		lock.record(nodes[n].m)
	}
	if err := p.writeLock(lock); err != nil {
		return results, fmt.Errorf("write %s: %w", p.LockPath, err)
	}
	return results, nil
}

// results lists each stage's result, in the order of names.
func (p *Pipeline) results(names []string, nodes map[string]*node) []Result {
	out := make([]Result, 0, len(names))
	for _, n := range names {
		out = append(out, nodes[n].res)
	}
	return out
}

// runStage brings one stage up to date within a run.
type runStage struct {
	p         *Pipeline
	s         *Stage
	ups       []*Manifest
	rep       Reporter
	lock      *LockFile
	locked    bool
	force     bool
	sem       chan struct{}
	exclusive *sync.RWMutex
	reason    string // why the stage ran, when it did
	key       ID
	in        KeyInputs
}

// settle finds the stored version the stage can use without running: its
// pinned version, or an intact stored version that matches its key. ok is
// false when the stage must run, and r.reason then says why.
func (r *runStage) settle() (m *Manifest, res Result, ok bool, err error) {
	p, s := r.p, r.s
	res = Result{Stage: s.Name}
	if v, pinned := r.lock.pinned(s.Name); pinned {
		res.Outcome, res.Version = Pinned, v
		m, err := p.Store.Manifest(s.Name, v)
		if err != nil {
			return nil, res, false, fmt.Errorf("pinned to version %s, which the store %s cannot provide (restore it, or run 'mlsched unpin %s'): %w", v, p.Store.Location(), s.Name, err)
		}
		if bad, _, err := p.Store.Check(m, true); err != nil || len(bad) > 0 {
			return nil, res, false, fmt.Errorf("pinned version %s is damaged: %s", v, strings.Join(bad, "; "))
		}
		return m, res, true, nil
	}
	ups, err := upstreamsOf(s, r.ups)
	if err != nil {
		return nil, res, false, err
	}
	r.key, r.in, err = p.key(s, ups)
	if err != nil {
		return nil, res, false, err
	}
	res.Version = r.key.Short()
	if r.force {
		r.reason = "forced"
		return nil, res, false, nil
	}
	m, err = p.Store.Manifest(s.Name, res.Version)
	switch {
	case err == nil:
		bad, _, err := p.Store.Check(m, true)
		if err != nil {
			return nil, res, false, err
		}
		if len(bad) == 0 {
			res.Outcome = Cached
			return m, res, true, nil
		}
		r.reason = "output damaged: " + strings.Join(bad, "; ")
	case !errors.Is(err, ErrNotFound):
		r.reason = err.Error()
	}
	return nil, res, false, nil
}

// bring settles the stage or runs it.
func (r *runStage) bring(ctx context.Context) (*Manifest, Result, error) {
	p, s := r.p, r.s
	m, res, ok, err := r.settle()
	if err != nil || ok {
		return m, res, err
	}
	key, in := r.key, r.in

	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, res, ctx.Err()
	}
	defer func() { <-r.sem }()
	if s.Exclusive {
		r.exclusive.Lock()
		defer r.exclusive.Unlock()
	} else {
		r.exclusive.RLock()
		defer r.exclusive.RUnlock()
	}
	if err := ctx.Err(); err != nil {
		return nil, res, err
	}
	if err := p.checkRoom(s, r.ups); err != nil {
		return nil, res, err
	}
	start := time.Now()
	if p.Remote != nil && !r.force {
		m, err := p.Remote.Fetch(ctx, p.Store, s.Name, res.Version, key.String())
		if err != nil {
			return nil, res, fmt.Errorf("fetch from the remote %s: %w", p.Remote.Location(), err)
		}
		if m != nil {
			res.Outcome, res.Duration = Fetched, time.Since(start)
			return m, res, nil
		}
	}
	r.rep.Report(Event{Kind: EventStart, Stage: s.Name, Version: res.Version, Reason: r.reason})
	m, err = p.execute(ctx, s, res.Version, key, in, r.ups, r.rep)
	res.Duration = time.Since(start)
	if err != nil {
		return nil, res, err
	}
	res.Outcome = Ran
	if p.Remote != nil && !p.ReadOnlyRemote {
		if err := p.Remote.Push(ctx, p.Store, m); err != nil {
			return nil, res, fmt.Errorf("stored %s@%s here, but pushing it to the remote %s failed (run 'mlsched push' to retry): %w", s.Name, res.Version, p.Remote.Location(), err)
		}
	}
	if r.locked {
		if want := r.lock.Stages[s.Name].Output; m.Output != want {
			return nil, res, fmt.Errorf("reran version %s but its output %s differs from %s in %s: the stage is not reproducible on this machine (pin it to reuse a stored version): %w",
				res.Version, m.Output[:versionLen], want[:min(len(want), versionLen)], p.LockPath, ErrLockMismatch)
		}
	}
	return m, res, nil
}

// checkRoom refuses to run a stage whose estimated output does not fit in
// the store's free space.
func (p *Pipeline) checkRoom(s *Stage, ups []*Manifest) error {
	sr, ok := p.Store.(SpaceReporter)
	if s.Estimate == nil || !ok {
		return nil
	}
	in := make(map[string]*Manifest, len(ups))
	for _, m := range ups {
		in[m.Stage] = m
	}
	need, basis := s.Estimate.EstimateOutput(in)
	free, err := sr.Free()
	if err != nil {
		return fmt.Errorf("free space in the store: %w", err)
	}
	if need > free {
		return fmt.Errorf("its output would take about %s (%s), but the store %s has %s free: nothing was written; lower the sizes in the config, or free space", FormatBytes(need), basis, p.Store.Location(), FormatBytes(free))
	}
	return nil
}

// FormatBytes writes a byte count in binary units: "512 B", "1.5 KiB",
// "40.0 TiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// upstreamsOf lists the upstream artifacts of s as they enter its key:
// each one's output digest, or the digest of the files s reads of it
// (Stage.Reads).
func upstreamsOf(s *Stage, ms []*Manifest) ([]Upstream, error) {
	out := make([]Upstream, len(ms))
	for i, m := range ms {
		out[i] = Upstream{Stage: m.Stage, Version: m.Version, Output: m.Output}
		if _, ok := s.Reads[m.Stage]; ok {
			files, err := readsOf(s, m)
			if err != nil {
				return nil, err
			}
			out[i].Output = OutputDigest(files).String()
		}
	}
	slices.SortFunc(out, func(a, b Upstream) int { return strings.Compare(a.Stage, b.Stage) })
	return out, nil
}

// readsOf returns the files of m that s reads: all of them, unless
// Stage.Reads lists some.
func readsOf(s *Stage, m *Manifest) ([]File, error) {
	names, ok := s.Reads[m.Stage]
	if !ok {
		return m.Files, nil
	}
	files := make([]File, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == n })
		if i < 0 {
			return nil, fmt.Errorf("stage %s reads %s from %s@%s, which has no such file: %w", s.Name, n, m.Stage, m.Version, ErrNotFound)
		}
		files = append(files, m.Files[i])
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// key computes a stage's cache key: the stage name, its code version and
// salt, its config section in canonical form, the global seed if the stage
// uses it, the files outside the store and the stored versions (Refs) it
// reads, and the output digest of every upstream artifact. Upstream
// *outputs*, not versions, enter the key, so an upstream that reran but
// produced the same content leaves this key unchanged (early cutoff),
// unless the stage shows its upstreams' versions (ShowsUpstreams).
func (p *Pipeline) key(s *Stage, ups []Upstream) (ID, KeyInputs, error) {
	in, err := p.ownInputs(s)
	if err != nil {
		return ID{}, KeyInputs{}, err
	}
	in.Upstream, in.UpstreamVersions = ups, s.ShowsUpstreams
	h := newKeyHash(keySchema, "stage "+s.Name)
	in.write(h)
	return h.sum(), in, nil
}

// ownInputs is what enters a stage's key besides its upstreams.
func (p *Pipeline) ownInputs(s *Stage) (KeyInputs, error) {
	cfg, err := canonicalConfig(s.Config)
	if err != nil {
		return KeyInputs{}, fmt.Errorf("canonical config: %w", err)
	}
	in := KeyInputs{Code: s.Code, Salt: s.Salt, Config: cfg, Extern: s.Extern}
	if s.UsesSeed {
		seed := p.Seed
		in.Seed = &seed
	}
	for _, r := range s.Refs {
		ri, err := p.resolveRef(r)
		if err != nil {
			return KeyInputs{}, err
		}
		in.Refs = append(in.Refs, ri)
	}
	return in, nil
}

// resolveRef finds the version and file a Ref names.
func (p *Pipeline) resolveRef(r Ref) (RefInput, error) {
	m, err := Resolve(p.Store, r.Stage, r.Version)
	if err != nil {
		return RefInput{}, fmt.Errorf("%s: %w", r.Key, err)
	}
	i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == r.File })
	if i < 0 {
		return RefInput{}, fmt.Errorf("%s: %s@%s has no %s: %w", r.Key, m.Stage, m.Version, r.File, ErrNotFound)
	}
	return RefInput{Key: r.Key, Stage: m.Stage, Version: m.Version, File: r.File, Content: m.Files[i].Content}, nil
}

// CheckRefs resolves the Refs of the named stages (all of them when names
// is empty), so that a reference the store cannot provide is reported
// before anything runs.
func (p *Pipeline) CheckRefs(names []string) error {
	if len(names) == 0 {
		names = p.Graph.Names()
	}
	var errs []error
	for _, n := range names {
		for _, r := range p.Graph.Stage(n).Refs {
			if _, err := p.resolveRef(r); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func canonicalConfig(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return config.Canonical(v)
}

// execute runs a stage into a staging directory and commits the result.
func (p *Pipeline) execute(ctx context.Context, s *Stage, version string, key ID, in KeyInputs, ups []*Manifest, rep Reporter) (*Manifest, error) {
	staging, err := p.Store.Begin(s.Name, version)
	if err != nil {
		return nil, fmt.Errorf("create staging directory: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staging)
		}
	}()
	env := &Env{
		Stage: s.Name, Version: version, Dir: staging, Seed: p.Seed,
		Inputs:   map[string]Input{},
		Metadata: map[string]string{digest.KeyStage: s.Name, digest.KeyVersion: version},
		Progress: func(done, total int64) {
			rep.Report(Event{Kind: EventProgress, Stage: s.Name, Version: version, Done: done, Total: total})
		},
		Notes: map[string]string{},
		Memo:  p.Store.Memo(s.Name, in),
	}
	var prov []string
	for _, u := range ups {
		dir, err := p.Store.Open(u.Stage, u.Version)
		if err != nil {
			return nil, fmt.Errorf("open input %s@%s: %w", u.Stage, u.Version, err)
		}
		files, err := readsOf(s, u)
		if err != nil {
			return nil, err
		}
		env.Inputs[u.Stage] = Input{Stage: u.Stage, Version: u.Version, Dir: dir, Files: slices.Clone(files)}
		prov = append(prov, u.Stage+"@"+u.Version)
	}
	for _, r := range in.Refs {
		m, err := p.Store.Manifest(r.Stage, r.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Key, err)
		}
		dir, err := p.Store.Open(r.Stage, r.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: open %s@%s: %w", r.Key, r.Stage, r.Version, err)
		}
		if env.Refs == nil {
			env.Refs = map[string]Input{}
		}
		env.Refs[r.Key] = Input{Stage: r.Stage, Version: r.Version, Dir: dir, Files: m.Files}
	}
	slices.Sort(prov)
	env.Metadata[digest.KeyUpstream] = strings.Join(prov, ",")

	start := time.Now()
	if err := p.executor().Execute(ctx, s, env); err != nil {
		if ctx.Err() == nil {
			err = p.diagnoseInputs(env, err)
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, err := collect(ctx, staging)
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Schema: manifestSchema, Stage: s.Name, Version: version, Key: key.String(),
		Inputs: in, Output: OutputDigest(files).String(), Files: files,
		Created: p.now().UTC().Truncate(time.Millisecond), Duration: time.Since(start).Seconds(), Tool: p.Tool,
	}
	noteRecomputed(env.Notes, env.Memo)
	if len(env.Notes) > 0 {
		m.Notes = env.Notes
	}
	m.Memo = env.Memo.Used()
	if err := writeManifest(staging, m); err != nil {
		return nil, fmt.Errorf("write manifest: %w", err)
	}
	if err := p.Store.Commit(staging, s.Name, version); err != nil {
		return nil, fmt.Errorf("commit version %s: %w", version, err)
	}
	committed = true
	return m, nil
}

// diagnoseInputs is called when a stage failed: a stored input damaged
// without a change of size or mtime (a flipped byte, its mtime restored)
// fails the stage with a reader's error, such as a Parquet checksum, that
// names neither the version nor the remedy. It re-hashes every file the
// stage was given and, for each whose bytes differ from its manifest,
// says so definitively, marks it for the next run to rebuild
// (Store.Suspect), and names the commands that confirm and repair it.
func (p *Pipeline) diagnoseInputs(env *Env, runErr error) error {
	var damaged []string
	check := func(in Input, what string) {
		var bad []string
		for _, f := range in.Files {
			// A file whose bytes are the recorded ones is intact, even if
			// it does not decode.
			if d, _ := digest.File(in.Path(f.Path)); d.SHA256 != f.SHA256 {
				bad = append(bad, f.Path)
			}
		}
		if len(bad) == 0 {
			return
		}
		how := fmt.Sprintf("'mlsched run --force %s' rebuilds it", in.Stage)
		if m, err := p.Store.Manifest(in.Stage, in.Version); err == nil {
			if err := p.Store.Suspect(m, bad); err == nil {
				how = fmt.Sprintf("the next 'mlsched run' rebuilds it (or 'mlsched run --force %s')", in.Stage)
			}
		}
		damaged = append(damaged, fmt.Sprintf("%s %s@%s: %s damaged: the bytes differ from its manifest's sha256 ('mlsched verify' confirms it); %s",
			what, in.Stage, in.Version, strings.Join(bad, ", "), how))
	}
	for _, n := range slices.Sorted(maps.Keys(env.Inputs)) {
		check(env.Inputs[n], "input")
	}
	for _, k := range slices.Sorted(maps.Keys(env.Refs)) {
		check(env.Refs[k], k+" reads")
	}
	if len(damaged) == 0 {
		return runErr
	}
	return &InputDamagedError{Err: runErr, Damaged: damaged}
}

// InputDamagedError is a stage's failure whose stored inputs were found
// damaged: Damaged says which, and how to repair them.
type InputDamagedError struct {
	Err     error
	Damaged []string
}

func (e *InputDamagedError) Error() string {
	return fmt.Sprintf("%v\n  %s", e.Err, strings.Join(e.Damaged, "\n  "))
}

// Unwrap returns the stage's own error.
func (e *InputDamagedError) Unwrap() error { return e.Err }

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Collect lists the files below dir with their sizes and digests, as a
// version's manifest lists them (for an executor that ships a stage's
// output elsewhere).
func Collect(ctx context.Context, dir string) ([]File, error) { return collect(ctx, dir) }

// collect digests every file a stage wrote, makes it durable, and returns
// the files sorted by path.
func collect(ctx context.Context, dir string) ([]File, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch {
		case !d.Type().IsRegular():
			return fmt.Errorf("output %s is not a regular file", rel)
		case rel == ManifestName:
			return fmt.Errorf("output %s: the name is reserved for the runner", rel)
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("collect outputs: %w", err)
	}
	slices.Sort(paths)
	files := make([]File, len(paths))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range paths {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			path := filepath.Join(dir, filepath.FromSlash(rel))
			if err := syncPath(path); err != nil {
				return fmt.Errorf("sync output %s: %w", rel, err)
			}
			d, err := digest.File(path)
			if err != nil {
				return fmt.Errorf("digest output %s: %w", rel, err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			files[i] = File{Path: rel, Size: d.Size, SHA256: d.SHA256, Content: d.Content, Rows: d.Rows, ModTime: fi.ModTime().UnixNano()}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return files, nil
}
