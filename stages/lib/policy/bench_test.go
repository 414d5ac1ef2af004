package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// BenchmarkRun simulates a million jobs per policy on four devices of two
// lanes, at 70% and at 120% of capacity (queues then grow without bound),
// and reports simulated jobs per second. The engine alone: trace writing is
// measured with the schedule stage.
//
// Capacity: a job's mean work is mean(secs)·E[batch] = 5.33 ms · 2.5 =
// 13.3 ms at speed 1; two busy lanes each run 1.15× slower, so a device
// does 2/1.15 = 1.74 speed-seconds per second, and the cluster (speeds 1,
// 1, 2, 2) 10.4, that is 782 jobs/s.
func BenchmarkRun(b *testing.B) {
	const n = 1_000_000
	devs := []sim.Device{
		{Name: "cpu0", Lanes: 2, Memory: 100, Speed: 1}, {Name: "cpu1", Lanes: 2, Memory: 100, Speed: 1},
		{Name: "acc0", Lanes: 2, Memory: 100, Speed: 2}, {Name: "acc1", Lanes: 2, Memory: 100, Speed: 2},
	}
	svc := noisy{secs: []float64{0.001, 0.005, 0.01}, mem: []float64{2, 5, 9}}
	const capacity = 782.0 // jobs/s, see above
	for _, load := range []float64{0.7, 1.2} {
		r := rand.New(rand.NewPCG(1, 2))
		jobs := make([]sim.Job, n)
		t := 0.0
		for i := range jobs {
			t += r.ExpFloat64() / (load * capacity)
			class := sim.Class(r.IntN(2))
			jobs[i] = sim.Job{ID: int64(i), Arrival: t, Class: class, Model: int32(r.IntN(3)), Batch: int32(1 + r.IntN(4)), Deadline: t + 0.1}
		}
		for _, name := range Names() {
			b.Run(fmt.Sprintf("load=%.1f/%s", load, name), func(b *testing.B) {
				for b.Loop() {
					p, _ := New(name, Options{Seed: 1})
					i := 0
					var done int
					st, err := sim.Run(sim.Config{Devices: devs, Service: svc, Policy: p, Seed: 1},
						func() (*sim.Job, bool) {
							if i == n {
								return nil, false
							}
							i++
							return &jobs[i-1], true
						},
						func(*sim.Record) error { done++; return nil })
					if err != nil || done != n {
						b.Fatal(err, done, st)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			})
		}
	}
}
