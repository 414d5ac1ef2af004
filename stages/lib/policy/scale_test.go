package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// BenchmarkScale shows how the engine's cost grows with the number of jobs:
// ns per job should stay flat (or grow like log n) from 10⁵ to 10⁷ at a
// steady 70% load. Jobs are made on the fly, so memory stays flat too.
func BenchmarkScale(b *testing.B) {
	devs := []sim.Device{
		{Name: "cpu0", Lanes: 2, Memory: 100, Speed: 1}, {Name: "cpu1", Lanes: 2, Memory: 100, Speed: 1},
		{Name: "acc0", Lanes: 2, Memory: 100, Speed: 2}, {Name: "acc1", Lanes: 2, Memory: 100, Speed: 2},
	}
	svc := noisy{secs: []float64{0.001, 0.005, 0.01}, mem: []float64{2, 5, 9}}
	const capacity = 782.0 // jobs/s, as in BenchmarkRun
	for _, n := range []int{100_000, 1_000_000, 10_000_000} {
		for _, name := range []string{"fifo", "edf"} {
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				for b.Loop() {
					r := rand.New(rand.NewPCG(1, 2))
					p, _ := New(name, Options{Seed: 1})
					i, t := 0, 0.0
					_, err := sim.Run(sim.Config{Devices: devs, Service: svc, Policy: p, Seed: 1},
						func() (*sim.Job, bool) {
							if i == n {
								return nil, false
							}
							i++
							t += r.ExpFloat64() / (0.7 * capacity)
							j := &sim.Job{ID: int64(i), Arrival: t, Class: sim.Class(r.IntN(2)), Model: int32(r.IntN(3)), Batch: int32(1 + r.IntN(4))}
							j.Deadline = t + 0.1
							return j, true
						},
						func(*sim.Record) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/job")
			})
		}
	}
}
