package profile

import (
	"math"
	"slices"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// The profile reports its progress in estimated work, not in counts of
// configurations: a ResNet-50 batch of 64 takes a thousand times as long
// as an mlp batch of 1, and a count made the time left it implied wrong
// by minutes. The estimate is the time each measurement would take on a
// reference core that runs refFLOPS floating-point operations a second
// (what one core of this project's 2-core machine ran ResNet-50 at: 8.2
// GFLOP in 79 ms), with perRun added to every run. Only the ratios between
// measurements matter: the time left is the time spent scaled by the work
// left over the work done, so a slower machine slows the estimate with it.
const (
	refFLOPS = 100e9
	perRun   = 20 * time.Microsecond
)

// latencyOf estimates one inference of batch samples of model on the
// reference core.
func (w work) latencyOf(model string, batch int) time.Duration {
	m, ok := w.cat.Lookup(model)
	if !ok {
		return perRun
	}
	return perRun + time.Duration(float64(m.FLOPsPerSample)*float64(batch)/refFLOPS*float64(time.Second))
}

// cost is the time measuring a configuration whose runs each take latency
// costs under t: warmups untimed runs and as many timed runs as t.done
// asks for.
func (t timing) cost(latency time.Duration, warmups int) time.Duration {
	latency = max(latency, time.Nanosecond)
	runsFor := func(d time.Duration) int {
		if d <= 0 {
			return 0
		}
		return int(math.Ceil(float64(d) / float64(latency)))
	}
	n := t.maxRepeats
	n = min(n, max(t.repeats, runsFor(t.minTime)))
	if t.maxTime < time.Duration(math.MaxInt64) {
		n = min(n, max(t.minRepeats, runsFor(t.maxTime)))
	}
	return time.Duration(warmups+n) * latency
}

// units turns an estimated time into progress units (microseconds), at
// least one so that every step shows.
func units(d time.Duration) int64 { return max(1, d.Microseconds()) }

// work estimates each of a profile's measurements, in progress units.
type work struct {
	cfg Config
	t   timing
	cat *catalog.Catalog
}

// matmul is one n×n product's measurement (2n³ operations a run).
func (w work) matmul(n int) int64 {
	flops := 2 * float64(n) * float64(n) * float64(n)
	return units(time.Duration(w.cfg.MatMul.Repeats) * (perRun + time.Duration(flops/refFLOPS*float64(time.Second))))
}

// contention is one round's measurement with sessions sessions, each
// running a contention model, of the average latency, warm-up and timed.
func (w work) contention(sessions int) int64 {
	c := w.cfg.Contention
	var per time.Duration
	for _, m := range c.Models {
		per += w.latencyOf(m, c.Batch)
	}
	per /= time.Duration(max(1, len(c.Models)))
	return units(time.Duration((w.cfg.Warmup+c.Repeats)*sessions) * per)
}

// series is one model's batch sizes at one precision and thread count.
func (w work) series(name string) int64 {
	var d time.Duration
	sizes := w.cfg.BatchSizesOf(name)
	for _, b := range sizes {
		d += w.t.cost(w.latencyOf(name, b), w.t.warmupsOf(b, slices.Max(sizes), w.cfg.Provider != profilespec.ProviderCUDA))
	}
	return units(d)
}

// operators is the timing of one series' nodes (profile.operators): each
// batch size's warm-up and profiled runs.
func (w work) operators(name string) int64 {
	var d time.Duration
	for _, b := range w.cfg.OperatorBatchesOf(name) {
		d += time.Duration(w.cfg.Warmup+w.cfg.Operators.Runs) * w.latencyOf(name, b)
	}
	return units(d)
}

// serving is the serving path's timed calls at one batch size.
func (w work) serving() int64 { return units(time.Duration(w.cfg.Serving.Calls) * perRun) }

// total is the whole profile's work: the models' series, the contention
// rounds, the serving path (when measured) and the products (gonum's too
// when measured).
func (w work) total(gonumMatMul, serving bool) int64 {
	var total int64
	for _, n := range w.cfg.MatMul.Sizes {
		total += w.matmul(n) * int64(len(w.cfg.Threads))
		if gonumMatMul {
			total += w.matmul(n)
		}
	}
	for _, k := range w.cfg.Contention.Sessions {
		total += w.contention(k) * int64(w.cfg.Contention.Rounds)
	}
	if serving {
		total += w.serving() * int64(len(w.cfg.Serving.BatchSizes))
	}
	for _, name := range w.cfg.ModelNames() {
		precisions := w.cfg.Precisions
		if m, ok := w.cat.Lookup(name); ok && !m.Zoo() {
			precisions = m.Precisions // a file is measured in what it holds
		}
		total += w.series(name) * int64(len(precisions)*len(w.cfg.Threads))
		if slices.Contains(precisions, FP32) && len(w.cfg.OperatorBatchesOf(name)) > 0 {
			total += w.operators(name) * int64(len(w.cfg.Threads))
		}
	}
	return total
}
