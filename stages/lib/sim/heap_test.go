package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimersAgainstASortedList sets, re-sets and pops slots at random and
// checks every pop against the pending set kept as a plain list: the
// earliest time first, ties in the order set, nothing stale. It runs on a
// cluster of few slots, which are scanned, and on one of many, kept in a
// heap; each is cloned midway, as Sim.Fork does, and the clone is checked
// from there.
func TestTimersAgainstASortedList(t *testing.T) {
	for _, tt := range []struct {
		lanes []int
		base  []int32
		small bool
	}{
		{[]int{2, 1, 3}, []int32{0, 3, 5}, true},
		{[]int{7, 1, 12}, []int32{0, 8, 10}, false},
	} {
		for seed := range uint64(20) {
			var tm timers
			base := tm.init(tt.lanes)
			if !slices.Equal(base, tt.base) || tm.small != tt.small {
				t.Fatalf("lanes %v: slot bases %v (small %v), want %v (%v)", tt.lanes, base, tm.small, tt.base, tt.small)
			}
			checkTimers(t, &tm, seed)
		}
	}
}

// checkTimers runs TestTimersAgainstASortedList's steps on tm.
func checkTimers(t *testing.T, tm *timers, seed uint64) {
	t.Helper()
	{
		rng := rand.New(rand.NewPCG(seed, 1))
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
			if tm.len() != len(ref) {
				t.Fatalf("seed %d step %d: %d pending, want %d", seed, step, tm.len(), len(ref))
			}
			if step == 1000 {
				// Go on with a clone: the original must not see its steps.
				orig, before := *tm, slices.Clone(tm.slots)
				defer func() {
					if !slices.Equal(orig.slots, before) {
						t.Errorf("seed %d: the clone's steps changed the original's slots", seed)
					}
				}()
				*tm = tm.clone()
			}
		}
	}
}
