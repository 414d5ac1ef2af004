package policy

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// TestSplitExtremeTimes runs every splitting policy with predicted times
// at and past float64's range (an imported profile's 1e300 s latency, a
// zero, an overflow to +Inf, a NaN). Splitting must then run the job
// whole, never fail the simulation with a split summing to nothing, and
// never spin: the water-filling's shares overflowed to NaN, and rounding
// them took 2³¹ rounds.
func TestSplitExtremeTimes(t *testing.T) {
	devs := []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 2, Memory: 100, Speed: 10}}
	for _, secs := range []float64{1e300, 1e306, 1e308, math.Inf(1), 1e-300, 5e-324, 0} {
		for _, spec := range []string{"greedy+split", "edf+split", "batch_aware+split", "dynamic+split"} {
			sp, err := ParseSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(sp.Name, Options{Seed: 1, Weights: DefaultWeights()})
			if err != nil {
				t.Fatal(err)
			}
			// Model 0 takes secs per sample, model 1 a sane millisecond, so
			// that splits also meet devices whose backlog is out of range.
			cfg := sim.Config{Devices: devs, Service: fixed{secs: []float64{secs, 1e-3}, mem: []float64{1, 1}}, Policy: p, Seed: 1}
			if err := sp.Configure(&cfg, Settings{Split: sim.Split{MinBatch: 32}, Batching: sim.Batching{MaxBatch: 64}}); err != nil {
				t.Fatal(err)
			}
			const jobs = 50
			n := 0
			next := func() (*sim.Job, bool) {
				if n == jobs {
					return nil, false
				}
				n++
				return &sim.Job{ID: int64(n), Arrival: float64(n), Model: int32(n % 2), Batch: 64, Deadline: float64(n) + 1}, true
			}
			records := 0
			done := make(chan error, 1)
			go func() {
				_, err := sim.Run(cfg, next, func(*sim.Record) error { records++; return nil })
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s, %g s a sample: %v", spec, secs, err)
				} else if records != jobs {
					t.Errorf("%s, %g s a sample: %d records, want %d", spec, secs, records, jobs)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s, %g s a sample: the simulation has not ended after 20 s", spec, secs)
			}
		}
	}
}

func TestRoundShares(t *testing.T) {
	tests := []struct {
		share []float64
		total int32
		want  []int32 // nil: refused
	}{
		{[]float64{21.5, 21.5, 21}, 64, []int32{22, 21, 21}},
		{[]float64{0, 63.9999999, 0.0000001}, 64, []int32{0, 64, 0}},
		{[]float64{64, 0}, 64, []int32{64, 0}},
		{[]float64{10, 10}, 64, nil},         // sums to 20, not 64
		{[]float64{math.NaN(), 32}, 64, nil}, // NaN
		{[]float64{math.Inf(1), 0}, 64, nil}, // overflow
		{[]float64{-1, 65}, 64, nil},         // negative
		{[]float64{3e9, 0}, 64, nil},         // past int32
		{[]float64{1e-300, 63.999999999999}, 64, []int32{0, 64}},
	}
	for _, tt := range tests {
		share := append([]float64(nil), tt.share...)
		got, ok := roundShares(share, tt.total)
		switch {
		case tt.want == nil && ok:
			t.Errorf("roundShares(%v, %d) = %v, want a refusal", tt.share, tt.total, got)
		case tt.want != nil && (!ok || !slices.Equal(got, tt.want)):
			t.Errorf("roundShares(%v, %d) = %v, %v, want %v", tt.share, tt.total, got, ok, tt.want)
		}
	}
}
