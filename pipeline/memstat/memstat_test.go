package memstat

import "testing"

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
