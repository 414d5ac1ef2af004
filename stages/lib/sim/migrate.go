package sim

import "math"

// Migration lets a device with an idle lane and nothing waiting take the
// job another device would start next, when Decide says so.
type Migration struct {
	Decide Migrator // nil is off
	// Cost is the time a moved job spends in transit, seconds.
	Cost float64
	// Latency, if not nil, makes deciding take time, as serving a model
	// does: a decision is asked for, sent to Decide with the others asked
	// before it in a batch (Batch, Window), and answered Latency(n, u)
	// seconds after a batch of n is sent, u the batch's uniform variate
	// in [0, 1), keyed to Config.Seed and the batch's ordinal
	// (DecisionVariate), so that a Latency that draws from a measured
	// distribution replays exactly. Until the answer, the destination
	// holds a lane and the memory for the job, and the job waits where it
	// is, where it may start (the answer is then moot). With Latency nil,
	// Decide answers at once, inside the event.
	Latency func(n int, u float64) float64
	// Batch is the most decisions sent at once (at least 1).
	Batch int
	// Window is how long a batch waits for more decisions after the first
	// is asked, seconds; with 0, the decisions asked in one event go
	// together.
	Window float64
}

// BatchMigrator is a Migrator that decides a batch of moves in one call
// (Migration.Latency): out[i] answers fs[i].
type BatchMigrator interface {
	Migrator
	MigrateBatch(fs []MigrationFeatures, out []bool)
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
		j := s.peek(from, func(j *Job) bool { return !j.deciding && s.memory(j) <= free })
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
		s.stats.Decisions++
		if m.Latency != nil {
			s.ask(decision{job: j, from: from, to: to, feat: *f})
			continue
		}
		if !m.Decide.Migrate(f) {
			return
		}
		s.move(from, to, j)
	}
}

// move takes waiting job j from device from to device to: at once
// without a Cost, in transit otherwise.
func (s *State) move(from, to int, j *Job) {
	m := s.cfg.Migration
	s.take(from, j)
	j.migrated = true
	s.stats.Migrations++
	if m.Cost == 0 {
		s.enqueue(to, j)
		s.dispatch(to)
		return
	}
	dst := &s.devs[to]
	dst.inbound++
	dst.inMem += s.memory(j)
	s.transit = append(s.transit, transfer{at: s.now + m.Cost, dev: to, job: j})
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
