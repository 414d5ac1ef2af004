package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimersAgainstASortedList sets, re-sets and pops slots at random and
// checks every pop against the pending set kept as a plain list: the
// earliest time first, ties in the order set, nothing stale.
func TestTimersAgainstASortedList(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var tm timers
		base := tm.init([]int{2, 1, 3})
		if want := []int32{0, 3, 5}; !slices.Equal(base, want) {
			t.Fatalf("slot bases %v, want %v", base, want)
		}
		type pending struct {
			slot int32
			time float64
			seq  uint64
		}
		var ref []pending
		var seq uint64
		for step := range 2000 {
			if rng.IntN(3) > 0 || len(ref) == 0 {
				s := int32(rng.IntN(len(tm.slots)))
				at := float64(rng.IntN(50)) // coarse, so ties are common
				seq++
				tm.set(s, at, seq)
				ref = slices.DeleteFunc(ref, func(p pending) bool { return p.slot == s })
				ref = append(ref, pending{s, at, seq})
				continue
			}
			i := slices.IndexFunc(ref, func(p pending) bool {
				for _, q := range ref {
					if q.time < p.time || q.time == p.time && q.seq < p.seq {
						return false
					}
				}
				return true
			})
			want := ref[i]
			ref = slices.Delete(ref, i, i+1)
			if s, ok := tm.next(); !ok || s != want.slot {
				t.Fatalf("seed %d step %d: next is %d (%v), want %d", seed, step, s, ok, want.slot)
			}
			got := tm.pop()
			if got.time != want.time || got.seq != want.seq || got.pos != -1 {
				t.Fatalf("seed %d step %d: popped %+v, want slot %d at %v (seq %d)", seed, step, *got, want.slot, want.time, want.seq)
			}
			if len(tm.heap) != len(ref) {
				t.Fatalf("seed %d step %d: %d pending, want %d", seed, step, len(tm.heap), len(ref))
			}
		}
	}
}
