package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// deadlineWorkload is a seeded stream of jobs arriving at rate per second
// whose deadlines are drawn apart from their arrivals, so that within a
// class the earliest deadline is often not the earliest arrival. (In
// randomWorkload deadlines follow arrivals, so EDF and FIFO agree within a
// class and a test there cannot tell them apart.)
func deadlineWorkload(seed uint64, n int, rate float64) []*sim.Job {
	r := rand.New(rand.NewPCG(seed, 2))
	jobs := make([]*sim.Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / rate
		jobs[i] = &sim.Job{ID: int64(i), Arrival: t, Class: sim.Class(r.IntN(2)), Model: int32(r.IntN(3)),
			Batch: int32(1 + r.IntN(4)), Deadline: t + 0.05 + 3*r.Float64()}
	}
	return jobs
}

// TestEDFStartsFollowDeadlines checks EDF's order within a class on one
// device: a job never starts while another job of its class, waiting on
// the same device, has an earlier deadline. The device's memory holds a
// full set of the largest jobs, so memory never lets a later job overtake;
// the load is above 1, so jobs queue and the order matters.
func TestEDFStartsFollowDeadlines(t *testing.T) {
	// invSvc's jobs take 0.133 s on average at speed 1.
	tests := []struct {
		name string
		dev  sim.Device
		rate float64
		seed uint64
	}{
		{"one lane", sim.Device{Name: "cpu", Lanes: 1, Memory: 40, Speed: 1}, 8, 1},
		{"three lanes", sim.Device{Name: "gpu", Lanes: 3, Memory: 120, Speed: 1}, 24, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := deadlineWorkload(tt.seed, 1500, tt.rate)
			var recs []*sim.Record
			i := 0
			_, err := sim.Run(sim.Config{Devices: []sim.Device{tt.dev}, Service: invSvc, Policy: EDF{}, Seed: 5},
				func() (*sim.Job, bool) {
					if i == len(jobs) {
						return nil, false
					}
					i++
					return jobs[i-1], true
				},
				func(r *sim.Record) error { c := *r; recs = append(recs, &c); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(jobs) {
				t.Fatalf("%d records of %d jobs", len(recs), len(jobs))
			}
			overtaken := 0 // starts ahead of an earlier arrival of the class
			for _, a := range recs {
				if a.Device != 0 || a.SplitParts != 1 {
					t.Fatalf("job %d: %+v, want it run whole on device 0", a.Job.ID, a)
				}
				for _, b := range recs {
					// b waited on the device when a started: it had
					// arrived (an arrival at that instant comes after
					// the start) and had not started.
					if b.Job.Class != a.Job.Class || !(b.Job.Arrival < a.Start && a.Start < b.Start) {
						continue
					}
					if b.Job.Arrival < a.Job.Arrival {
						overtaken++
					}
					if b.Job.Deadline < a.Job.Deadline {
						t.Fatalf("job %d (deadline %g) started at %g while job %d of its class, waiting since %g, has the earlier deadline %g",
							a.Job.ID, a.Job.Deadline, a.Start, b.Job.ID, b.Job.Arrival, b.Job.Deadline)
					}
				}
			}
			// Without queues, or with deadlines in arrival order, the
			// property holds for any order and the test proves nothing.
			if overtaken < 100 {
				t.Errorf("only %d starts overtook an earlier job of their class; the workload does not exercise the order", overtaken)
			}
		})
	}
}
