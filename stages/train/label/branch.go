package label

import (
	"fmt"
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Judge is how a fork's two branches are judged: over what horizon, and on
// which jobs (see the package doc).
type Judge struct {
	// Horizon bounds the judgement, seconds of simulated time after the
	// decision.
	Horizon float64
	// Arrivals judges the jobs that arrive after the decision and no
	// later than the horizon as well as those in the system at it, up
	// to the moment the branches meet again.
	Arrivals bool
}

// Verdict is a fork's two branches judged one way.
type Verdict struct {
	// Stay and Move are the branches' objectives.
	Stay, Move float64
	// Judged is how many jobs they were judged on.
	Judged int32
	// Tie says the branches differ by no more than Options.Tie of the
	// larger objective: no label.
	Tie bool
	// Migrate is the label where there is one: moving did better.
	Migrate bool
}

// tally is one judgement of one branch, kept as the branch runs.
type tally struct {
	Judge
	slo     bool
	at, end float64 // the decision and the horizon
	// open are the judged jobs not done by the horizon so far, n how
	// many jobs were judged, and sum the terms of those done, in the
	// order they ended.
	open map[int64]tracked
	n    int32
	sum  float64
}

// newTally starts judging at the decision at, with live the jobs the
// branch holds then: those arrived and not done, and the next arrival,
// which the simulation reads ahead.
func newTally(j Judge, objective string, at float64, live map[int64]tracked) *tally {
	k := &tally{Judge: j, slo: objective == ObjectiveSLO, at: at, end: at + j.Horizon, open: map[int64]tracked{}}
	for id, tr := range live {
		if tr.arrival <= at {
			k.add(id, tr)
		} else {
			k.arrive(id, tr)
		}
	}
	return k
}

func (k *tally) add(id int64, tr tracked) {
	k.open[id] = tr
	k.n++
}

// arrive judges a job that arrives after the decision, if the judgement
// counts arrivals and the job comes no later than the horizon.
func (k *tally) arrive(id int64, tr tracked) {
	if k.Arrivals && tr.arrival <= k.end {
		k.add(id, tr)
	}
}

// done counts a judged job that ended at end, if it did so by the
// horizon; one that ended later stays open, as not done by the horizon.
func (k *tally) done(id int64, end float64) {
	if tr, ok := k.open[id]; ok && end <= k.end {
		k.sum += k.term(tr, end)
		delete(k.open, id)
	}
}

// running says whether the branch must run on for this judgement, at
// time now, with next the arrival time of the first job the branch has
// not been handed yet: until the horizon, or until no judged job is left
// and no job that would be judged can still arrive. (The simulation reads
// one job ahead, and a job read is judged already if it counts; next
// covers the jobs after it.)
func (k *tally) running(now, next float64) bool {
	return now <= k.end && (len(k.open) > 0 || k.Arrivals && next <= k.end)
}

// objective is the judgement's objective once the branch has stopped:
// the done jobs' terms, then those of the jobs not done by the horizon in
// the order of their ids (a sum in map order would differ in its last
// bits from run to run).
func (k *tally) objective() float64 {
	ids := make([]int64, 0, len(k.open))
	for id := range k.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	obj := k.sum
	for _, id := range ids {
		obj += k.term(k.open[id], math.Inf(1))
	}
	return obj
}

// term is one judged job's part of the objective, for a job that ended
// at end (+Inf: not by the horizon): under ObjectiveLatency its time in
// the system from the later of the decision and its arrival to the
// earlier of its end and the horizon; under ObjectiveSLO 1 if it ended
// after its deadline or was not done by a deadline the horizon passed.
func (k *tally) term(tr tracked, end float64) float64 {
	if k.slo {
		if min(end, k.end) > tr.deadline {
			return 1
		}
		return 0
	}
	return min(end, k.end) - max(k.at, tr.arrival)
}

// forced is a branch's migration rule: the first skip decisions follow
// the behaviour rule, as in the scouted run; the next is take, noted with
// the state at that moment, when the judgements start; the rest follow
// the Threshold rule.
type forced struct {
	r         *runner
	skip      int32
	take      bool
	behaviour sim.Migrator
	rule      sim.Migrator
	judges    []Judge
	objective string
	fired     bool
	at        float64
	feat      sim.MigrationFeatures
	vec       [sim.NumFeatures]float32
	// tallies are the judgements, one per judge, from the decision on.
	tallies []*tally
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
	for _, j := range f.judges {
		f.tallies = append(f.tallies, newTally(j, f.objective, m.Now, f.r.live))
	}
	return f.take
}

// branch is one side of a fork.
type branch struct {
	r *runner
	f *forced
	// ended says the simulation has no event left.
	ended bool
}

// fork forks main, whose next step holds decision d, with d forced to
// take, and steps the fork through the decision, where its judgements
// start.
func (t *trajectory) fork(main *runner, d decision, take bool, judges []Judge) (*branch, error) {
	r := &runner{live: make(map[int64]tracked, len(main.live)), next: main.next}
	for id, tr := range main.live {
		r.live[id] = tr
	}
	f := &forced{r: r, skip: d.ordinal, take: take, behaviour: t.behaviour, rule: t.rule, judges: judges, objective: t.opts.Objective}
	r.fed = func(id int64, tr tracked) {
		for _, k := range f.tallies {
			k.arrive(id, tr)
		}
	}
	emit := func(rec *sim.Record) error {
		delete(r.live, rec.Job.ID)
		for _, k := range f.tallies {
			k.done(rec.Job.ID, rec.End)
		}
		return nil
	}
	var err error
	if r.s, err = main.s.Fork(t.feeder(r), emit, f); err != nil {
		return nil, err
	}
	more, err := r.s.Step()
	if err != nil {
		return nil, err
	}
	t.stats.Events++
	if !f.fired || f.feat.Job.ID != d.job {
		return nil, fmt.Errorf("a fork before step %d did not reproduce the scouted decision about job %d (fired %v, job %d)",
			d.step, d.job, f.fired, jobOf(f))
	}
	return &branch{r: r, f: f, ended: !more}, nil
}

// running says whether a judgement needs the branch to run on.
func (t *trajectory) running(b *branch) bool {
	if b.ended {
		return false
	}
	next := math.Inf(1)
	if b.r.next < len(t.jobs) {
		next = t.jobs[b.r.next].Arrival
	}
	now := b.r.s.Now()
	return slices.ContainsFunc(b.f.tallies, func(k *tally) bool { return k.running(now, next) })
}

// idle says whether the branch's system is empty: the jobs it holds, at
// most the one the simulation reads ahead, have yet to arrive. If so,
// next is when the next job arrives (+Inf: none will).
func (b *branch) idle() (ok bool, next float64) {
	switch len(b.r.live) {
	case 0:
		return true, math.Inf(1)
	case 1:
		for _, tr := range b.r.live {
			return tr.arrival > b.r.s.Now(), tr.arrival
		}
	}
	return false, 0
}

// met says whether the branches are in the same state: both idle, with
// the same job to arrive next. From then on they run alike, since they
// are handed the same jobs with the same service times and decide by
// their state alone (the Threshold rule, edf's order, the predicted
// earliest finish).
func met(a, b *branch) bool {
	if a.r.next != b.r.next {
		return false
	}
	ia, _ := a.idle()
	ib, _ := b.idle()
	return ia && ib
}

// play runs a fork's two branches until no judgement needs more. With a
// judgement that counts arrivals it runs them in step, the one behind in
// simulated time first, and stops when they meet (met): every job that
// arrived before is done in both, and the jobs still to come would add
// the same to both objectives, so they are left out (settle). An idle
// branch does not run past its next arrival while the other is behind
// it, so the first moment both are idle is not stepped over.
func (t *trajectory) play(move, stay *branch, arrivals bool) error {
	for {
		mr, sr := t.running(move), t.running(stay)
		if !mr && !sr {
			return nil
		}
		if arrivals && met(move, stay) {
			settle(move, stay)
			return nil
		}
		b, o, or := move, stay, sr
		if !mr || sr && stay.r.s.Now() < move.r.s.Now() {
			b, o, or = stay, move, mr
		}
		if idle, next := b.idle(); arrivals && idle && or && o.r.s.Now() < next {
			b = o
		}
		more, err := b.r.s.Step()
		if err != nil {
			return err
		}
		t.stats.Events++
		b.ended = !more
	}
}

// settle stops judging the jobs that have not arrived in met branches:
// they would run alike in both.
func settle(a, b *branch) {
	for _, br := range []*branch{a, b} {
		now := max(a.r.s.Now(), b.r.s.Now())
		for _, k := range br.f.tallies {
			for id, tr := range k.open {
				if tr.arrival > now {
					delete(k.open, id)
					k.n--
				}
			}
		}
	}
}

func jobOf(f *forced) int64 {
	if f.feat.Job == nil {
		return -1
	}
	return f.feat.Job.ID
}

// verdict judges a fork from its branches' tallies.
func (t *trajectory) verdict(move, stay *tally) Verdict {
	m, s := move.objective(), stay.objective()
	v := Verdict{Stay: s, Move: m, Judged: move.n, Migrate: m < s}
	if math.Abs(m-s) <= t.opts.Tie*max(m, s) {
		v.Tie, v.Migrate = true, false
	}
	return v
}

// probe plays decision d, in main's next step, both ways, and judges it as
// the options say and, if compare, under each of Options.Alternatives too;
// ok is false for a near tie under the options.
func (t *trajectory) probe(main *runner, d decision, compare bool) (Point, bool, error) {
	t.stats.Probes++
	judges := []Judge{{Horizon: t.opts.Horizon, Arrivals: t.opts.Arrivals}}
	if compare {
		judges = append(judges, t.opts.Alternatives...)
	}
	move, err := t.fork(main, d, true, judges)
	if err != nil {
		return Point{}, false, err
	}
	stay, err := t.fork(main, d, false, judges)
	if err != nil {
		return Point{}, false, err
	}
	fm, fs := move.f, stay.f
	if fs.at != fm.at {
		return Point{}, false, fmt.Errorf("the branches' decisions about job %d came at %v and %v", d.job, fm.at, fs.at)
	}
	if err := t.play(move, stay, slices.ContainsFunc(judges, func(j Judge) bool { return j.Arrivals })); err != nil {
		return Point{}, false, err
	}
	for k := range judges {
		if fm.tallies[k].n != fs.tallies[k].n {
			return Point{}, false, fmt.Errorf("the branches of the decision about job %d at %v judged %d and %d jobs", d.job, fm.at, fm.tallies[k].n, fs.tallies[k].n)
		}
	}
	v := t.verdict(fm.tallies[0], fs.tallies[0])
	if v.Tie {
		t.stats.Ties++
		return Point{}, false, nil
	}
	p := Point{
		Pass: t.pass, Segment: t.segment, Time: fm.at, JobID: d.job, From: int32(fm.feat.From), To: int32(fm.feat.To),
		Features: fm.vec, Gain: fm.feat.Gain(), Judged: v.Judged,
		Stay: v.Stay, Move: v.Move, Migrate: v.Migrate,
	}
	for k := 1; k < len(judges); k++ {
		p.Alternatives = append(p.Alternatives, t.verdict(fm.tallies[k], fs.tallies[k]))
	}
	return p, true, nil
}
