package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
}

// Device is one device of the virtual cluster.
type Device struct {
	Name string
	// Lanes is the number of jobs the device runs at once (at least 1).
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
	// is the samples in the batch as run. Each job runs as its own batch.
	BatchID   int64
	BatchSize int32
	Start     float64
	End       float64
	Reason    string // why a rejected job ran nowhere
}

// Rejected reports whether the job fit on no device.
func (r *Record) Rejected() bool { return r.Device < 0 }

// Config is one simulation.
type Config struct {
	Devices []Device
	Service Service
	Policy  Policy
	// Seed seeds the generator of every ground-truth draw.
	Seed uint64
}

// Stats counts what a run did.
type Stats struct {
	Jobs, Rejected int64
	Events         int64
	// Makespan is the end of the last job (0 if none ran).
	Makespan float64
}

// running is a job on a lane.
type running struct {
	job       *Job
	batch     int64
	start     float64
	remaining float64 // work left, in seconds at rate 1
	memory    float64
	gen       uint32 // bumped whenever the completion is re-timed
}

type deviceState struct {
	Device
	lanes   []running // job == nil: idle
	busy    int
	memUsed float64
	settled float64 // time up to which remaining work is accounted
	rate    float64 // progress rate of each busy lane
	queue   queue
	queued  float64 // predicted work queued, seconds at rate 1
	predEnd []float64
}

// Run simulates jobs, which next returns in arrival order (ok false at the
// end), and hands every job's record to emit in completion order. A job
// arriving before its predecessor is an error, as is an invalid cluster.
func Run(cfg Config, next func() (*Job, bool), emit func(*Record) error) (Stats, error) {
	s, err := newState(cfg)
	if err != nil {
		return Stats{}, err
	}
	return s.run(next, emit)
}

// State is the simulation as a Placer sees it.
type State struct {
	cfg     Config
	devs    []deviceState
	events  eventHeap
	seq     uint64
	now     float64
	rng     *rand.Rand
	ranker  Ranker
	strict  bool
	placer  Placer
	stats   Stats
	batches int64
	emit    func(*Record) error
	emitErr error
}

func newState(cfg Config) (*State, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("sim: no devices")
	}
	if cfg.Service == nil || cfg.Policy == nil {
		return nil, errors.New("sim: no service model or no policy")
	}
	placer, ok := cfg.Policy.(Placer)
	if !ok {
		return nil, fmt.Errorf("sim: policy %s does not place jobs", cfg.Policy.Name())
	}
	s := &State{cfg: cfg, placer: placer, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6a09e667f3bcc909))}
	s.ranker, _ = cfg.Policy.(Ranker)
	if so, ok := cfg.Policy.(StrictOrder); ok {
		s.strict = so.StrictOrder()
	}
	for i, d := range cfg.Devices {
		if d.Lanes < 1 || !(d.Speed > 0) || !(d.Memory > 0) || math.IsInf(d.Speed, 0) {
			return nil, fmt.Errorf("sim: device %d (%s): want lanes >= 1, speed > 0 and memory > 0, got %d, %v, %v", i, d.Name, d.Lanes, d.Speed, d.Memory)
		}
		ds := deviceState{Device: d, lanes: make([]running, d.Lanes), predEnd: make([]float64, d.Lanes), rate: d.Speed}
		ds.queue.init(s.ranker)
		s.devs = append(s.devs, ds)
	}
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
		if len(s.events) > 0 && s.events[0].time <= tArr {
			e := s.events.pop()
			s.now = e.time
			s.stats.Events++
			s.complete(e)
		} else if more {
			if !(pending.Arrival >= last) || math.IsNaN(pending.Arrival) {
				return s.stats, fmt.Errorf("sim: job %d arrives at %v, before the job before it (%v)", pending.ID, pending.Arrival, last)
			}
			last = pending.Arrival
			s.now = pending.Arrival
			s.stats.Events++
			s.arrive(pending)
			pending, more = next()
		} else {
			break
		}
		if s.emitErr != nil {
			return s.stats, s.emitErr
		}
	}
	return s.stats, nil
}

// arrive places a job and lets its device start work.
func (s *State) arrive(j *Job) {
	s.stats.Jobs++
	need := s.cfg.Service.Memory(j.Model, j.Precision, j.Batch)
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
	ds := &s.devs[d]
	ds.queue.push(j)
	ds.queued += s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch)
	s.dispatch(d)
}

// dispatch starts queued jobs on idle lanes of device d while they fit.
func (s *State) dispatch(d int) {
	ds := &s.devs[d]
	for ds.busy < ds.Lanes && ds.queue.len() > 0 {
		free := ds.Memory - ds.memUsed
		j := ds.queue.takeFitting(func(j *Job) bool {
			return s.cfg.Service.Memory(j.Model, j.Precision, j.Batch) <= free
		}, s.strict)
		if j == nil {
			return // nothing fits until a running job ends
		}
		ds.queued -= s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch)
		if ds.queue.len() == 0 {
			ds.queued = 0 // no drift from float sums
		}
		s.start(d, j)
	}
}

// start runs j on an idle lane of device d.
func (s *State) start(d int, j *Job) {
	ds := &s.devs[d]
	s.settle(ds)
	lane := 0
	for ds.lanes[lane].job != nil {
		lane++
	}
	work := s.cfg.Service.Time(d, j.Model, j.Precision, j.Batch, s.rng.Float64())
	mem := s.cfg.Service.Memory(j.Model, j.Precision, j.Batch)
	r := &ds.lanes[lane]
	s.batches++
	r.job, r.batch, r.start, r.remaining, r.memory = j, s.batches, s.now, work, mem
	ds.memUsed += mem
	ds.busy++
	ds.predEnd[lane] = s.now + s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch)/ds.Speed
	s.retime(d, lane)
}

// complete ends the job of a lane if the event is still current.
func (s *State) complete(e event) {
	ds := &s.devs[e.dev]
	r := &ds.lanes[e.lane]
	if r.job == nil || r.gen != e.gen {
		return // re-timed since this event was scheduled
	}
	s.settle(ds)
	j := r.job
	s.record(&Record{Job: j, Device: int32(e.dev), Lane: int32(e.lane), BatchID: r.batch, BatchSize: j.Batch, Start: r.start, End: s.now})
	ds.memUsed -= r.memory
	r.job = nil
	r.gen++
	ds.busy--
	if ds.busy == 0 {
		ds.memUsed = 0
	}
	s.retime(int(e.dev), -1)
	s.dispatch(int(e.dev))
}

// settle accounts the work done on device ds since it was last settled.
func (s *State) settle(ds *deviceState) {
	dt := s.now - ds.settled
	if dt > 0 && ds.busy > 0 {
		for i := range ds.lanes {
			if ds.lanes[i].job != nil {
				ds.lanes[i].remaining = max(0, ds.lanes[i].remaining-dt*ds.rate)
			}
		}
	}
	ds.settled = s.now
}

// retime sets device d's rate for its busy lanes after a job started on
// lane started (or ended, started < 0). Only a change of rate moves the
// completions already scheduled; otherwise just the new job's completion is
// scheduled. Call after settle.
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
		if ds.lanes[i].job != nil {
			s.schedule(d, i)
		}
	}
}

// schedule (re)schedules the completion of lane i of device d at its rate;
// an earlier event of the lane becomes stale.
func (s *State) schedule(d, i int) {
	ds := &s.devs[d]
	r := &ds.lanes[i]
	r.gen++
	s.seq++
	s.events.push(event{time: s.now + r.remaining/ds.rate, seq: s.seq, dev: int32(d), lane: int32(i), gen: r.gen})
}

func (s *State) record(r *Record) {
	if r.End > s.stats.Makespan && !r.Rejected() {
		s.stats.Makespan = r.End
	}
	if s.emitErr == nil {
		s.emitErr = s.emit(r)
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
	return s.cfg.Service.Memory(j.Model, j.Precision, j.Batch) <= s.devs[d].Memory
}

// Predict is the predicted service time of j on device d alone.
func (s *State) Predict(d int, j *Job) float64 {
	return s.cfg.Service.Predict(d, j.Model, j.Precision, j.Batch) / s.devs[d].Speed
}

// Backlog is the predicted time until device d has worked off everything it
// holds, per lane: the predicted remaining time of its running jobs and its
// queued work, spread over its lanes.
func (s *State) Backlog(d int) float64 {
	ds := &s.devs[d]
	var left float64
	for i := range ds.lanes {
		if ds.lanes[i].job != nil {
			left += max(0, ds.predEnd[i]-s.now)
		}
	}
	return (left + ds.queued/ds.Speed) / float64(ds.Lanes)
}

// Queued is the number of jobs waiting on device d.
func (s *State) Queued(d int) int { return s.devs[d].queue.len() }

// Busy is the number of busy lanes of device d.
func (s *State) Busy(d int) int { return s.devs[d].busy }
