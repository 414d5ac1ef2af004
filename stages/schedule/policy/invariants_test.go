package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// noisy is a Service whose ground truth varies with u around its
// prediction, with per-model memory and contention that grows with lanes.
type noisy struct{ secs, mem []float64 }

func (n noisy) Time(d int, m, p, b int32, u float64) float64 {
	return n.secs[m] * float64(b) * (0.5 + u)
}
func (n noisy) Predict(d int, m, p, b int32) float64 { return n.secs[m] * float64(b) }
func (n noisy) Memory(m, p, b int32) float64         { return n.mem[m] * float64(b) }
func (n noisy) Contention(d, k int) float64          { return 1 + 0.15*float64(max(k-1, 0)) }

func randomWorkload(seed uint64, n int) []*sim.Job {
	r := rand.New(rand.NewPCG(seed, 1))
	jobs := make([]*sim.Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / 30 // about 30 jobs/s
		class := sim.Class(r.IntN(2))
		jobs[i] = &sim.Job{ID: int64(i), Arrival: t, Class: class, Model: int32(r.IntN(3)),
			Batch: int32(1 + r.IntN(4)), Deadline: t + 0.1 + float64(class)*0.9}
	}
	return jobs
}

var (
	invDevs = []sim.Device{
		{Name: "cpu", Lanes: 2, Memory: 40, Speed: 1},
		{Name: "gpu", Lanes: 4, Memory: 60, Speed: 3},
		{Name: "small", Lanes: 1, Memory: 12, Speed: 0.5},
	}
	invSvc = noisy{secs: []float64{0.01, 0.05, 0.1}, mem: []float64{2, 5, 9}}
)

func runAll(t *testing.T, name string, jobs []*sim.Job) []*sim.Record {
	t.Helper()
	p, _ := New(name, 7)
	i := 0
	var out []*sim.Record
	_, err := sim.Run(sim.Config{Devices: invDevs, Service: invSvc, Policy: p, Seed: 3},
		func() (*sim.Job, bool) {
			if i == len(jobs) {
				return nil, false
			}
			i++
			return jobs[i-1], true
		},
		func(r *sim.Record) error { c := *r; out = append(out, &c); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInvariantsOnRandomWorkloads(t *testing.T) {
	jobs := randomWorkload(11, 3000)
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			recs := runAll(t, name, jobs)
			seen := map[int64]int{}
			byDev := map[int32][]*sim.Record{}
			for _, r := range recs {
				seen[r.Job.ID]++
				if r.Start < r.Job.Arrival || r.End < r.Start {
					t.Fatalf("job %d: arrival %g start %g end %g", r.Job.ID, r.Job.Arrival, r.Start, r.End)
				}
				if !r.Rejected() {
					byDev[r.Device] = append(byDev[r.Device], r)
				}
			}
			for _, j := range jobs {
				if seen[j.ID] != 1 {
					t.Fatalf("job %d recorded %d times", j.ID, seen[j.ID])
				}
			}
			for d, rs := range byDev {
				dev := invDevs[d]
				// No lane runs two jobs at once.
				byLane := map[int32][]*sim.Record{}
				for _, r := range rs {
					byLane[r.Lane] = append(byLane[r.Lane], r)
				}
				for lane, lr := range byLane {
					slices.SortFunc(lr, func(a, b *sim.Record) int { return cmpF(a.Start, b.Start) })
					for i := 1; i < len(lr); i++ {
						if lr[i].Start < lr[i-1].End-1e-12 {
							t.Fatalf("device %d lane %d runs jobs %d and %d at once", d, lane, lr[i-1].Job.ID, lr[i].Job.ID)
						}
					}
				}
				// Memory never exceeds capacity (checked at every start).
				for _, r := range rs {
					if use := memoryAt(rs, r.Start); use > dev.Memory+1e-9 {
						t.Fatalf("device %d holds %g of %g memory at %g", d, use, dev.Memory, r.Start)
					}
				}
				strict := name == "fifo" || name == "round_robin" || name == "random"
				if strict {
					// Never reordered: starts follow arrivals on each device.
					sorted := slices.Clone(rs)
					slices.SortFunc(sorted, func(a, b *sim.Record) int { return cmpF(a.Job.Arrival, b.Job.Arrival) })
					for i := 1; i < len(sorted); i++ {
						if sorted[i].Start < sorted[i-1].Start {
							t.Fatalf("%s on device %d started job %d before earlier job %d", name, d, sorted[i].Job.ID, sorted[i-1].Job.ID)
						}
					}
				} else {
					// Work conserving: a waiting job never sees a free lane
					// with room for it on its device.
					for _, r := range rs {
						for _, at := range changesOn(rs, r.Job.Arrival, r.Start) {
							if busyAt(rs, at) < dev.Lanes && memoryAt(rs, at)+invSvc.Memory(r.Job.Model, 0, r.Job.Batch) <= dev.Memory {
								t.Fatalf("%s: job %d waits on device %d at %g with a free lane and room", name, r.Job.ID, d, at)
							}
						}
					}
				}
			}
			// Determinism: a second run gives the same records.
			again := runAll(t, name, jobs)
			for i := range recs {
				if *recs[i] != *again[i] {
					t.Fatalf("run differs at record %d: %+v vs %+v", i, recs[i], again[i])
				}
			}
		})
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// running lists the jobs running on a device at time t (started, not ended).
func running(rs []*sim.Record, t float64) []*sim.Record {
	var out []*sim.Record
	for _, r := range rs {
		if r.Start <= t && t < r.End {
			out = append(out, r)
		}
	}
	return out
}

func busyAt(rs []*sim.Record, t float64) int { return len(running(rs, t)) }

func memoryAt(rs []*sim.Record, t float64) float64 {
	var m float64
	for _, r := range running(rs, t) {
		m += invSvc.Memory(r.Job.Model, 0, r.Job.Batch)
	}
	return m
}

// changesOn returns the arrival and every end on the device in [from, to):
// the only moments a waiting job could have started.
func changesOn(rs []*sim.Record, from, to float64) []float64 {
	if to <= from {
		return nil
	}
	out := []float64{from}
	for _, r := range rs {
		if r.End > from && r.End < to {
			out = append(out, r.End)
		}
	}
	return out
}
