package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// byClassDeadline is EDF's order: the class, then the deadline.
type byClassDeadline struct{}

func (byClassDeadline) Less(a, b *Job) bool {
	if a.Class != b.Class {
		return a.Class < b.Class
	}
	return a.Deadline < b.Deadline
}
func (byClassDeadline) Key(j *Job) RankKey { return RankKey{Major: int64(j.Class), Minor: j.Deadline} }

// TestQueueRunsAreTheHeap plays random pushes, takes, peeks and resets on
// a keyed queue that keeps its runs and on one held in its heap from the
// start, and wants every peek to find the same job: from jobs that always
// come in order within their class, through ties, to jobs out of order
// (which move the runs into the heap).
func TestQueueRunsAreTheHeap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		disorder float64 // share of pushes whose deadline goes back in time
		ties     bool    // deadlines on a coarse grid
	}{
		{"in order", 0, false},
		{"in order with ties", 0, true},
		{"rarely out of order", 0.01, false},
		{"often out of order", 0.3, true},
	} {
		for seed := range uint64(20) {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				var runs, heap queue
				runs.init(byClassDeadline{})
				heap.init(byClassDeadline{})
				heap.heaped = true
				var stamps uint64
				var waiting []*Job
				now := 0.0
				for step := range 5000 {
					switch op := rng.IntN(10); {
					case op < 5: // a job arrives
						now += rng.ExpFloat64()
						d := now + 0.1
						if rng.Float64() < tc.disorder {
							d = now - rng.Float64()
						}
						if tc.ties {
							d = float64(int(d))
						}
						stamps++
						j := &Job{ID: int64(step), Class: Class(rng.IntN(2)), Deadline: d, Batch: int32(1 + rng.IntN(8)), stamp: stamps}
						runs.push(entry{job: j, stamp: j.stamp})
						heap.push(entry{job: j, stamp: j.stamp})
						waiting = append(waiting, j)
					case op < 7 && len(waiting) > 0: // a waiting job leaves
						k := rng.IntN(len(waiting))
						waiting[k].stamp = 0
						waiting[k] = waiting[len(waiting)-1]
						waiting = waiting[:len(waiting)-1]
						if len(waiting) == 0 {
							runs.reset()
							heap.reset()
						}
					default: // a lane looks for work that fits
						limit := int32(1 + rng.IntN(8))
						fits := func(j *Job) bool { return j.Batch <= limit }
						strict := rng.IntN(4) == 0
						a, b := runs.peek(fits, strict), heap.peek(fits, strict)
						if a != b {
							t.Fatalf("step %d: peek(batch <= %d, strict %v) = %v from the runs, %v from the heap", step, limit, strict, a, b)
						}
					}
				}
				if tc.disorder == 0 && runs.heaped {
					t.Error("jobs in order moved the runs into the heap")
				}
			})
		}
	}
}
