// Package memstat measures memory use for benchmarks and tests that state a
// memory bound: bounded memory is a property mlsched promises for streams of
// any length, so it is measured rather than assumed. CPU gives the process's
// CPU time too, which the profile's observer and the benchmarks that report
// jobs per CPU-second read.
package memstat

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapObjects is the heap memory occupied by objects, live or not yet swept:
// runtime.MemStats.HeapAlloc, read without stopping the world (ReadMemStats
// does, and at this rate that slowed the code measured).
const heapObjects = "/memory/classes/heap/objects:bytes"

// PeakHeap runs f and returns the largest heap (bytes) seen while it ran,
// sampled every 5 ms after a collection.
func PeakHeap(f func()) (peak uint64) {
	runtime.GC()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: heapObjects}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
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
