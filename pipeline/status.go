package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/config"
)

// State is where a stage stands relative to its config, code and upstreams.
type State string

// The states status reports.
const (
	UpToDate State = "up-to-date" // a stored version matches the current key
	Stale    State = "stale"      // an earlier version exists, but something changed
	Missing  State = "missing"    // the stage has never produced a version
	PinState State = "pinned"     // the stage is pinned to a version
	// Suspect is a stored version that matches the current key but some
	// of whose files changed since they were written (their mtime
	// differs): a copied store, or damage. Status does not read files;
	// verify, or the next run, re-hashes them.
	Suspect State = "damaged?"
)

// StageStatus is one stage's line of `mlsched status`.
type StageStatus struct {
	Stage string `json:"stage"`
	State State  `json:"state"`
	// Version is the version that is (or, for pinned stages, is held)
	// current; empty when it cannot be known before upstreams run.
	Version string `json:"version"`
	// Reasons say in words why the stage is in its state.
	Reasons []string `json:"reasons"`
}

// Status reports every stage of the targets' closure without running or
// re-hashing anything: it reads manifests and stats files only.
func (p *Pipeline) Status(targets []string) ([]StageStatus, error) {
	names, err := p.Graph.Closure(targets)
	if err != nil {
		return nil, err
	}
	lock, err := p.ReadLock()
	if err != nil {
		return nil, err
	}
	outputs := map[string]*Manifest{} // stages whose current output is known
	var out []StageStatus
	for _, name := range names {
		s := p.Graph.Stage(name)
		st := StageStatus{Stage: name, Reasons: []string{}}
		ref, _ := p.current(name, lock)
		if v, ok := lock.pinned(name); ok {
			st.State, st.Version = PinState, v
			m, err := p.Store.Manifest(name, v)
			if err != nil {
				st.Reasons = append(st.Reasons, fmt.Sprintf("pinned version %s is not in the store", v))
			} else {
				outputs[name] = m
				damaged, _, err := p.Store.Check(m, false)
				if err != nil {
					return nil, err
				}
				st.Reasons = append(st.Reasons, damaged...)
				cur, err := canonicalConfig(s.Config)
				if err != nil {
					return nil, err
				}
				for _, ch := range config.Diff(m.Inputs.Config, cur) {
					st.Reasons = append(st.Reasons, "config differs from the pinned version: "+name+"."+ch.String())
				}
				moved, err := p.pinMoved(s, m, outputs)
				if err != nil {
					return nil, err
				}
				st.Reasons = append(st.Reasons, moved...)
			}
			out = append(out, st)
			continue
		}
		var ups []*Manifest
		var waiting []string
		for _, d := range s.Deps {
			if m := outputs[d]; m != nil {
				ups = append(ups, m)
			} else {
				waiting = append(waiting, d)
			}
		}
		if len(waiting) > 0 {
			st.State = Stale
			if ref == nil {
				st.State = Missing
			}
			for _, d := range waiting {
				st.Reasons = append(st.Reasons, fmt.Sprintf("upstream %s is not up to date", d))
			}
			if ref != nil {
				reasons, err := p.explain(s, ref, nil)
				if err != nil {
					return nil, err
				}
				st.Reasons = append(st.Reasons, reasons...)
			}
			out = append(out, st)
			continue
		}
		key, in, err := p.keyFrom(s, ups)
		if err != nil {
			return nil, err
		}
		st.Version = key.Short()
		m, err := p.Store.Manifest(name, st.Version)
		switch {
		case err == nil:
			damaged, touched, err := p.Store.Check(m, false)
			if err != nil {
				return nil, err
			}
			if len(damaged) > 0 {
				st.State = Stale
				for _, d := range damaged {
					st.Reasons = append(st.Reasons, "output damaged: "+d)
				}
			} else {
				st.State = UpToDate
				outputs[name] = m
				if touched > 0 {
					st.State = Suspect
					st.Reasons = append(st.Reasons, fmt.Sprintf("%d file(s) changed since they were written (their mtime differs: damage, or a copied store); 'mlsched verify' re-hashes them now, and the next run re-hashes them and rebuilds the version if their bytes changed", touched))
				}
			}
		case !errors.Is(err, ErrNotFound):
			st.State = Stale
			st.Reasons = append(st.Reasons, err.Error())
		case ref == nil:
			st.State = Missing
			st.Reasons = append(st.Reasons, "never run")
		default:
			st.State = Stale
			reasons, err := p.explain(s, ref, &in)
			if err != nil {
				return nil, err
			}
			if len(reasons) == 0 {
				reasons = []string{fmt.Sprintf("version %s is not in the store", st.Version)}
			}
			st.Reasons = append(st.Reasons, reasons...)
		}
		out = append(out, st)
	}
	return out, nil
}

// pinMoved says how the version the config and the upstreams would make
// now differs from the pinned one, m, by its upstreams (the config's
// differences are said already), and since when the pin holds an older
// version; nothing when they are the same. An upstream whose output is
// not known yet is named as such.
func (p *Pipeline) pinMoved(s *Stage, m *Manifest, outputs map[string]*Manifest) ([]string, error) {
	var ups []*Manifest
	var waiting []string
	for _, d := range s.Deps {
		if outputs[d] == nil {
			waiting = append(waiting, fmt.Sprintf("upstream %s is not up to date: once it runs, the pinned version may no longer be what the config makes", d))
		}
		ups = append(ups, outputs[d])
	}
	if len(waiting) > 0 {
		return waiting, nil
	}
	key, in, err := p.keyFrom(s, ups)
	if err != nil {
		return nil, err
	}
	if key.Short() == m.Version {
		return nil, nil
	}
	why, err := p.explain(s, m, &in)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range why {
		if strings.HasPrefix(w, "upstream ") || strings.HasPrefix(w, "code ") || strings.HasPrefix(w, "seed ") {
			out = append(out, "since the pin: "+w)
		}
	}
	return append(out, fmt.Sprintf("the config would make %s now; the pinned version was made %s (mlsched unpin %s to follow the config)",
		key.Short(), m.Created.UTC().Format("2006-01-02 15:04 MST"), s.Name)), nil
}

// explain says in words how the current inputs of s differ from those that
// produced ref. cur may be nil when upstream outputs are not known yet; then
// only the stage's own inputs are compared.
func (p *Pipeline) explain(s *Stage, ref *Manifest, cur *KeyInputs) ([]string, error) {
	if cur == nil {
		own, err := p.ownInputs(s)
		if err != nil {
			return nil, err
		}
		cur = &own
	}
	return InputChanges(s.Name, &ref.Inputs, cur), nil
}

// InputChanges says in words how the inputs cur of stage differ from
// old, one line per difference, as status and run give their reasons:
// "code changed", "seed changed: 1 → 3", "config generate.eval.jobs: 1000
// → 500", "upstream generate changed (old version → new)". The upstreams
// are compared only when cur has them (a stage whose upstream outputs are
// not known yet has none).
func InputChanges(stage string, old, cur *KeyInputs) []string {
	var why []string
	if old.Code != cur.Code {
		why = append(why, "code changed")
	}
	if old.Salt != cur.Salt {
		why = append(why, fmt.Sprintf("salt changed: %q → %q", old.Salt, cur.Salt))
	}
	switch {
	case old.Seed != nil && cur.Seed != nil && *old.Seed != *cur.Seed:
		why = append(why, fmt.Sprintf("seed changed: %d → %d", *old.Seed, *cur.Seed))
	case (old.Seed == nil) != (cur.Seed == nil):
		why = append(why, "seed use changed")
	}
	for _, name := range slices.Sorted(maps.Keys(cur.Extern)) {
		if old.Extern[name] != cur.Extern[name] {
			why = append(why, fmt.Sprintf("input file %s changed", name))
		}
	}
	for name := range old.Extern {
		if _, ok := cur.Extern[name]; !ok {
			why = append(why, fmt.Sprintf("input file %s no longer used", name))
		}
	}
	if !slices.Equal(old.Refs, cur.Refs) {
		var was, now []string
		for _, r := range old.Refs {
			was = append(was, r.Key+" "+r.String())
		}
		for _, r := range cur.Refs {
			now = append(now, r.Key+" "+r.String())
		}
		why = append(why, fmt.Sprintf("references changed: [%s] → [%s]", strings.Join(was, ", "), strings.Join(now, ", ")))
	}
	for _, ch := range config.Diff(old.Config, cur.Config) {
		why = append(why, "config "+stage+"."+ch.String())
	}
	if cur.Upstream != nil {
		prev := map[string]Upstream{}
		for _, u := range old.Upstream {
			prev[u.Stage] = u
		}
		for _, u := range cur.Upstream {
			o, ok := prev[u.Stage]
			switch {
			case ok && o.Version == u.Version && o.Output != u.Output:
				// The same version rebuilt (a forced run) with other
				// bytes: a measurement, say.
				why = append(why, fmt.Sprintf("upstream %s@%s was rebuilt with another output (%.8s → %.8s)", u.Stage, u.Version, o.Output, u.Output))
			case !ok || o.Output != u.Output || (cur.UpstreamVersions && o.Version != u.Version):
				why = append(why, fmt.Sprintf("upstream %s changed (%s → %s)", u.Stage, shortOr(o.Version, "none"), u.Version))
			}
		}
	}
	return why
}

func shortOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkLocked verifies, before anything runs, that every stage of names
// would get the version recorded in the lock file, taking upstream outputs
// from the lock file too. It returns ErrLockMismatch naming each stage that
// differs and why.
func (p *Pipeline) checkLocked(names []string, lock *LockFile) error {
	var bad []string
	for _, name := range names {
		s := p.Graph.Stage(name)
		e, ok := lock.Stages[name]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: not recorded in the lock file", name))
			continue
		}
		if e.Pinned {
			continue
		}
		var ups []Upstream
		missing := false
		for _, d := range s.Deps {
			de, ok := lock.Stages[d]
			if !ok {
				missing = true
				break
			}
			u := Upstream{Stage: d, Version: de.Version, Output: de.Output}
			if _, some := s.Reads[d]; some {
				// Only the files it reads: their digests are in the
				// upstream's manifest.
				m, err := p.Store.Manifest(d, de.Version)
				if err != nil {
					return fmt.Errorf("%s: cannot check against %s: %w", name, p.LockPath, err)
				}
				files, err := readsOf(s, m)
				if err != nil {
					return err
				}
				u.Output = OutputDigest(files).String()
			}
			ups = append(ups, u)
		}
		if missing {
			continue // the upstream is already reported
		}
		slices.SortFunc(ups, func(a, b Upstream) int { return strings.Compare(a.Stage, b.Stage) })
		key, in, err := p.key(s, ups)
		if err != nil {
			return err
		}
		if key.Short() == e.Version {
			continue
		}
		msg := fmt.Sprintf("%s: would be version %s, lock has %s", name, key.Short(), e.Version)
		if ref, err := p.Store.Manifest(name, e.Version); err == nil {
			if why, err := p.explain(s, ref, &in); err == nil && len(why) > 0 {
				msg += " (" + strings.Join(why, "; ") + ")"
			}
		}
		bad = append(bad, msg)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w (%s); nothing was run:\n  %s", ErrLockMismatch, p.LockPath, strings.Join(bad, "\n  "))
	}
	return nil
}
