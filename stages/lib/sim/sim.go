package sim

import (
	"errors"
	"fmt"
	"math"
)

// Service is the ground truth and the predictions the simulator runs on.
// Its answers depend on their arguments alone (Time's on its variate u):
// the simulator may keep one rather than ask again.
type Service interface {
	// Time is the work of running a batch of a model alone on device d at
	// speed 1 (the profiled device that d's times come from): the u-quantile
	// (u in [0, 1)) of its measured latency, seconds. The simulator divides
	// by the device's Speed.
	Time(d int, model, precision, batch int32, u float64) float64
	// Predict is the expected Time, which policies may use; the simulator
	// itself never does.
	Predict(d int, model, precision, batch int32) float64
	// Memory is what a running batch holds on its device.
	Memory(model, precision, batch int32) float64
	// Contention is the slowdown of each of k lanes of device d running at
	// once, relative to one alone (1 for k <= 1).
	Contention(d, k int) float64
}

// Config is one simulation.
type Config struct {
	Devices []Device
	Service Service
	Policy  Policy
	// Placement, if not nil, places arriving jobs instead of the policy's
	// own Placer: a queue order run with another placement (a policy
	// spec's @placement). A Placement with state must be forkable, as a
	// policy must (PolicyForker).
	Placement Placer
	// Predictor is what the policies, the backlogs and the predicted ends
	// of running batches take service times from; nil is the Service's
	// own Predict, the mean of the ground truth: an oracle.
	Predictor Predictor
	// PredictionError, if positive, scales every prediction about a job
	// by 1 + PredictionError·(2v − 1), with v uniform in [0, 1) and keyed
	// to Seed and the job (PredictionVariate): the same job is
	// mispredicted the same way on every device and under every policy.
	PredictionError float64
	// Seed keys every ground-truth draw: a batch's uniform variate is a
	// hash of Seed and its lead job (Variate). Simulations of the same
	// jobs with the same Seed share their draws whatever the policy.
	Seed uint64
	// Batching, Split and Migration are off at their zero values.
	Batching  Batching
	Split     Split
	Migration Migration
	// OnBatch, if not nil, receives each batch as it ends, before the
	// records of its jobs; the record is reused once OnBatch returns.
	OnBatch func(*BatchRecord) error
	// Machine, if not nil, runs the batches for real on its clock
	// instead of drawing their times from the Service (Machine).
	Machine Machine
}

// Stats counts what a run did.
type Stats struct {
	Jobs, Rejected int64
	Events         int64
	// Batches counts the batches run, Migrations the moves, Splits the jobs
	// run in parts.
	Batches, Migrations, Splits int64
	// Decisions counts the migration decisions asked, DecisionBatches
	// the batches they were sent in (Migration.Latency; 0 without).
	Decisions, DecisionBatches int64
	// Makespan is the end of the last job (0 if none ran).
	Makespan float64
}

// Run simulates jobs, which next returns in arrival order (ok false at the
// end), and hands every job's record to emit in completion order; the
// record is reused once emit returns, so emit copies what it keeps. A job
// arriving before its predecessor is an error, as is an invalid cluster.
func Run(cfg Config, next func() (*Job, bool), emit func(*Record) error) (Stats, error) {
	m, err := New(cfg, next, emit)
	if err != nil {
		return Stats{}, err
	}
	return m.Run()
}

// Sim is one simulation driven an event at a time, for a caller that looks
// at it between events or forks it (Fork) to play out alternatives; Run is
// New and Sim.Run.
type Sim struct {
	state *State
	next  func() (*Job, bool)
	// pending is the next arrival, read from next ahead of its time; more
	// is false once next has ended.
	pending *Job
	more    bool
	last    float64 // the latest arrival so far
}

// New prepares the simulation that Run(cfg, next, emit) runs, and reads
// its first job from next.
func New(cfg Config, next func() (*Job, bool), emit func(*Record) error) (*Sim, error) {
	s, err := newState(cfg)
	if err != nil {
		return nil, err
	}
	s.emit = emit
	m := &Sim{state: s, next: next, last: math.Inf(-1)}
	m.pending, m.more = next()
	return m, nil
}

// Run simulates to the end and returns what the whole run did.
func (m *Sim) Run() (Stats, error) {
	for {
		if more, err := m.Step(); err != nil || !more {
			return m.state.stats, err
		}
	}
}

// Now is the current virtual time: that of the last event handled.
func (m *Sim) Now() float64 { return m.state.now }

// Stats counts what the simulation has done so far.
func (m *Sim) Stats() Stats { return m.state.stats }

// State is the simulation as its policies see it, for a caller to look at
// between steps.
func (m *Sim) State() *State { return m.state }

// SetOnBatch replaces Config.OnBatch: how a caller hears of a fork's
// batches, which Fork does not send to the original's.
func (m *Sim) SetOnBatch(f func(*BatchRecord) error) { m.state.cfg.OnBatch = f }

func newState(cfg Config) (*State, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("sim: no devices")
	}
	if cfg.Service == nil || cfg.Policy == nil {
		return nil, errors.New("sim: no service model or no policy")
	}
	name := cfg.Policy.Name()
	placer, ok := cfg.Policy.(Placer)
	if cfg.Placement != nil {
		placer, ok = cfg.Placement, true
	}
	if !ok {
		return nil, fmt.Errorf("sim: policy %s does not place jobs", name)
	}
	s := &State{cfg: cfg, placer: placer}
	s.picker, _ = cfg.Policy.(GroupPicker)
	if s.picker == nil {
		s.ranker, _ = cfg.Policy.(Ranker)
	}
	if so, ok := cfg.Policy.(StrictOrder); ok {
		s.strict = so.StrictOrder()
	}
	b := cfg.Batching
	if b.MaxBatch < 0 || !(b.Window >= 0) || math.IsInf(b.Window, 0) {
		return nil, fmt.Errorf("sim: batching: want max batch >= 0 and a finite window >= 0, got %d and %v", b.MaxBatch, b.Window)
	}
	s.batching = b.MaxBatch > 1
	s.grouped = s.batching || s.picker != nil
	if m := cfg.Migration; m.Latency != nil && (m.Batch < 1 || !(m.Window >= 0) || math.IsInf(m.Window, 0)) {
		return nil, fmt.Errorf("sim: migration: want a batch of at least 1 and a finite window >= 0, got %d and %v", m.Batch, m.Window)
	}
	if e := cfg.PredictionError; !(e >= 0 && e < 1) {
		return nil, fmt.Errorf("sim: prediction error %v: want a share in [0, 1)", e)
	}
	if cfg.Split.MinBatch < 0 {
		return nil, fmt.Errorf("sim: split: want min batch >= 0, got %d", cfg.Split.MinBatch)
	}
	if cfg.Split.MinBatch > 0 {
		if s.splitter, ok = cfg.Policy.(Splitter); !ok {
			return nil, fmt.Errorf("sim: policy %s does not split jobs", name)
		}
	}
	if c := cfg.Migration.Cost; !(c >= 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("sim: migration: want a finite cost >= 0, got %v", c)
	}
	var lanes []int
	for i, d := range cfg.Devices {
		if d.Lanes < 1 || !(d.Speed > 0) || !(d.Memory > 0) || math.IsInf(d.Speed, 0) {
			return nil, fmt.Errorf("sim: device %d (%s): want lanes >= 1, speed > 0 and memory > 0, got %d, %v, %v", i, d.Name, d.Lanes, d.Speed, d.Memory)
		}
		ds := deviceState{Device: d, lanes: make([]lane, d.Lanes), rate: d.Speed, timer: math.Inf(1), rates: make([]float64, d.Lanes+1)}
		for k := range ds.rates {
			if cfg.Machine != nil {
				break // a real run's batches end when they have run: no rates (retime)
			}
			ds.rates[k] = d.Speed / max(1, cfg.Service.Contention(i, k))
		}
		ds.queue.init(s.ranker)
		if s.grouped {
			ds.groups = map[kind]*group{}
		}
		s.devs = append(s.devs, ds)
		lanes = append(lanes, d.Lanes)
	}
	s.slot = s.events.init(lanes)
	return s, nil
}

// Step handles the next event, one iteration of Run: the earliest batch
// end or batching timer, else the earliest moved job reaching its device,
// else the next arrival. It returns false, having done nothing, once no
// event is left. The first error (the emitter's, a policy's, or a job
// arriving out of order) stops the simulation: Step returns it, and
// returns it again if called again.
func (m *Sim) Step() (more bool, err error) {
	s := m.state
	if s.err != nil {
		return false, s.err
	}
	tArr := math.Inf(1)
	if m.more {
		tArr = m.pending.Arrival
	}
	tIn := math.Inf(1)
	if s.tHead < len(s.transit) {
		tIn = s.transit[s.tHead].at
	}
	tLand, tSend := math.Inf(1), math.Inf(1)
	if len(s.flights) > 0 {
		tLand = s.flights[0].at
	}
	if len(s.asked) > 0 {
		tSend = s.askedAt + s.cfg.Migration.Window
	}
	if s.cfg.Machine != nil {
		t := min(tArr, tIn, tLand, tSend)
		if e, ok := s.events.next(); ok {
			t = min(t, s.events.slots[e].time)
		}
		if m.waitReal(t) {
			return m.sent()
		}
	}
	first, pending := s.events.next()
	switch {
	case pending && s.events.slots[first].time <= min(tArr, tIn, tLand, tSend):
		e := s.events.pop()
		d, lane := int(e.dev), int(e.lane)
		s.now = s.at(e.time)
		s.stats.Events++
		if lane < 0 {
			s.fire(d)
		} else {
			s.complete(d, lane, s.now)
		}
	case len(s.flights) > 0 && tLand <= min(tArr, tIn, tSend):
		s.now = s.at(tLand)
		s.stats.Events++
		s.land()
	case len(s.asked) > 0 && tSend <= min(tArr, tIn):
		s.now = s.at(tSend)
		s.stats.Events++
		s.send()
	case tIn <= tArr && s.tHead < len(s.transit):
		t := s.transit[s.tHead]
		s.transit[s.tHead] = transfer{}
		if s.tHead++; s.tHead == len(s.transit) {
			s.transit, s.tHead = s.transit[:0], 0
		}
		s.now = s.at(t.at)
		s.stats.Events++
		ds := &s.devs[t.dev]
		ds.inbound--
		ds.inMem -= s.memory(t.job)
		if ds.inbound == 0 {
			ds.inMem = 0
		}
		s.enqueue(t.dev, t.job)
		s.dispatch(t.dev)
	case m.more:
		j := m.pending
		if !(j.Arrival >= m.last) || math.IsNaN(j.Arrival) {
			s.fail(fmt.Errorf("sim: job %d arrives at %v, before the job before it (%v)", j.ID, j.Arrival, m.last))
			return false, s.err
		}
		m.last = j.Arrival
		s.now = s.at(j.Arrival)
		s.stats.Events++
		s.arrive(j)
		m.pending, m.more = m.next()
	default:
		return false, nil
	}
	return m.sent()
}

// sent ends a step: the decisions its event asked go together.
func (m *Sim) sent() (more bool, err error) {
	s := m.state
	if len(s.asked) > 0 && s.cfg.Migration.Window == 0 {
		s.send()
	}
	return s.err == nil, s.err
}

// memory is what job j's own batch holds: kept since its arrival, asked of
// the Service for a part of a split job.
func (s *State) memory(j *Job) float64 {
	if j.hasMem {
		return j.mem
	}
	return s.cfg.Service.Memory(j.Model, j.Precision, j.Batch)
}

// arrive places a job, or its parts, and lets the devices start work.
func (s *State) arrive(j *Job) {
	s.stats.Jobs++
	j.stamp, j.migrated, j.deciding, j.split, j.predOn = 0, false, false, nil, 0
	need := s.cfg.Service.Memory(j.Model, j.Precision, j.Batch)
	j.mem, j.hasMem = need, true
	fits := false
	for i := range s.devs {
		if need <= s.devs[i].Memory {
			fits = true
			break
		}
	}
	if !fits {
		s.stats.Rejected++
		s.record(&Record{Job: j, Device: -1, Lane: -1, Start: s.now, End: s.now,
			Reason: fmt.Sprintf("needs %g memory, more than any device holds", need)})
		return
	}
	if s.splitter != nil && j.Batch >= s.cfg.Split.MinBatch && s.arriveSplit(j) {
		return
	}
	d := s.placer.Place(j, s)
	if d < 0 || d >= len(s.devs) || need > s.devs[d].Memory {
		// A policy that ignores memory must not strand a job forever: take
		// the first device that can hold it.
		for i := range s.devs {
			if need <= s.devs[i].Memory {
				d = i
				break
			}
		}
	}
	s.enqueue(d, j)
	s.dispatch(d)
	if s.devs[d].waiting > 0 {
		s.stealAll()
	}
}

func (s *State) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// enqueue adds j to device d's waiting jobs.
func (s *State) enqueue(d int, j *Job) {
	ds := &s.devs[d]
	s.stamps++
	j.stamp = s.stamps
	e := entry{job: j, stamp: j.stamp}
	ds.waiting++
	j.pred, j.predOn = s.predict(d, j, j.Batch), int32(d)+1
	ds.queued += j.pred
	if s.picker == nil {
		ds.queue.push(e)
	}
	if s.grouped {
		g := ds.groups[kindOf(j)]
		if g == nil {
			g = &group{pos: -1}
			ds.groups[kindOf(j)] = g
		}
		g.entries = append(g.entries, e)
		g.jobs++
		g.samples += int64(j.Batch)
		if g.pos < 0 {
			g.pos = len(ds.active)
			ds.active = append(ds.active, g)
		}
	}
}

// take removes waiting job j from device d.
func (s *State) take(d int, j *Job) {
	ds := &s.devs[d]
	j.stamp = 0
	ds.waiting--
	ds.queued -= s.predictOwn(d, j)
	if ds.waiting == 0 {
		ds.queued = 0 // no drift from float sums
		ds.queue.reset()
	}
	if s.grouped {
		g := ds.groups[kindOf(j)]
		g.jobs--
		g.samples -= int64(j.Batch)
		if g.jobs == 0 {
			// Every entry left is stale: empty the group and let the
			// last active group take its place.
			clear(g.entries)
			g.entries, g.head = g.entries[:0], 0
			last := ds.active[len(ds.active)-1]
			ds.active[g.pos] = last
			last.pos = g.pos
			ds.active[len(ds.active)-1] = nil
			ds.active = ds.active[:len(ds.active)-1]
			g.pos = -1
		}
	}
}

// peek returns the job device d would start next among those fits
// accepts, leaving it queued, or nil.
func (s *State) peek(d int, fits func(*Job) bool) *Job {
	ds := &s.devs[d]
	if ds.waiting == 0 {
		return nil
	}
	if s.picker == nil {
		return ds.queue.peek(fits, s.strict)
	}
	s.views, s.viewOf = s.views[:0], s.viewOf[:0]
	for _, g := range ds.active {
		if h := g.first(); fits(h) {
			s.views = append(s.views, Group{Head: h, Jobs: g.jobs, Samples: g.samples})
			s.viewOf = append(s.viewOf, g)
		}
	}
	if len(s.views) == 0 {
		return nil
	}
	i := s.picker.Pick(d, s.views, s)
	if i < 0 || i >= len(s.views) {
		return nil
	}
	return s.views[i].Head
}

// dispatch starts batches of queued jobs on idle lanes of device d while
// they fit and are not held for their batching window.
func (s *State) dispatch(d int) {
	ds := &s.devs[d]
	for ds.busy < ds.Lanes && ds.waiting > 0 {
		free := ds.Memory - ds.memUsed
		h := s.peek(d, func(j *Job) bool { return s.memory(j) <= free })
		if h == nil {
			return // nothing fits until a running job ends
		}
		samples := s.gather(d, h, free)
		if s.batching && samples < s.cfg.Batching.MaxBatch {
			if at := s.oldest(d) + s.cfg.Batching.Window; s.now < at {
				s.setTimer(d, at)
				return
			}
		}
		s.start(d, samples)
	}
	if ds.busy < ds.Lanes && ds.waiting == 0 {
		s.steal(d)
	}
}

// start runs the batch in s.members, of the given samples, on an idle lane
// of device d.
func (s *State) start(d int, samples int32) {
	ds := &s.devs[d]
	s.settle(ds)
	i := 0
	for len(ds.lanes[i].jobs) > 0 {
		i++
	}
	h := s.members[0]
	r := &ds.lanes[i]
	for _, j := range s.members {
		s.take(d, j)
		r.jobs = append(r.jobs, j)
		if j.split != nil {
			j.split.start = min(j.split.start, s.now)
		}
	}
	s.stats.Batches++
	r.batch, r.samples, r.start = s.stats.Batches, samples, s.now
	part := -1 // a whole job; a part of a split job is told by its device
	if h.split != nil {
		part = d
	}
	pred := s.predictOwn(d, h)
	r.memory = s.memory(h)
	if samples != h.Batch {
		pred = s.predict(d, h, samples)
		r.memory = s.cfg.Service.Memory(h.Model, h.Precision, samples)
	}
	r.predEnd = s.now + pred/ds.Speed
	ds.memUsed += r.memory
	ds.busy++
	if x := s.cfg.Machine; x != nil {
		s.fail(x.Start(d, i, r.jobs, samples))
		return
	}
	r.remaining = s.cfg.Service.Time(d, h.Model, h.Precision, samples, Variate(s.cfg.Seed, h.ID, part))
	s.retime(d, i)
}

// complete ends the batch running on lane i of device d, which ended at
// end: now in a simulation, and up to now with a Machine.
func (s *State) complete(d, i int, end float64) {
	ds := &s.devs[d]
	r := &ds.lanes[i]
	s.settle(ds)
	if s.cfg.OnBatch != nil && s.err == nil {
		h := r.jobs[0]
		s.batch = BatchRecord{Device: int32(d), Lane: int32(i), BatchID: r.batch, Model: h.Model, Precision: h.Precision,
			Jobs: int32(len(r.jobs)), Samples: r.samples, Memory: r.memory, Start: r.start, End: end}
		s.fail(s.cfg.OnBatch(&s.batch))
	}
	rec := &s.rec
	for _, j := range r.jobs {
		*rec = Record{Job: j, Device: int32(d), Lane: int32(i), BatchID: r.batch, BatchSize: r.samples,
			Start: r.start, End: end, Migrated: j.migrated, SplitParts: 1}
		if sp := j.split; sp != nil {
			sp.migrated = sp.migrated || j.migrated
			*j = Job{}
			s.freeJobs = append(s.freeJobs, j)
			if sp.left--; sp.left > 0 {
				continue
			}
			rec.Job, rec.Start, rec.Migrated, rec.SplitParts = sp.parent, sp.start, sp.migrated, sp.parts
		}
		s.record(rec)
	}
	clear(r.jobs)
	r.jobs = r.jobs[:0]
	ds.memUsed -= r.memory
	ds.busy--
	if ds.busy == 0 {
		ds.memUsed = 0
	}
	s.retime(d, -1)
	s.dispatch(d)
}

func (s *State) record(r *Record) {
	if r.End > s.stats.Makespan && !r.Rejected() {
		s.stats.Makespan = r.End
	}
	if s.err == nil {
		s.err = s.emit(r)
	}
}
