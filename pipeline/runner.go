package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

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
	// PublishIndex is the file where publishing records each copy it made
	// or checked (see publish); empty keeps none, and every run then
	// re-hashes each published copy.
	PublishIndex string
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
	index      *copyIndex // the publish index, read by the run's first publish
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
	// Previous, when a stage starts, is how long its last run with the
	// same configuration took (the version it had before, whose config
	// is the same): what its progress can be held to. Zero when there is
	// none.
	Previous time.Duration
	// Repaired, for a stage that ran, says what damage its run found and
	// repaired on the way (damaged memo entries computed again, from the
	// manifest's MemoNote): the user hears of it, not only the manifest.
	Repaired string
	Err      error
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
	// A store this process may not write serves a run that finds
	// everything cached, under the lock shared: such a run writes nothing.
	// One that must write fails below, before anything runs.
	readOnly := err
	if errors.Is(err, ErrReadOnly) {
		unlock, err = p.Store.ReadLock(ctx, "mlsched run", !opts.NoWait, opts.Waiting)
	} else {
		readOnly = nil
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	p.index = nil // another process may have published since: read it again
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
		ev := Event{Kind: EventDone, Stage: name, Outcome: res.Outcome, Version: res.Version, Duration: res.Duration, Reason: r.reason}
		if res.Outcome == Ran {
			ev.Repaired = m.Notes[MemoNote]
		}
		rep.Report(ev)
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

	if readOnly != nil && len(pending) > 0 {
		return p.results(names, nodes), fmt.Errorf("%w: %s would have to run, and write to it; a store this process may not write serves only a run that finds everything cached", readOnly, strings.Join(pending, ", "))
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
	// previous is how long the stage's last run with the same config
	// took, when it must run (see Event.Previous).
	previous time.Duration
	key      ID
	in       KeyInputs
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
	r.key, r.in, err = p.keyFrom(s, r.ups)
	if err != nil {
		return nil, res, false, err
	}
	res.Version = r.key.Short()
	if r.force {
		r.reason = "forced"
		r.changed()
		return nil, res, false, nil
	}
	m, err = p.Store.Manifest(s.Name, res.Version)
	var foreign *foreignFolderError
	switch {
	case errors.As(err, &foreign):
		// Not the store's to replace (see LocalStore.versionDir).
		return nil, res, false, err
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
	default:
		r.reason = r.changed()
	}
	if r.previous == 0 && m != nil {
		r.previous = time.Duration(m.Duration * float64(time.Second))
	}
	return nil, res, false, nil
}

// changed says briefly why the stage's version is new: how its inputs
// differ from those of the version it had before (the lock file's, or
// the newest stored), or that it never ran. It sets r.previous when that
// version's config is the same.
func (r *runStage) changed() string {
	ref, err := r.p.current(r.s.Name, r.lock)
	if err != nil || ref == nil {
		return "never run"
	}
	why, err := r.p.explain(r.s, ref, &r.in)
	if err != nil {
		return ""
	}
	if !slices.ContainsFunc(why, func(w string) bool { return strings.HasPrefix(w, "config ") }) {
		r.previous = time.Duration(ref.Duration * float64(time.Second))
	}
	if len(why) == 0 {
		return ""
	}
	const shown = 2
	if len(why) > shown {
		return fmt.Sprintf("%s; and %d more", strings.Join(why[:shown], "; "), len(why)-shown)
	}
	return strings.Join(why, "; ")
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
	r.rep.Report(Event{Kind: EventStart, Stage: s.Name, Version: res.Version, Reason: r.reason, Previous: r.previous})
	m, err = p.execute(ctx, s, res.Version, key, in, r.ups, r.rep)
	res.Duration = time.Since(start)
	if err != nil {
		return nil, res, err
	}
	res.Outcome = Ran
	if p.Remote != nil && !p.ReadOnlyRemote {
		if err := p.Remote.Push(ctx, p.Store, m); errors.As(err, new(*ConflictError)) {
			return nil, res, fmt.Errorf("stored %s@%s here: %w", s.Name, res.Version, err)
		} else if err != nil {
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
