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
// the answers take effect Latency(n) later (a flight). A move answered
// for a job that started meanwhile where it waited is dropped. A stay
// frees the held lane without asking again at once: the next event asks.

// decision is one asked migration decision.
type decision struct {
	job      *Job
	from, to int
	feat     MigrationFeatures
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
	dst := &s.devs[d.to]
	dst.inbound++
	dst.inMem += s.memory(d.job)
	if len(s.asked) == 0 {
		s.askedAt = s.now
	}
	s.asked = append(s.asked, d)
	if len(s.asked) >= max(1, m.Batch) {
		s.send()
	}
}

// send hands the asked decisions to the Migrator as one batch.
func (s *State) send() {
	m := &s.cfg.Migration
	n := len(s.asked)
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
	f.at, f.seq = s.now+m.Latency(n), s.fseq
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
		j := d.job
		dst := &s.devs[d.to]
		dst.inbound--
		dst.inMem -= s.memory(j)
		if dst.inbound == 0 {
			dst.inMem = 0 // no drift from float sums
		}
		j.deciding = false
		if f.out[i] && j.stamp != 0 { // still waiting where it was
			s.move(d.from, d.to, j)
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
