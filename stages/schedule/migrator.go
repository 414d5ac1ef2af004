package schedule

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mlsched/mlsched/stages/lib/placementnet"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// netMigrator is the learned policy's migration rule in one simulation:
// the train stage's placement network, evaluated as
// schedule.learned.evaluator says (newEvaluator), a batch of decisions in
// one call, with the decision cache in front of it. Its inputs are sim's
// MigrationFeatures.Vector, the code that built the training points. It
// counts what serving did (servingStats).
type netMigrator struct {
	net       placementnet.Evaluator
	evaluator string              // schedule.learned.evaluator
	cache     *placementnet.Cache // nil: off
	audit     bool

	// Scratch for a batch, allocated once: each decision's inputs, their
	// standardized point (with the cache: its key's, which the network
	// then reads rather than standardizing again), key and cached answer,
	// and the points the network evaluates, raw and standardized.
	xs     [][sim.NumFeatures]float32
	zs     [][sim.NumFeatures]float32
	keys   []placementnet.Key
	keyed  []bool
	cached []float32
	hit    []bool
	eval   []int // the decisions of the batch the network evaluates
	x, z   [][sim.NumFeatures]float32
	p      []float32
	one    [1]sim.MigrationFeatures
	oneOut [1]bool

	stats servingStats
	// pool lends the migrator to one simulation after another (nil: made
	// for one); referredBefore is what its guard had referred before this
	// simulation.
	pool           *migratorPool
	referredBefore int64
	// start is when the migrator was made: now reads the monotonic clock
	// from it, one clock read where time.Now makes two, in a path whose
	// every step is counted in tens of nanoseconds.
	start time.Time
	// err is the first failure of the network, which a Migrator cannot
	// return: every later decision is a stay, and the simulation's
	// caller reports it.
	err error
}

var _ sim.BatchMigrator = (*netMigrator)(nil)

// servingStats count what a learned simulation's serving did. Every count
// is a function of the simulation; Inference is wall-clock time.
type servingStats struct {
	// Decisions were asked in Batches (the simulator's); the evaluator
	// evaluated Evaluated points in Calls calls.
	Decisions, Batches, Calls, Evaluated int64
	// Hits were answered from the cache; Changed of them would have gone
	// the other way evaluated exactly (counted when auditing).
	Hits, Changed int64
	// Inference is the wall-clock time in the evaluator.
	Inference time.Duration
	// Wall-clock latency of each path a decision takes: a batch of one
	// through the evaluator, a batch of several (per decision), and a
	// cache hit (the standardisation, the key and the lookup).
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

var (
	latencyLog = math.Log(1.01)
	// latencyEdges[i] is bucket i's lower edge, latencyFloor·1.01^i
	// seconds (bucket 0 takes everything below its upper edge too).
	latencyEdges = func() (e [latencyBuckets + 1]float64) {
		for i := range e {
			e[i] = latencyFloor * math.Exp(float64(i)*latencyLog)
		}
		return e
	}()
)

// add records one duration.
func (l *latencies) add(d time.Duration) {
	l.bucket[latencyBucket(d.Seconds())]++
	l.n++
}

// latencyBucket is the bucket of s seconds: the last whose lower edge is
// at most s. Its first guess is from s's binary exponent and mantissa,
// log2(1+t) ≈ t for t in [0, 1), which is never above the true logarithm
// and at most 0.087 below it, 6 buckets at 1.01 a bucket: a few steps
// along the edges then find the bucket, where math.Log cost more than
// the rest of recording a decision.
func latencyBucket(s float64) int {
	if !(s >= latencyEdges[1]) {
		return 0
	}
	b := math.Float64bits(s / latencyFloor)
	log2 := float64(int(b>>52)-1023) + math.Float64frombits(b&(1<<52-1)|1023<<52) - 1
	i := min(max(int(log2*(math.Ln2/latencyLog))-1, 0), latencyBuckets-1)
	for i+1 < latencyBuckets && latencyEdges[i+1] <= s {
		i++
	}
	return i
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
			return latencyEdges[i+1]
		}
	}
	return latencyEdges[latencyBuckets]
}

// newNetMigrator serves the placement network model as l says: its
// evaluator, the most decisions one call takes, and the decision cache
// (none of size 0).
func newNetMigrator(model []byte, l schedulespec.Learned) (*netMigrator, error) {
	var c *placementnet.Cache
	if cc := l.Cache; cc.Size > 0 {
		var err error
		if c, err = placementnet.NewCache(placementnet.CacheOptions{Step: cc.Step, Size: cc.Size}); err != nil {
			return nil, err
		}
	}
	net, err := newEvaluator(model, l.Evaluator, l.Batch)
	if err != nil {
		return nil, err
	}
	batch := l.Batch
	m := &netMigrator{net: net, evaluator: l.Evaluator, cache: c, audit: l.Cache.Audit && c != nil, start: time.Now(),
		eval: make([]int, 0, batch)}
	m.grow(batch)
	return m, nil
}

// newEvaluator loads model into the evaluator schedule.learned.evaluator
// names, for batches of up to batch decisions. The Go forward pass is
// guarded by onnxruntime, loaded only if a decision needs it, so that
// every decision is onnxruntime's.
func newEvaluator(model []byte, name string, batch int) (placementnet.Evaluator, error) {
	switch name {
	case schedulespec.EvaluatorONNXRuntime:
		return placementnet.Load(model, placementnet.Options{MaxBatch: batch})
	case schedulespec.EvaluatorGo:
		fast, err := placementnet.LoadGo(model, placementnet.Options{MaxBatch: batch})
		if err != nil {
			return nil, err
		}
		return placementnet.NewGuarded(fast, func() (placementnet.Evaluator, error) { return loadReferee(model) }, trainspec.PlacementThreshold), nil
	}
	return nil, fmt.Errorf("unknown evaluator %q", name)
}

// loadReferee loads model into onnxruntime for the guard of the Go
// forward pass, which asks about one point at a time: a session with one
// binding loads in about half the time of one with 32.
func loadReferee(model []byte) (placementnet.Evaluator, error) {
	return placementnet.Load(model, placementnet.Options{MaxBatch: 1})
}

// checkServes loads model as l serves it, once before any simulation, so
// that a network that cannot serve fails the stage rather than a
// decision: with the Go forward pass, onnxruntime's session for its guard
// too, which a simulation loads only when a decision needs it.
func checkServes(model []byte, l schedulespec.Learned) error {
	ev, err := newEvaluator(model, l.Evaluator, l.Batch)
	if err != nil {
		return err
	}
	if l.Evaluator == schedulespec.EvaluatorGo {
		ref, err := loadReferee(model)
		if err != nil {
			return errors.Join(err, ev.Close())
		}
		return errors.Join(ref.Close(), ev.Close())
	}
	return ev.Close()
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
			t0 := m.now()
			m.net.Standardize(&m.xs[i], &m.zs[i])
			if m.keys[i], m.keyed[i] = m.cache.Key(&m.zs[i]); m.keyed[i] {
				if p, ok := m.cache.Get(m.keys[i]); ok {
					m.stats.Cached.add(m.now() - t0)
					m.stats.Hits++
					m.hit[i], m.cached[i] = true, p
					out[i] = p > trainspec.PlacementThreshold
					if !m.audit {
						continue
					}
				}
			}
		}
		m.eval = append(m.eval, i)
	}
	if len(m.eval) == 0 {
		return
	}
	// The points to evaluate: the batch's own, unless the cache answered
	// some alone (no audit), when the rest are gathered.
	x, z := m.xs[:len(fs)], m.zs[:len(fs)]
	if len(m.eval) < len(fs) {
		for k, i := range m.eval {
			m.x[k], m.z[k] = m.xs[i], m.zs[i]
		}
		x, z = m.x[:len(m.eval)], m.z[:len(m.eval)]
	}
	most := m.net.MaxBatch()
	for a := 0; a < len(m.eval); a += most {
		b := min(a+most, len(m.eval))
		t0 := m.now()
		var err error
		if m.cache != nil {
			err = m.net.EvalStandardized(x[a:b], z[a:b], m.p[a:b])
		} else {
			err = m.net.Eval(x[a:b], m.p[a:b])
		}
		if err != nil && m.err == nil {
			m.err = fmt.Errorf("learned migration: %w", err)
		}
		d := m.now() - t0
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

// now is the monotonic time since the migrator was made.
func (m *netMigrator) now() time.Duration { return time.Since(m.start) }

// grow makes the scratch hold n decisions: the simulator sends at most the
// configured batch, so this allocates only if asked for more.
func (m *netMigrator) grow(n int) {
	if n <= len(m.xs) {
		return
	}
	m.xs, m.zs = make([][sim.NumFeatures]float32, n), make([][sim.NumFeatures]float32, n)
	m.keys, m.keyed = make([]placementnet.Key, n), make([]bool, n)
	m.cached, m.hit = make([]float32, n), make([]bool, n)
	m.x, m.z, m.p = make([][sim.NumFeatures]float32, n), make([][sim.NumFeatures]float32, n), make([]float32, n)
}

// referred is how many of the points the Go forward pass evaluated in
// this simulation lay so close to the threshold that onnxruntime answered
// them too (placementnet.Guarded), and false for an evaluator without a
// guard.
func (m *netMigrator) referred() (int64, bool) {
	g, ok := m.net.(*placementnet.Guarded)
	if !ok {
		return 0, false
	}
	return g.Referred() - m.referredBefore, true
}

// close frees the network's session.
func (m *netMigrator) close() error { return m.net.Close() }

// release ends the migrator's simulation: a pool's migrator goes back to
// it, unless its network failed; any other is closed (a failed one of a
// pool is closed again by the pool, which does nothing).
func (m *netMigrator) release() error {
	if m.pool == nil || m.err != nil {
		return m.close()
	}
	m.pool.put(m)
	return nil
}

// reset readies a migrator for another simulation, as newNetMigrator made
// it: an empty cache, no counts, no error. What it keeps changes no
// answer: the network, its memo of standardized inputs (a pure function's
// values) and the guard's onnxruntime session, if a decision loaded it.
func (m *netMigrator) reset() {
	if m.cache != nil {
		m.cache.Reset()
	}
	m.stats, m.err = servingStats{}, nil
	if g, ok := m.net.(*placementnet.Guarded); ok {
		m.referredBefore = g.Referred()
	}
	m.start = time.Now()
}

// migratorPool lends the learned policy's migrators to the stage's
// simulations, one simulation at a time each, so that the network is
// parsed, its cache allocated and its guard's onnxruntime session loaded
// once per simulation running at once rather than once per simulation
// (onnxruntime's session took 0.6 to 0.75 ms to make here).
type migratorPool struct {
	model []byte
	l     schedulespec.Learned
	mu    sync.Mutex
	free  []*netMigrator
	made  []*netMigrator // every migrator the pool made, to close
}

// get lends a migrator: a free one reset, or a new one.
func (p *migratorPool) get() (*netMigrator, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		m.reset()
		return m, nil
	}
	p.mu.Unlock()
	m, err := newNetMigrator(p.model, p.l)
	if err != nil {
		return nil, err
	}
	m.pool = p
	p.mu.Lock()
	p.made = append(p.made, m)
	p.mu.Unlock()
	return m, nil
}

// put takes back a migrator whose simulation is over.
func (p *migratorPool) put(m *netMigrator) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, m)
}

// close closes every migrator the pool made; none may be lent then.
func (p *migratorPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, m := range p.made {
		errs = append(errs, m.close())
	}
	p.made, p.free = nil, nil
	return errors.Join(errs...)
}
