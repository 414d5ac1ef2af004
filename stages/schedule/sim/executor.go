package sim

import (
	"fmt"
	"math"
)

// Executor runs the simulator's batches for real (Config.Executor): with
// one, the simulator is a real scheduler. The same policies, queues,
// batching, splitting, migration and memory tokens decide as in a
// simulation, in the same code; only time is the executor's, and a batch
// ends when it has run, not when a draw of the Service says.
//
// The simulator then never calls Service.Time or Service.Contention: the
// lanes of a device slow each other down as the machine makes them. It
// still reads Predict (the policies' and backlogs' predictions) and Memory
// (the admission tokens). Events due at a time (arrivals, batching timers,
// migrations landing, decisions sent) are handled once the executor's
// clock has reached it, at the clock's time then, so a late scheduler
// shows in the records as it would in a real one.
type Executor interface {
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

// Done is a batch that an Executor ran: where, and when it ended by its
// clock (at or before its Now when Wait returns it).
type Done struct {
	Device, Lane int
	End          float64
}

// at is the time at which an event due at t is handled: t in a
// simulation, and with an Executor the clock's time once it has reached t.
func (s *State) at(t float64) float64 {
	if x := s.cfg.Executor; x != nil {
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

// waitReal blocks, with an Executor, until the next event is due at time t
// or a batch ends first, and handles the batch's end. It returns handled
// false when the event at t is due (or none is left: t is +Inf and nothing
// runs).
func (m *Sim) waitReal(t float64) (handled bool) {
	s := m.state
	x := s.cfg.Executor
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
		s.fail(fmt.Errorf("sim: executor: batch end on device %d lane %d, which runs no batch", done.Device, done.Lane))
		return true
	}
	s.now = s.at(done.End)
	s.stats.Events++
	s.complete(done.Device, done.Lane, min(done.End, s.now))
	return true
}
