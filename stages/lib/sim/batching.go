package sim

import "math"

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
