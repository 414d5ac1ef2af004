package sim

import "math"

// Migration lets a device with an idle lane and nothing waiting take the
// job another device would start next, when Decide says so.
type Migration struct {
	Decide Migrator // nil is off
	// Cost is the time a moved job spends in transit, seconds.
	Cost float64
}

// transfer is a migrating job in transit.
type transfer struct {
	at  float64
	dev int
	job *Job
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
			Job: j, From: from, To: to, Now: s.now,
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
