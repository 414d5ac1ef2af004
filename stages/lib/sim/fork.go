package sim

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// PolicyForker is a policy with state that changes as it runs (a counter,
// a random generator): ForkPolicy returns an independent copy in the same
// state, which decides from then on exactly as the original would.
type PolicyForker interface {
	ForkPolicy() Policy
}

// MigratorForker is a Migrator with state that changes as it runs:
// ForkMigrator returns an independent copy in the same state.
type MigratorForker interface {
	ForkMigrator() Migrator
}

// Fork returns an independent simulation in exactly the state of this one,
// which runs on as this one would (the same events in the same order, the
// same records) until its migration rule decides otherwise: a
// counterfactual branch. Call it between steps, not from a callback.
//
// The fork copies every job the simulation holds, so neither simulation
// ever touches the other's jobs, and the fork's records point at its own
// copies. It reads the arrivals still to come from next, whose first job
// must be the one after the last this simulation read from its own next:
// the simulation reads one arrival ahead (New reads the first), and holds
// that one already. A fork of a simulation whose next has ended never calls
// next. The caller passes jobs that neither simulation holds.
//
// The fork's records go to emit. It reports no batches until SetOnBatch is
// called. Its migration rule is mig, or a fork of this one's if mig is nil.
// A policy or Migrator with state must be forkable (PolicyForker,
// MigratorForker); one that is a pointer and is not is an error, while any
// other value is shared, so it must keep no state that changes as it runs.
// The Service model is shared too.
func (m *Sim) Fork(next func() (*Job, bool), emit func(*Record) error, mig Migrator) (*Sim, error) {
	s := m.state
	if s.err != nil {
		return nil, fmt.Errorf("sim: fork: the simulation has stopped: %w", s.err)
	}
	cfg := s.cfg
	if cfg.Machine != nil {
		return nil, fmt.Errorf("sim: fork: a run on a machine cannot be forked: its batches run for real")
	}
	cfg.OnBatch = nil
	if f, ok := cfg.Policy.(PolicyForker); ok {
		cfg.Policy = f.ForkPolicy()
	} else if err := unshared("policy "+cfg.Policy.Name(), cfg.Policy, "ForkPolicy"); err != nil {
		return nil, err
	}
	if p := cfg.Placement; p != nil {
		if f, ok := p.(PolicyForker); ok {
			fp, ok := f.ForkPolicy().(Placer)
			if !ok {
				return nil, fmt.Errorf("sim: fork: placement %T forks into a policy that does not place jobs", p)
			}
			cfg.Placement = fp
		} else if err := unshared("placement", p, "ForkPolicy"); err != nil {
			return nil, err
		}
	}
	if d := cfg.Migration.Decide; mig != nil {
		cfg.Migration.Decide = mig
	} else if f, ok := d.(MigratorForker); ok {
		cfg.Migration.Decide = f.ForkMigrator()
	} else if err := unshared("migration rule", d, "ForkMigrator"); err != nil {
		return nil, err
	}
	f, err := newState(cfg) // the fork's policy interfaces, and empty devices
	if err != nil {
		return nil, fmt.Errorf("sim: fork: %w", err)
	}
	c := copier{jobs: jobMaps.Get().(map[*Job]*Job), splits: map[*split]*split{}, slab: make([]Job, 0, 1+s.references())}
	defer func() { clear(c.jobs); jobMaps.Put(c.jobs) }()
	for d := range s.devs {
		c.device(&f.devs[d], &s.devs[d])
	}
	f.events = s.events.clone()
	f.seq, f.stamps, f.now = s.seq, s.stamps, s.now
	f.transit = make([]transfer, len(s.transit))
	for i, t := range s.transit {
		f.transit[i] = transfer{at: t.at, dev: t.dev, job: c.job(t.job)}
	}
	f.tHead, f.stats = s.tHead, s.stats
	f.freeJobs = make([]*Job, len(s.freeJobs))
	for i, j := range s.freeJobs {
		f.freeJobs[i] = c.job(j)
	}
	f.asked, f.askedAt = c.decisions(s.asked), s.askedAt
	for _, fl := range s.flights {
		f.flights = append(f.flights, &flight{at: fl.at, seq: fl.seq, ds: c.decisions(fl.ds), out: slices.Clone(fl.out)})
	}
	f.fseq = s.fseq
	f.emit = emit
	return &Sim{state: f, next: next, pending: c.job(m.pending), more: m.more, last: m.last}, nil
}

// unshared is the error of forking v, which a fork would share, when it is
// a pointer (and so may hold state) without the method that forks it.
func unshared(what string, v any, method string) error {
	if v == nil || reflect.ValueOf(v).Kind() != reflect.Pointer {
		return nil
	}
	return fmt.Errorf("sim: fork: %s (%T) is a pointer, which may hold state, and has no %s method to copy it", what, v, method)
}

// copier copies a simulation's jobs, each once: a job held in two places
// (a queue and a group, a stale entry and a lane) maps to one copy, and so
// does a split's bookkeeping shared by its parts.
type copier struct {
	jobs   map[*Job]*Job
	splits map[*split]*split
	slab   []Job // where the copies are made, a chunk at a time
}

// jobMaps hold the maps from a simulation's jobs to their copies, for
// reuse: a fork of a long queue spends much of its time growing one.
var jobMaps = sync.Pool{New: func() any { return map[*Job]*Job{} }}

// references is the number of job references s holds, the pending job
// and the parents of split parts aside: a bound on the jobs a fork copies
// from them.
func (s *State) references() int {
	n := len(s.transit) + len(s.freeJobs) + len(s.asked)
	for _, f := range s.flights {
		n += len(f.ds)
	}
	for d := range s.devs {
		ds := &s.devs[d]
		n += len(ds.queue.fifo) + len(ds.queue.heap)
		for _, r := range ds.queue.runs {
			n += len(r.entries)
		}
		for i := range ds.lanes {
			n += len(ds.lanes[i].jobs)
		}
		for _, g := range ds.groups {
			n += len(g.entries)
		}
	}
	return n
}

// job returns j's copy (nil for nil), with its bookkeeping: its stamp
// keeps exactly the copied entries live.
func (c *copier) job(j *Job) *Job {
	if j == nil {
		return nil
	}
	if n, ok := c.jobs[j]; ok {
		return n
	}
	if len(c.slab) == cap(c.slab) {
		c.slab = make([]Job, 0, max(16, cap(c.slab)/4)) // beyond references: parents of split jobs
	}
	c.slab = append(c.slab, *j)
	n := &c.slab[len(c.slab)-1]
	c.jobs[j] = n
	if j.split != nil {
		n.split = c.split(j.split)
	}
	return n
}

// split returns sp's copy, whose parent is the copy of sp's parent.
func (c *copier) split(sp *split) *split {
	if n, ok := c.splits[sp]; ok {
		return n
	}
	n := new(split)
	*n = *sp
	c.splits[sp] = n
	n.parent = c.job(sp.parent)
	return n
}

// decisions copies asked decisions, their jobs and features' jobs mapped
// to their copies.
func (c *copier) decisions(ds []decision) []decision {
	if ds == nil {
		return nil
	}
	out := make([]decision, len(ds), cap(ds))
	for i, d := range ds {
		out[i] = d
		out[i].job = c.job(d.job)
		out[i].feat.Job = out[i].job
	}
	return out
}

// entries copies queue entries, stale ones included: with their jobs'
// copied stamps they stay stale, and the slices keep their layout (the
// cleared front before a head, the heap's order).
func (c *copier) entries(es []entry) []entry {
	if es == nil {
		return nil
	}
	out := make([]entry, len(es), cap(es))
	for i, e := range es {
		out[i] = entry{job: c.job(e.job), stamp: e.stamp}
	}
	return out
}

// ranked copies a ranked queue's entries.
func (c *copier) ranked(rs []ranked) []ranked {
	if rs == nil {
		return nil
	}
	out := make([]ranked, len(rs), cap(rs))
	for i, r := range rs {
		out[i] = ranked{entry: entry{job: c.job(r.job), stamp: r.stamp}, key: r.key}
	}
	return out
}

// device copies src's state into dst, a device newState made for the
// fork, keeping dst's queue order (its Ranker is the fork's policy).
func (c *copier) device(dst, src *deviceState) {
	lanes, ranker, keyed, groups := dst.lanes, dst.queue.ranker, dst.queue.keyed, dst.groups
	*dst = *src
	dst.lanes = lanes
	for i, l := range src.lanes {
		jobs := l.jobs
		l.jobs = nil // an idle lane's empty slice still has the original's array
		for _, j := range jobs {
			l.jobs = append(l.jobs, c.job(j))
		}
		dst.lanes[i] = l
	}
	q := &src.queue
	dst.queue = queue{ranker: ranker, keyed: keyed, fifo: c.entries(q.fifo), head: q.head, heap: c.ranked(q.heap), heaped: q.heaped}
	if q.runs != nil {
		dst.queue.runs = make([]run, len(q.runs), cap(q.runs))
		for i, r := range q.runs {
			dst.queue.runs[i] = run{major: r.major, entries: c.ranked(r.entries), head: r.head}
		}
	}
	dst.groups = groups
	dst.active = make([]*group, len(src.active), cap(src.active))
	for k, g := range src.groups {
		n := &group{entries: c.entries(g.entries), head: g.head, jobs: g.jobs, samples: g.samples, pos: g.pos}
		groups[k] = n
		if g.pos >= 0 {
			dst.active[g.pos] = n
		}
	}
}
