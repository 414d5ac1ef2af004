package sim

import (
	"fmt"
	"math"
)

// Split divides jobs of at least MinBatch samples across devices as the
// policy's Splitter says; 0 is off.
type Split struct {
	MinBatch int32
}

// split is a job run as parts on several devices.
type split struct {
	parent   *Job
	parts    int32
	left     int32   // parts not yet ended
	start    float64 // the earliest part's start
	migrated bool    // some part moved
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
