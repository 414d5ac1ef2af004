package sim

import (
	"container/heap"
	"fmt"
	"math"
)

// Machine runs the simulator's batches for real (Config.Machine): with
// one, the simulator is a real scheduler. The same policies, queues,
// batching, splitting, migration and memory tokens decide as in a
// simulation, in the same code; only time is the machine's, and a batch
// ends when it has run, not when a draw of the Service says.
//
// The simulator then never calls Service.Time or Service.Contention: the
// lanes of a device slow each other down as the machine makes them. It
// still reads Predict (the policies' and backlogs' predictions) and Memory
// (the admission tokens). Events due at a time (arrivals, batching timers,
// migrations landing, decisions sent) are handled once the machine's
// clock has reached it, at the clock's time then, so a late scheduler
// shows in the records as it would in a real one.
type Machine interface {
	// Now is the clock, in the jobs' time (seconds); it never goes back.
	Now() float64
	// Start begins running a batch of samples samples on lane lane of
	// device d: jobs, all of one model and precision, the first leading.
	// It copies what it needs of them before it returns, and its end is
	// handed back by Wait, once.
	Start(d, lane int, jobs []*Job, samples int32) error
	// Wait blocks until a started batch ends or the clock reaches t
	// (+Inf: no deadline), whichever is first. It returns the batch that
	// ended (ok), or ok false once the clock has reached t.
	Wait(t float64) (done Done, ok bool, err error)
}

// Done is a batch that a Machine ran: where, and when it ended by its
// clock (at or before its Now when Wait returns it).
type Done struct {
	Device, Lane int
	End          float64
}

// at is the time at which an event due at t is handled: t in a
// simulation, and with a Machine the clock's time once it has reached t.
func (s *State) at(t float64) float64 {
	if x := s.cfg.Machine; x != nil {
		return max(t, x.Now(), s.now)
	}
	return t
}

// running is the number of batches running on the whole cluster.
func (s *State) running() int {
	n := 0
	for i := range s.devs {
		n += s.devs[i].busy
	}
	return n
}

// waitReal blocks, with a Machine, until the next event is due at time t
// or a batch ends first, and handles the batch's end. It returns handled
// false when the event at t is due (or none is left: t is +Inf and nothing
// runs).
func (m *Sim) waitReal(t float64) (handled bool) {
	s := m.state
	x := s.cfg.Machine
	if s.running() == 0 && math.IsInf(t, 1) {
		return false
	}
	done, ok, err := x.Wait(t)
	if err != nil {
		s.fail(err)
		return true
	}
	if !ok {
		return false
	}
	if done.Device < 0 || done.Device >= len(s.devs) || done.Lane < 0 || done.Lane >= s.devs[done.Device].Lanes ||
		len(s.devs[done.Device].lanes[done.Lane].jobs) == 0 {
		s.fail(fmt.Errorf("sim: machine: batch end on device %d lane %d, which runs no batch", done.Device, done.Lane))
		return true
	}
	s.now = s.at(done.End)
	s.stats.Events++
	s.complete(done.Device, done.Lane, min(done.End, s.now))
	return true
}

// Replay is a Machine on a virtual clock whose batches take the times a
// function gives, say the times a real run measured them to take: a
// simulation whose service times are given rather than drawn. With the
// times of a real run of the same jobs, its records differ from the real
// run's only by what the simulator's decisions and queues would make of
// them, which isolates the service-time model's share of the error.
type Replay struct {
	// Time is how long a batch of samples samples of jobs (the first
	// leading) takes on lane lane of device d, in seconds of the clock.
	Time    func(d, lane int, jobs []*Job, samples int32) (float64, error)
	now     float64
	running ends
	started int
}

var _ Machine = (*Replay)(nil)

// Now implements Machine.
func (r *Replay) Now() float64 { return r.now }

// Start implements Machine.
func (r *Replay) Start(d, lane int, jobs []*Job, samples int32) error {
	t, err := r.Time(d, lane, jobs, samples)
	if err != nil {
		return err
	}
	if !(t >= 0) || math.IsInf(t, 1) {
		return fmt.Errorf("sim: replay: batch of job %d on device %d lane %d takes %v s", jobs[0].ID, d, lane, t)
	}
	r.started++
	heap.Push(&r.running, Done{Device: d, Lane: lane, End: r.now + t})
	return nil
}

// Wait implements Machine: the earliest end at or before t, the clock
// moving to it, or else the clock moving to t.
func (r *Replay) Wait(t float64) (Done, bool, error) {
	if len(r.running) > 0 && r.running[0].End <= t {
		d := heap.Pop(&r.running).(Done)
		r.now = max(r.now, d.End)
		return d, true, nil
	}
	if !math.IsInf(t, 1) {
		r.now = max(r.now, t)
	}
	return Done{}, false, nil
}

// Started is how many batches the replay has started; Running how many of
// them have not ended.
func (r *Replay) Started() int { return r.started }

// Running is how many started batches have not ended.
func (r *Replay) Running() int { return len(r.running) }

// ends is a min-heap of batch ends.
type ends []Done

func (e ends) Len() int           { return len(e) }
func (e ends) Less(i, j int) bool { return e[i].End < e[j].End }
func (e ends) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *ends) Push(x any)        { *e = append(*e, x.(Done)) }
func (e *ends) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}
