package sim

import (
	"cmp"
	"slices"
)

// Decisions that take time (Migration.Latency). A decision is asked for
// in steal and kept in State.asked with the features of that moment; the
// destination holds a lane and the job's memory for it, and the job is
// marked deciding, so that no other device asks about it meanwhile. The
// asked decisions are sent as one batch when Batch of them are waiting,
// when Window has passed since the first, or, with no Window, at the end
// of the event that asked them; the Migrator answers the batch then, and
// the answers take effect Latency(n, u) later (a flight), u the variate of
// the flight's ordinal among the simulation's (DecisionVariate). A move answered
// for a job that started meanwhile where it waited is dropped. A stay
// frees the held lane without asking again at once: the next event asks.
//
// A job may start and end while a decision about it waits to be sent or
// is in flight, and a caller may reuse the ended job's struct for a later
// arrival (as the schedule stage does). A decision therefore keeps the
// job's ID and the memory it held, and touches the job only while its ID
// is still the decision's: a decision whose job is no longer waiting when
// the batch is sent is dropped then, unasked.

// decision is one asked migration decision: the job (id, while it is that
// job), the memory held for it on the destination, and its features.
type decision struct {
	job      *Job
	id       int64
	mem      float64
	from, to int
	feat     MigrationFeatures
}

// live reports whether d's job is still d's and waiting where it was.
func (d *decision) live() bool { return d.job.ID == d.id && d.job.stamp != 0 }

// release frees the lane and memory held for d, and unmarks its job.
func (s *State) release(d *decision) {
	dst := &s.devs[d.to]
	dst.inbound--
	dst.inMem -= d.mem
	if dst.inbound == 0 {
		dst.inMem = 0 // no drift from float sums
	}
	if d.job.ID == d.id {
		d.job.deciding = false
	}
}

// flight is a batch of decisions sent to the Migrator, whose answers
// take effect at `at`.
type flight struct {
	at  float64
	seq uint64
	ds  []decision
	out []bool
}

// ask holds a lane of d.to for decision d and queues it for sending.
func (s *State) ask(d decision) {
	m := &s.cfg.Migration
	d.job.deciding = true
	d.id, d.mem = d.job.ID, s.memory(d.job)
	dst := &s.devs[d.to]
	dst.inbound++
	dst.inMem += d.mem
	if len(s.asked) == 0 {
		s.askedAt = s.now
	}
	s.asked = append(s.asked, d)
	if len(s.asked) >= max(1, m.Batch) {
		s.send()
	}
}

// send hands the asked decisions to the Migrator as one batch, but for
// those whose job is no longer waiting: they are moot, and dropped.
func (s *State) send() {
	m := &s.cfg.Migration
	live := s.asked[:0]
	for i := range s.asked {
		if d := &s.asked[i]; d.live() {
			live = append(live, *d)
		} else {
			s.release(d)
		}
	}
	clear(s.asked[len(live):])
	s.asked = live
	n := len(s.asked)
	if n == 0 {
		return
	}
	var f *flight
	if k := len(s.spare); k > 0 {
		f, s.spare = s.spare[k-1], s.spare[:k-1]
	} else {
		f = new(flight)
	}
	f.ds = append(f.ds[:0], s.asked...)
	f.out = slices.Grow(f.out[:0], n)[:n]
	s.feats = s.feats[:0]
	for i := range f.ds {
		s.feats = append(s.feats, f.ds[i].feat)
	}
	if b, ok := m.Decide.(BatchMigrator); ok {
		b.MigrateBatch(s.feats, f.out)
	} else {
		for i := range s.feats {
			f.out[i] = m.Decide.Migrate(&s.feats[i])
		}
	}
	s.fseq++
	f.at, f.seq = s.now+m.Latency(n, DecisionVariate(s.cfg.Seed, s.fseq)), s.fseq
	i, _ := slices.BinarySearchFunc(s.flights, f, func(a, b *flight) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	s.flights = slices.Insert(s.flights, i, f)
	clear(s.asked)
	s.asked = s.asked[:0]
	s.stats.DecisionBatches++
}

// land applies the answers of the earliest flight, now its time.
func (s *State) land() {
	f := s.flights[0]
	s.flights = slices.Delete(s.flights, 0, 1)
	for i := range f.ds {
		d := &f.ds[i]
		s.release(d)
		if f.out[i] && d.live() { // still waiting where it was
			s.move(d.from, d.to, d.job)
		}
	}
	for i := range f.ds {
		if to := f.ds[i].to; s.devs[to].waiting > 0 {
			s.dispatch(to)
		}
	}
	clear(f.ds)
	s.spare = append(s.spare, f)
}
