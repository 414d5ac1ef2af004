package sim

import (
	"errors"
	"fmt"
	"math"
)

// Class is a job's service class.
type Class uint8

// The job classes.
const (
	Interactive Class = iota
	Batch
)

// Job is one request as the simulator sees it. Model and Precision index the
// caller's lists; the simulator only passes them to the Service model.
type Job struct {
	ID        int64
	Arrival   float64 // seconds
	Deadline  float64 // seconds; the SLO is met when the job ends by then
	Class     Class
	Model     int32
	Precision int32
	Batch     int32

	// The simulator's bookkeeping, reset when the job arrives.
	stamp    uint64 // of its live queue entries; 0 when not waiting
	migrated bool
	split    *split // on the parts of a split job
}

// split is a job run as parts on several devices.
type split struct {
	parent   *Job
	parts    int32
	left     int32   // parts not yet ended
	start    float64 // the earliest part's start
	migrated bool    // some part moved
}

// Device is one device of the virtual cluster.
type Device struct {
	Name string
	// Lanes is the number of batches the device runs at once (at least 1).
	Lanes int
	// Memory is the device's capacity in the Service model's memory units.
	Memory float64
	// Speed scales the profiled device's times: 2 runs twice as fast.
	Speed float64
}

// Service is the ground truth and the predictions the simulator runs on.
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

// Record is what happened to one job.
type Record struct {
	Job    *Job
	Device int32 // -1 when rejected
	Lane   int32
	// BatchID numbers the batches the simulator started, from 1; BatchSize
	// is the samples in the batch the job ran in: its own, or a micro-batch's.
	BatchID   int64
	BatchSize int32
	Start     float64
	End       float64
	// Migrated is true when the job (or a part of it) moved between device
	// queues before it ran.
	Migrated bool
	// SplitParts is the number of parts the job ran as: 1 when whole, 0
	// when rejected. A split job's Device, Lane, BatchID, BatchSize and End
	// are those of its last part to end, Start that of its first to start.
	SplitParts int32
	Reason     string // why a rejected job ran nowhere
}

// Rejected reports whether the job fit on no device.
func (r *Record) Rejected() bool { return r.Device < 0 }

// BatchRecord is one batch run on one lane.
type BatchRecord struct {
	Device, Lane     int32
	BatchID          int64
	Model, Precision int32
	// Jobs is the number of jobs (or parts) in the batch, Samples their
	// samples.
	Jobs, Samples int32
	Memory        float64
	Start, End    float64
}

// Config is one simulation.
type Config struct {
	Devices []Device
	Service Service
	Policy  Policy
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
}

// Batching merges compatible waiting jobs (same model, precision and class)
// of a device into one batch, which runs for the time measured at the
// merged size.
type Batching struct {
	// MaxBatch is the most samples a merged batch holds; 0 or 1 is off. A
	// job larger than MaxBatch runs alone.
	MaxBatch int32
	// Window is how long an idle lane holds a batch short of MaxBatch for
	// more jobs to join, counted from the arrival of the oldest job waiting
	// on the device; meanwhile the device starts nothing else. 0 merges
	// only the jobs already waiting.
	Window float64
}

// Split divides jobs of at least MinBatch samples across devices as the
// policy's Splitter says; 0 is off.
type Split struct {
	MinBatch int32
}

// Migration lets a device with an idle lane and nothing waiting take the
// job another device would start next, when Decide says so.
type Migration struct {
	Decide Migrator // nil is off
	// Cost is the time a moved job spends in transit, seconds.
	Cost float64
}

// Stats counts what a run did.
type Stats struct {
	Jobs, Rejected int64
	Events         int64
	// Batches counts the batches run, Migrations the moves, Splits the jobs
	// run in parts.
	Batches, Migrations, Splits int64
	// Makespan is the end of the last job (0 if none ran).
	Makespan float64
}

// lane is one execution stream of a device.
type lane struct {
	jobs      []*Job // the batch running; empty when idle
	batch     int64
	samples   int32
	start     float64
	remaining float64 // work left, in seconds at rate 1
	memory    float64
	predEnd   float64
}

type deviceState struct {
	Device
	lanes   []lane
	busy    int
	memUsed float64
	settled float64 // time up to which remaining work is accounted
	rate    float64 // progress rate of each busy lane
	queue   queue   // waiting jobs in the policy's order (no GroupPicker)
	groups  map[kind]*group
	active  []*group // groups with jobs waiting
	waiting int      // jobs waiting
	queued  float64  // their predicted work, seconds at rate 1
	inbound int      // jobs in transit to the device
	inMem   float64  // their memory, reserved
	timer   float64  // when the pending batching timer fires; +Inf if none
}

// transfer is a migrating job in transit.
type transfer struct {
	at  float64
	dev int
	job *Job
}

// Run simulates jobs, which next returns in arrival order (ok false at the
// end), and hands every job's record to emit in completion order; the
// record is reused once emit returns, so emit copies what it keeps. A job
// arriving before its predecessor is an error, as is an invalid cluster.
func Run(cfg Config, next func() (*Job, bool), emit func(*Record) error) (Stats, error) {
	s, err := newState(cfg)
	if err != nil {
		return Stats{}, err
	}
	return s.run(next, emit)
}

// State is the simulation as a policy sees it.
type State struct {
	cfg      Config
	devs     []deviceState
	events   timers
	slot     []int32 // device d's timer slot; its lane i is slot[d]+1+i
	seq      uint64
	stamps   uint64
	now      float64
	ranker   Ranker
	strict   bool
	placer   Placer
	picker   GroupPicker
	splitter Splitter
	batching bool
	grouped  bool // devices keep groups: batching or a GroupPicker
	transit  []transfer
	tHead    int
	stats    Stats
	emit     func(*Record) error
	err      error
	rec      Record      // the record being emitted
	batch    BatchRecord // the batch being emitted
	feat     MigrationFeatures
	members  []*Job  // the batch being formed
	views    []Group // the groups offered to a GroupPicker
	viewOf   []*group
	freeJobs []*Job // parts of split jobs, for reuse
}

func newState(cfg Config) (*State, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("sim: no devices")
	}
	if cfg.Service == nil || cfg.Policy == nil {
		return nil, errors.New("sim: no service model or no policy")
	}
	name := cfg.Policy.Name()
	placer, ok := cfg.Policy.(Placer)
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
		ds := deviceState{Device: d, lanes: make([]lane, d.Lanes), rate: d.Speed, timer: math.Inf(1)}
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

func (s *State) run(next func() (*Job, bool), emit func(*Record) error) (Stats, error) {
	s.emit = emit
	pending, more := next()
	last := math.Inf(-1)
	for {
		tArr := math.Inf(1)
		if more {
			tArr = pending.Arrival
		}
		tIn := math.Inf(1)
		if s.tHead < len(s.transit) {
			tIn = s.transit[s.tHead].at
		}
		switch {
		case len(s.events.heap) > 0 && s.events.slots[s.events.heap[0]].time <= min(tArr, tIn):
			e := s.events.pop()
			d, lane := int(e.dev), int(e.lane)
			s.now = e.time
			s.stats.Events++
			if lane < 0 {
				s.fire(d)
			} else {
				s.complete(d, lane)
			}
		case tIn <= tArr && s.tHead < len(s.transit):
			t := s.transit[s.tHead]
			s.transit[s.tHead] = transfer{}
			if s.tHead++; s.tHead == len(s.transit) {
				s.transit, s.tHead = s.transit[:0], 0
			}
			s.now = t.at
			s.stats.Events++
			ds := &s.devs[t.dev]
			ds.inbound--
			ds.inMem -= s.memory(t.job)
			if ds.inbound == 0 {
				ds.inMem = 0
			}
			s.enqueue(t.dev, t.job)
			s.dispatch(t.dev)
		case more:
			if !(pending.Arrival >= last) || math.IsNaN(pending.Arrival) {
				return s.stats, fmt.Errorf("sim: job %d arrives at %v, before the job before it (%v)", pending.ID, pending.Arrival, last)
			}
			last = pending.Arrival
			s.now = pending.Arrival
			s.stats.Events++
			s.arrive(pending)
			pending, more = next()
		default:
			return s.stats, s.err
		}
		if s.err != nil {
			return s.stats, s.err
		}
	}
}

func (s *State) memory(j *Job) float64 {
	return s.cfg.Service.Memory(j.Model, j.Precision, j.Batch)
}

// arrive places a job, or its parts, and lets the devices start work.
func (s *State) arrive(j *Job) {
	s.stats.Jobs++
	j.stamp, j.migrated, j.split = 0, false, nil
	need := s.memory(j)
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

// arriveSplit runs j as parts if the Splitter divides it; false leaves j
// to be placed whole.
func (s *State) arriveSplit(j *Job) bool {
	sizes := s.splitter.Split(j, s)
	if len(sizes) != len(s.devs) {
		s.fail(fmt.Errorf("sim: policy %s split job %d over %d devices, want one size for each of %d", s.cfg.Policy.Name(), j.ID, len(sizes), len(s.devs)))
		return true
	}
	var sum, parts int32
	for d, b := range sizes {
		if b < 0 || (b > 0 && s.cfg.Service.Memory(j.Model, j.Precision, b) > s.devs[d].Memory) {
			s.fail(fmt.Errorf("sim: policy %s gave device %d a part of %d samples of job %d, which it cannot hold", s.cfg.Policy.Name(), d, b, j.ID))
			return true
		}
		sum += b
		if b > 0 {
			parts++
		}
	}
	if sum != j.Batch {
		s.fail(fmt.Errorf("sim: policy %s split job %d of %d samples into parts summing to %d", s.cfg.Policy.Name(), j.ID, j.Batch, sum))
		return true
	}
	if parts < 2 {
		return false
	}
	s.stats.Splits++
	sp := &split{parent: j, parts: parts, left: parts, start: math.Inf(1)}
	for d, b := range sizes {
		if b == 0 {
			continue
		}
		var p *Job
		if n := len(s.freeJobs); n > 0 {
			p, s.freeJobs = s.freeJobs[n-1], s.freeJobs[:n-1]
		} else {
			p = new(Job)
		}
		*p = Job{ID: j.ID, Arrival: j.Arrival, Deadline: j.Deadline, Class: j.Class, Model: j.Model, Precision: j.Precision, Batch: b, split: sp}
		s.enqueue(d, p)
	}
	for d, b := range sizes {
		if b > 0 {
			s.dispatch(d)
		}
	}
	s.stealAll()
	return true
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
	ds.queued += s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch)
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
	ds.queued -= s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch)
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

// gather forms the batch led by h on device d in s.members: h, then the
// oldest compatible jobs while the batch stays within MaxBatch samples and
// free memory. It returns the batch's samples.
func (s *State) gather(d int, h *Job, free float64) (samples int32) {
	s.members = append(s.members[:0], h)
	samples = h.Batch
	if !s.batching || h.Batch >= s.cfg.Batching.MaxBatch {
		return samples
	}
	g := s.devs[d].groups[kindOf(h)]
	g.first() // drop the stale entries in front
	for i := g.head; i < len(g.entries) && samples < s.cfg.Batching.MaxBatch; i++ {
		e := g.entries[i]
		if !e.live() || e.job == h {
			continue
		}
		b := samples + e.job.Batch
		if b > s.cfg.Batching.MaxBatch || s.cfg.Service.Memory(h.Model, h.Precision, b) > free {
			break
		}
		s.members = append(s.members, e.job)
		samples = b
	}
	return samples
}

// oldest is the earliest arrival among the jobs waiting on device d. A
// device holds a short batch only until that job has waited the window, so
// an idle device never waits longer for company, whichever batch its
// policy prefers meanwhile.
func (s *State) oldest(d int) float64 {
	t := math.Inf(1)
	for _, g := range s.devs[d].active {
		t = min(t, g.first().Arrival)
	}
	return t
}

// setTimer makes device d dispatch again at time at.
func (s *State) setTimer(d int, at float64) {
	ds := &s.devs[d]
	if ds.timer == at || ds.timer <= at && ds.timer > s.now {
		return // the timer set will look again, as soon or sooner
	}
	ds.timer = at
	s.seq++
	s.events.set(s.slot[d], at, s.seq)
}

// fire handles device d's batching timer.
func (s *State) fire(d int) {
	s.devs[d].timer = math.Inf(1)
	s.dispatch(d)
}

// Variate is the uniform variate in [0, 1) of the ground-truth draw of
// job id's batch when the job leads it (part -1), or of its part on device
// part when the job is split: a SplitMix64 hash of seed, id and part.
//
// Keying the draw to the job, not to the order of events, gives common
// random numbers: a job run alone at the same size takes the same
// quantile of its device's measured distribution under every policy, so a
// comparison between policies sees their scheduling, not their luck.
func Variate(seed uint64, id int64, part int) float64 {
	x := splitmix64(seed ^ splitmix64(uint64(id)) ^ splitmix64(uint64(part)+0x9e3779b97f4a7c15))
	return float64(x>>11) * 0x1p-53
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
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
	r.remaining = s.cfg.Service.Time(d, h.Model, h.Precision, samples, Variate(s.cfg.Seed, h.ID, part))
	r.memory = s.cfg.Service.Memory(h.Model, h.Precision, samples)
	r.predEnd = s.now + s.cfg.Service.Predict(d, h.Model, h.Precision, samples)/ds.Speed
	ds.memUsed += r.memory
	ds.busy++
	s.retime(d, i)
}

// complete ends the batch running on lane i of device d.
func (s *State) complete(d, i int) {
	ds := &s.devs[d]
	r := &ds.lanes[i]
	s.settle(ds)
	if s.cfg.OnBatch != nil && s.err == nil {
		h := r.jobs[0]
		s.batch = BatchRecord{Device: int32(d), Lane: int32(i), BatchID: r.batch, Model: h.Model, Precision: h.Precision,
			Jobs: int32(len(r.jobs)), Samples: r.samples, Memory: r.memory, Start: r.start, End: s.now}
		s.fail(s.cfg.OnBatch(&s.batch))
	}
	rec := &s.rec
	for _, j := range r.jobs {
		*rec = Record{Job: j, Device: int32(d), Lane: int32(i), BatchID: r.batch, BatchSize: r.samples,
			Start: r.start, End: s.now, Migrated: j.migrated, SplitParts: 1}
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

// stealAll lets every device with an idle lane and nothing waiting take
// work from the others.
func (s *State) stealAll() {
	if s.cfg.Migration.Decide == nil {
		return
	}
	for d := range s.devs {
		if ds := &s.devs[d]; ds.busy+ds.inbound < ds.Lanes && ds.waiting == 0 {
			s.steal(d)
		}
	}
}

// steal moves to device to, while it has a lane no job is bound for, the
// job that the device with the longest backlog would start next, as long
// as the Migrator agrees.
func (s *State) steal(to int) {
	m := s.cfg.Migration
	if m.Decide == nil {
		return
	}
	dst := &s.devs[to]
	for dst.busy+dst.inbound < dst.Lanes && dst.waiting == 0 {
		from, worst := -1, 0.0
		for d := range s.devs {
			if d == to || s.devs[d].waiting == 0 {
				continue
			}
			if b := s.Backlog(d); from < 0 || b > worst {
				from, worst = d, b
			}
		}
		if from < 0 {
			return
		}
		free := dst.Memory - dst.memUsed - dst.inMem
		j := s.peek(from, func(j *Job) bool { return s.memory(j) <= free })
		if j == nil {
			return
		}
		src := &s.devs[from]
		f := &s.feat
		*f = MigrationFeatures{
			Job: j, From: from, To: to,
			FromBusy: float64(src.busy) / float64(src.Lanes), ToBusy: float64(dst.busy) / float64(dst.Lanes),
			FromQueued: src.waiting, FromBacklog: worst, ToBacklog: s.Backlog(to),
			FromWait: s.laneWait(from), PredictFrom: s.Predict(from, j), PredictTo: s.Predict(to, j),
			Cost: m.Cost,
		}
		if !m.Decide.Migrate(f) {
			return
		}
		s.take(from, j)
		j.migrated = true
		s.stats.Migrations++
		if m.Cost == 0 {
			s.enqueue(to, j)
			s.dispatch(to)
			continue
		}
		dst.inbound++
		dst.inMem += s.memory(j)
		s.transit = append(s.transit, transfer{at: s.now + m.Cost, dev: to, job: j})
	}
}

// laneWait is the predicted time until a lane of device d is free.
func (s *State) laneWait(d int) float64 {
	ds := &s.devs[d]
	wait := math.Inf(1)
	for i := range ds.lanes {
		if len(ds.lanes[i].jobs) == 0 {
			return 0
		}
		wait = min(wait, max(0, ds.lanes[i].predEnd-s.now))
	}
	return wait
}

// settle accounts the work done on device ds since it was last settled.
func (s *State) settle(ds *deviceState) {
	dt := s.now - ds.settled
	if dt > 0 && ds.busy > 0 {
		for i := range ds.lanes {
			if len(ds.lanes[i].jobs) > 0 {
				ds.lanes[i].remaining = max(0, ds.lanes[i].remaining-dt*ds.rate)
			}
		}
	}
	ds.settled = s.now
}

// retime sets device d's rate for its busy lanes after a batch started on
// lane started (or ended, started < 0). Only a change of rate moves the
// completions already scheduled; otherwise just the new batch's completion
// is scheduled. Call after settle.
func (s *State) retime(d, started int) {
	ds := &s.devs[d]
	rate := ds.Speed / max(1, s.cfg.Service.Contention(d, ds.busy))
	if rate == ds.rate {
		if started >= 0 {
			s.schedule(d, started)
		}
		return
	}
	ds.rate = rate
	for i := range ds.lanes {
		if len(ds.lanes[i].jobs) > 0 {
			s.schedule(d, i)
		}
	}
}

// schedule (re)schedules the completion of lane i of device d at its rate.
func (s *State) schedule(d, i int) {
	ds := &s.devs[d]
	s.seq++
	s.events.set(s.slot[d]+1+int32(i), s.now+ds.lanes[i].remaining/ds.rate, s.seq)
}

func (s *State) record(r *Record) {
	if r.End > s.stats.Makespan && !r.Rejected() {
		s.stats.Makespan = r.End
	}
	if s.err == nil {
		s.err = s.emit(r)
	}
}

// Now is the current virtual time.
func (s *State) Now() float64 { return s.now }

// Devices is the number of devices.
func (s *State) Devices() int { return len(s.devs) }

// Device describes device d.
func (s *State) Device(d int) Device { return s.devs[d].Device }

// Fits reports whether job j can ever run on device d.
func (s *State) Fits(d int, j *Job) bool {
	return s.memory(j) <= s.devs[d].Memory
}

// Predict is the predicted service time of j on device d alone.
func (s *State) Predict(d int, j *Job) float64 {
	return s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch) / s.devs[d].Speed
}

// PredictBatch is the predicted time on device d alone of a batch of
// samples of j's model and precision.
func (s *State) PredictBatch(d int, j *Job, samples int32) float64 {
	return s.cfg.Service.Predict(d, j.Model, j.Precision, samples) / s.devs[d].Speed
}

// MemoryOf is what a batch of samples of j's model and precision holds.
func (s *State) MemoryOf(j *Job, samples int32) float64 {
	return s.cfg.Service.Memory(j.Model, j.Precision, samples)
}

// Backlog is the predicted time until device d has worked off everything it
// holds, per lane: the predicted remaining time of its running batches and
// its queued work (each job as if alone), spread over its lanes.
func (s *State) Backlog(d int) float64 {
	ds := &s.devs[d]
	var left float64
	for i := range ds.lanes {
		if len(ds.lanes[i].jobs) > 0 {
			left += max(0, ds.lanes[i].predEnd-s.now)
		}
	}
	return (left + ds.queued/ds.Speed) / float64(ds.Lanes)
}

// Queued is the number of jobs waiting on device d.
func (s *State) Queued(d int) int { return s.devs[d].waiting }

// Busy is the number of busy lanes of device d.
func (s *State) Busy(d int) int { return s.devs[d].busy }

// MaxBatch is the largest micro-batch, in samples: 1 without batching.
func (s *State) MaxBatch() int32 {
	if !s.batching {
		return 1
	}
	return s.cfg.Batching.MaxBatch
}

// Compatible is the samples waiting on device d that job j could batch
// with (0 without batching or a GroupPicker).
func (s *State) Compatible(d int, j *Job) int64 {
	if !s.grouped {
		return 0
	}
	if g := s.devs[d].groups[kindOf(j)]; g != nil {
		return g.samples
	}
	return 0
}
