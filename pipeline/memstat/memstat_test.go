package memstat

import (
	"testing"
	"time"
)

func TestPeakHeapSeesAnAllocation(t *testing.T) {
	var keep []byte
	peak := PeakHeap(func() {
		keep = make([]byte, 64<<20)
		for i := range keep {
			keep[i] = byte(i)
		}
	})
	if peak < 64<<20 {
		t.Errorf("peak heap %d bytes while holding 64 MiB", peak)
	}
	_ = keep
}

// TestPeakRSSSeesMemoryTouched checks that the peak resident set grows by
// at least what the process touches beyond it.
func TestPeakRSSSeesMemoryTouched(t *testing.T) {
	before, ok := PeakRSS()
	if !ok {
		t.Skip("no peak resident set size on this platform")
	}
	keep := make([]byte, before+96<<20)
	for i := 0; i < len(keep); i += 4096 {
		keep[i] = 1
	}
	after, ok := PeakRSS()
	if !ok || after < before+96<<20 {
		t.Errorf("PeakRSS = %d MiB before touching %d MiB, %d MiB (%v) after", before>>20, len(keep)>>20, after>>20, ok)
	}
	_ = keep[0]
}

// TestCPUCountsWork: the process's CPU time grows by the work a loop does
// on one core (50 million dependent multiply-adds, some 50 ms; a busy
// machine lengthens the wall time, not the CPU time).
func TestCPUCountsWork(t *testing.T) {
	before, ok := CPU()
	if !ok {
		t.Skip("this system gives no process CPU time (getrusage)")
	}
	x := 1.0
	for range 50_000_000 {
		x = x*1.0000001 + 1e-9
	}
	after, _ := CPU()
	if got := after - before; got < 10*time.Millisecond || x == 0 {
		t.Errorf("50 million multiply-adds added %s of CPU time, want at least 10ms", got)
	}
}
