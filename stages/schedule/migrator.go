package schedule

import (
	"fmt"
	"math"
	"time"

	"github.com/mlsched/mlsched/stages/lib/placementnet"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// netMigrator is the learned policy's migration rule in one simulation:
// the train stage's placement network served through onnxruntime, a batch
// of decisions in one call, with the decision cache in front of it. Its
// inputs are sim's MigrationFeatures.Vector, the code that built the
// training points. It counts what serving did (servingStats).
type netMigrator struct {
	net   *placementnet.Network
	cache *placementnet.Cache // nil: off
	audit bool

	// Scratch for a batch, allocated once: each decision's inputs, key and
	// cached answer, and the points the network evaluates.
	xs     [][sim.NumFeatures]float32
	keys   []placementnet.Key
	keyed  []bool
	cached []float32
	hit    []bool
	eval   []int // the decisions of the batch the network evaluates
	x      [][sim.NumFeatures]float32
	p      []float32
	one    [1]sim.MigrationFeatures
	oneOut [1]bool

	stats servingStats
	// err is the first failure of the network, which a Migrator cannot
	// return: every later decision is a stay, and the simulation's
	// caller reports it.
	err error
}

var _ sim.BatchMigrator = (*netMigrator)(nil)

// servingStats count what a learned simulation's serving did. Every count
// is a function of the simulation; Inference is wall-clock time.
type servingStats struct {
	// Decisions were asked in Batches (the simulator's); the network
	// evaluated Evaluated points in Calls onnxruntime runs.
	Decisions, Batches, Calls, Evaluated int64
	// Hits were answered from the cache; Changed of them would have gone
	// the other way evaluated exactly (counted when auditing).
	Hits, Changed int64
	// Inference is the wall-clock time in onnxruntime.
	Inference time.Duration
	// Wall-clock latency of each path a decision takes: a batch of one
	// through onnxruntime, a batch of several (per decision), and a cache
	// hit (the standardisation, the key and the lookup).
	Uncached, Batched, Cached latencies
}

// latencies is a histogram of wall-clock times on a geometric grid of
// 1% steps from 10 ns to about 1 s: fixed in size, so that recording a
// decision allocates nothing, and a quantile of it is within 1%.
type latencies struct {
	n      int64
	bucket [latencyBuckets]int64
}

const (
	latencyBuckets = 1852 // 1.01^1852 × 10 ns ≈ 1 s
	latencyFloor   = 10e-9
)

var latencyLog = math.Log(1.01)

// add records one duration.
func (l *latencies) add(d time.Duration) {
	s := d.Seconds()
	i := 0
	if s > latencyFloor {
		i = min(int(math.Log(s/latencyFloor)/latencyLog), latencyBuckets-1)
	}
	l.bucket[i]++
	l.n++
}

// quantile is the q-quantile in seconds: the upper edge of the bucket that
// holds it; NaN with nothing recorded.
func (l *latencies) quantile(q float64) float64 {
	if l.n == 0 {
		return math.NaN()
	}
	rank := int64(math.Ceil(q * float64(l.n)))
	var seen int64
	for i, c := range l.bucket {
		if seen += c; seen >= max(rank, 1) {
			return latencyFloor * math.Exp(float64(i+1)*latencyLog)
		}
	}
	return latencyFloor * math.Exp(latencyBuckets*latencyLog)
}

// newNetMigrator loads the placement network model for batches of up to
// batch decisions, with the decision cache cc describes (none of size 0).
func newNetMigrator(model []byte, batch int, cc schedulespec.Cache) (*netMigrator, error) {
	var c *placementnet.Cache
	if cc.Size > 0 {
		var err error
		if c, err = placementnet.NewCache(placementnet.CacheOptions{Step: cc.Step, Size: cc.Size}); err != nil {
			return nil, err
		}
	}
	net, err := placementnet.Load(model, placementnet.Options{MaxBatch: batch})
	if err != nil {
		return nil, err
	}
	m := &netMigrator{net: net, cache: c, audit: cc.Audit && c != nil,
		xs: make([][sim.NumFeatures]float32, batch), keys: make([]placementnet.Key, batch), keyed: make([]bool, batch),
		cached: make([]float32, batch), hit: make([]bool, batch), eval: make([]int, 0, batch),
		x: make([][sim.NumFeatures]float32, batch), p: make([]float32, batch)}
	return m, nil
}

// Migrate implements sim.Migrator: a batch of one.
func (m *netMigrator) Migrate(f *sim.MigrationFeatures) bool {
	m.one[0] = *f
	m.MigrateBatch(m.one[:], m.oneOut[:])
	return m.oneOut[0]
}

// MigrateBatch implements sim.BatchMigrator: the cached answers, and the
// network's for the rest, evaluated together (in runs of at most the
// network's MaxBatch). Migrate when the probability exceeds
// trainspec.PlacementThreshold. With the audit on, cached points are evaluated too,
// and a cached answer that differs from the exact one is counted; the
// decision stays the cached one, as it would be served.
func (m *netMigrator) MigrateBatch(fs []sim.MigrationFeatures, out []bool) {
	m.grow(len(fs))
	m.stats.Decisions += int64(len(fs))
	m.stats.Batches++
	m.eval = m.eval[:0]
	for i := range fs {
		fs[i].Vector(&m.xs[i])
		m.hit[i], m.keyed[i] = false, false
		if m.cache != nil {
			t0 := time.Now()
			var z [sim.NumFeatures]float32
			m.net.Standardize(&m.xs[i], &z)
			if m.keys[i], m.keyed[i] = m.cache.Key(&z); m.keyed[i] {
				if p, ok := m.cache.Get(m.keys[i]); ok {
					m.stats.Cached.add(time.Since(t0))
					m.stats.Hits++
					m.hit[i], m.cached[i] = true, p
					out[i] = p > trainspec.PlacementThreshold
					if !m.audit {
						continue
					}
				}
			}
		}
		m.x[len(m.eval)] = m.xs[i]
		m.eval = append(m.eval, i)
	}
	if len(m.eval) == 0 {
		return
	}
	most := m.net.MaxBatch()
	for a := 0; a < len(m.eval); a += most {
		b := min(a+most, len(m.eval))
		t0 := time.Now()
		if err := m.net.Eval(m.x[a:b], m.p[a:b]); err != nil && m.err == nil {
			m.err = fmt.Errorf("learned migration: %w", err)
		}
		d := time.Since(t0)
		m.stats.Inference += d
		if b-a == 1 {
			m.stats.Uncached.add(d)
		} else {
			for range b - a {
				m.stats.Batched.add(d / time.Duration(b-a))
			}
		}
		m.stats.Calls++
	}
	if m.err != nil {
		clear(out)
		return
	}
	m.stats.Evaluated += int64(len(m.eval))
	for k, i := range m.eval {
		p := m.p[k]
		if m.hit[i] {
			if (p > trainspec.PlacementThreshold) != (m.cached[i] > trainspec.PlacementThreshold) {
				m.stats.Changed++
			}
			continue
		}
		out[i] = p > trainspec.PlacementThreshold
		if m.keyed[i] {
			m.cache.Put(m.keys[i], p)
		}
	}
}

// grow makes the scratch hold n decisions: the simulator sends at most the
// configured batch, so this allocates only if asked for more.
func (m *netMigrator) grow(n int) {
	if n <= len(m.xs) {
		return
	}
	m.xs = make([][sim.NumFeatures]float32, n)
	m.keys, m.keyed = make([]placementnet.Key, n), make([]bool, n)
	m.cached, m.hit = make([]float32, n), make([]bool, n)
	m.x, m.p = make([][sim.NumFeatures]float32, n), make([]float32, n)
}

// close frees the network's session.
func (m *netMigrator) close() error { return m.net.Close() }
