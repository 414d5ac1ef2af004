package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// BenchmarkRun simulates a million jobs per policy on four devices of two
// lanes at about 70% load, and reports simulated jobs per second. The
// engine alone: trace writing is measured with the schedule stage.
func BenchmarkRun(b *testing.B) {
	const n = 1_000_000
	devs := []sim.Device{
		{Name: "cpu0", Lanes: 2, Memory: 100, Speed: 1}, {Name: "cpu1", Lanes: 2, Memory: 100, Speed: 1},
		{Name: "acc0", Lanes: 2, Memory: 100, Speed: 2}, {Name: "acc1", Lanes: 2, Memory: 100, Speed: 2},
	}
	svc := noisy{secs: []float64{0.001, 0.005, 0.01}, mem: []float64{2, 5, 9}}
	r := rand.New(rand.NewPCG(1, 2))
	jobs := make([]sim.Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / 1300 // mean work 2.5 ms·batch 2.5 ≈ 6 ms; capacity 12 lane-speeds
		class := sim.Class(r.IntN(2))
		jobs[i] = sim.Job{ID: int64(i), Arrival: t, Class: class, Model: int32(r.IntN(3)), Batch: int32(1 + r.IntN(4)), Deadline: t + 0.1}
	}
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, _ := New(name, 1)
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
