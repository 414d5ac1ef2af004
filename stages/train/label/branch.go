package label

import (
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// forced is a branch's migration rule: the first skip decisions follow
// the behaviour rule, as in the scouted run; the next is take, noted with
// the state at that moment; the rest follow the Threshold rule.
type forced struct {
	r         *runner
	skip      int32
	take      bool
	behaviour sim.Migrator
	rule      sim.Migrator
	fired     bool
	at        float64
	feat      sim.MigrationFeatures
	vec       [sim.NumFeatures]float32
	// judged are the jobs in the system at the decision not yet done,
	// and n how many there were.
	judged map[int64]tracked
	n      int
}

func (f *forced) Migrate(m *sim.MigrationFeatures) bool {
	switch {
	case f.fired:
		return f.rule.Migrate(m)
	case f.skip > 0:
		f.skip--
		return f.behaviour.Migrate(m)
	}
	f.fired, f.at, f.feat = true, m.Now, *m
	m.Vector(&f.vec)
	f.judged = map[int64]tracked{}
	for id, t := range f.r.live {
		if t.arrival <= m.Now {
			f.judged[id] = t
		}
	}
	f.n = len(f.judged)
	return f.take
}

// branch forks main, whose next step holds decision d, with d forced to
// take, and runs it to the end of its judgement.
func (t *trajectory) branch(main *runner, d decision, take bool) (obj float64, f *forced, err error) {
	r := &runner{live: make(map[int64]tracked, len(main.live)), next: main.next}
	for id, tr := range main.live {
		r.live[id] = tr
	}
	f = &forced{r: r, skip: d.ordinal, take: take, behaviour: t.behaviour, rule: t.rule}
	var done []float64 // the judged jobs' objective terms, as they end
	emit := func(rec *sim.Record) error {
		delete(r.live, rec.Job.ID)
		if tr, judged := f.judged[rec.Job.ID]; judged && f.fired {
			done = append(done, t.term(tr, rec.End, f.at))
			delete(f.judged, rec.Job.ID)
		}
		return nil
	}
	if r.s, err = main.s.Fork(t.feeder(r), emit, f); err != nil {
		return 0, nil, err
	}
	if _, err := r.s.Step(); err != nil {
		return 0, nil, err
	}
	if !f.fired || f.feat.Job.ID != d.job {
		return 0, nil, fmt.Errorf("a fork before step %d did not reproduce the scouted decision about job %d (fired %v, job %d)",
			d.step, d.job, f.fired, jobOf(f))
	}
	end := f.at + t.opts.Horizon
	events := int64(1)
	for len(f.judged) > 0 && r.s.Now() <= end {
		more, err := r.s.Step()
		if err != nil {
			return 0, nil, err
		}
		events++
		if !more {
			break
		}
	}
	t.stats.Events += events
	// done may hold ends past the horizon, from the last step; term
	// bounds them.
	for _, v := range done {
		obj += v
	}
	for _, tr := range f.judged {
		obj += t.term(tr, math.Inf(1), f.at)
	}
	return obj, f, nil
}

func jobOf(f *forced) int64 {
	if f.feat.Job == nil {
		return -1
	}
	return f.feat.Job.ID
}

// term is one judged job's part of a branch's objective, for a job that
// ended at end (+Inf: not by the horizon) after a decision at.
func (t *trajectory) term(tr tracked, end, at float64) float64 {
	horizon := at + t.opts.Horizon
	if t.opts.Objective == ObjectiveSLO {
		if min(end, horizon) > tr.deadline { // late, or not done by a deadline the horizon passed
			return 1
		}
		return 0
	}
	return min(end, horizon) - at
}

// probe plays decision d, in main's next step, both ways; ok is false for
// a near tie.
func (t *trajectory) probe(main *runner, d decision) (Point, bool, error) {
	t.stats.Probes++
	move, fm, err := t.branch(main, d, true)
	if err != nil {
		return Point{}, false, err
	}
	stay, fs, err := t.branch(main, d, false)
	if err != nil {
		return Point{}, false, err
	}
	if fs.at != fm.at {
		return Point{}, false, fmt.Errorf("the branches' decisions about job %d came at %v and %v", d.job, fm.at, fs.at)
	}
	if math.Abs(move-stay) <= t.opts.Tie*max(move, stay) {
		t.stats.Ties++
		return Point{}, false, nil
	}
	return Point{
		Pass: t.pass, Segment: t.segment, Time: fm.at, JobID: d.job, From: int32(fm.feat.From), To: int32(fm.feat.To),
		Features: fm.vec, Gain: fm.feat.Gain(), Judged: int32(fm.n),
		Stay: stay, Move: move, Migrate: move < stay,
	}, true, nil
}
