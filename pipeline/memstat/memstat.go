// Package memstat measures memory use for benchmarks and tests that state a
// memory bound: bounded memory is a property mlsched promises for streams of
// any length, so it is measured rather than assumed.
package memstat

import (
	"runtime"
	"time"
)

// PeakHeap runs f and returns the largest live heap (bytes) seen while it
// ran, sampled every 5 ms after a collection.
func PeakHeap(f func()) (peak uint64) {
	runtime.GC()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak
}
