package profile

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// Backend and provider names of the rows this stage measures.
const (
	backendORT   = "onnxruntime"
	backendGonum = "gonum"
	providerCPU  = ort.CPU
	providerGo   = "go"
	deviceCPU    = "cpu"
)

// target is where the models run: an execution provider, the GPU it runs
// on, and the device name the rows carry.
type target struct {
	provider string // onnxruntime's name: ort.CPU or ort.CUDA
	gpu      int
	device   string
}

// targetOf returns the target the profile section names.
func targetOf(cfg Config) target {
	t := target{provider: ort.CPU, device: cfg.DeviceName()}
	if cfg.Provider == ProviderCUDA {
		t.provider, t.gpu = ort.CUDA, cfg.GPU
	}
	return t
}

// options returns the session options of threads intra-op threads on t.
func (t target) options(threads int) ort.SessionOptions {
	return ort.SessionOptions{Provider: t.provider, Device: t.gpu, IntraOpThreads: threads, InterOpThreads: 1}
}

// timing says how many runs a configuration gets.
type timing struct {
	warmup, repeats, minRepeats, maxRepeats int
	minTime, maxTime                        time.Duration
}

// exactly is the timing of n timed runs after warmup ones, whatever they
// take.
func exactly(warmup, n int) timing {
	return timing{warmup: warmup, repeats: n, minRepeats: n, maxRepeats: n, maxTime: time.Duration(math.MaxInt64)}
}

// warmupsOf is how many untimed runs batch size batch of a series whose
// largest is largest gets. Each new shape faults memory in on its first
// runs, and a timed run that faults is slow (docs/fidelity.md). One
// session serving every size of a series on the CPU (shared) grows its
// memory once, for the largest, which then gets t.warmup runs; a smaller
// size reuses that memory and needs one run, which lays its own shapes
// out: warmed after the largest, a smaller size's second run faulted in
// no page (TestSmallerSizesReuseMemory; docs/fidelity.md).
// A session per size (a GPU's) warms each fully.
func (t timing) warmupsOf(batch, largest int, shared bool) int {
	if !shared || batch >= largest {
		return t.warmup
	}
	return min(t.warmup, 1)
}

// done says whether a configuration that has run n times, for used in
// all, has run enough: repeats runs that took minTime, maxRepeats runs,
// or minRepeats runs that took maxTime.
func (t timing) done(n int, used time.Duration) bool {
	return n >= t.maxRepeats || n >= t.repeats && used >= t.minTime || n >= t.minRepeats && used >= t.maxTime
}

// timeRuns runs f warmup times untimed, then timed until t.done. It
// returns each timed run's latency in seconds.
func timeRuns(ctx context.Context, t timing, f func() error) ([]float64, error) {
	for range t.warmup {
		if err := f(); err != nil {
			return nil, err
		}
	}
	var out []float64
	var used time.Duration
	for !t.done(len(out), used) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		d := time.Since(t0)
		used += d
		out = append(out, d.Seconds())
	}
	return out, nil
}

// fill gives an input tensor seeded values in [-1, 1): latency does not
// depend on them, but denormals or all-zero inputs could take odd paths.
func fill(x []float32, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := range x {
		x[i] = r.Float32()*2 - 1
	}
}

// newModelSession opens a session of a built model at one batch size.
func newModelSession(tg target, model []byte, m catalog.Model, batch, threads int) (*ort.Session, error) {
	s, err := ort.NewSession(model, m.Input, m.InputDims(batch), m.Output, m.OutputDims(batch), tg.options(threads))
	if err != nil {
		return nil, err
	}
	fill(s.Input(), uint64(batch))
	return s, nil
}

// config is one batch size of a series being measured.
type config struct {
	batch int
	b     *ort.Binding
	lat   []float64
	used  time.Duration
	err   error // why it cannot run: it is dropped from the series
}

// measureSeries times one model, precision and thread count at every
// batch size, interleaved: each runs its warmup, then the batch sizes take
// turns, one timed run each per round, until each is done (t.done). A
// slow drift of the machine (its clock, a neighbour's load) then falls on
// every batch size alike instead of on whichever ran at the time, so the
// curve across batch sizes keeps its shape. A batch size whose session
// cannot be made or run is returned in failed with the reason, and the
// rest go on; an interrupt is an error.
//
// ran, if not nil, is told of each run (warm-up or timed) at its batch
// size as it ends: the profile's progress moves within a series.
func measureSeries(ctx context.Context, tg target, t timing, model []byte, m catalog.Model, precision string, batches []int, threads int, ran func(batch int)) (rows []Sample, failed map[int]error, err error) {
	tell := func(b int) {
		if ran != nil {
			ran(b)
		}
	}
	cs := make([]*config, len(batches))
	var sessions []*ort.Session
	// On the CPU one session serves the series, a binding per batch size:
	// the graph is optimised once, not once per batch size. A GPU gets a
	// session per batch size instead, each always run at its one shape, as
	// a GPU deployment keeps an engine per batch size: onnxruntime's CUDA
	// convolutions set themselves up again whenever a session's input
	// shape changes, which makes interleaved runs of one session a hundred
	// times slower (docs/gpu.md).
	var shared *ort.Session
	var serr error
	open := func(b int) (*ort.Session, error) {
		s, err := ort.NewSession(model, m.Input, m.InputDims(b), m.Output, m.OutputDims(b), tg.options(threads))
		if err == nil {
			sessions = append(sessions, s)
		}
		return s, err
	}
	if tg.provider == ort.CPU {
		shared, serr = open(batches[0])
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for i, b := range batches {
		c := &config{batch: b, err: serr}
		cs[i] = c
		if c.err != nil {
			continue
		}
		if shared != nil {
			c.b, c.err = shared.Bind(m.InputDims(b), m.OutputDims(b))
		} else {
			var s *ort.Session
			if s, c.err = open(b); c.err == nil {
				c.b = s.First() // a session of this size alone
			}
		}
		if c.err != nil {
			continue
		}
		fill(c.b.Input(), uint64(b))
	}
	// Warm-ups, the largest batch size first: its runs grow the shared
	// session's memory, which the smaller sizes then reuse (warmupsOf).
	order := slices.SortedFunc(slices.Values(cs), func(a, b *config) int { return cmp.Compare(b.batch, a.batch) })
	for _, c := range order {
		for range t.warmupsOf(c.batch, order[0].batch, shared != nil) {
			if c.err != nil {
				break
			}
			if c.err = c.b.Run(); c.err == nil {
				tell(c.batch)
			}
		}
	}
	for more := true; more; {
		more = false
		for _, c := range cs {
			if c.err != nil || t.done(len(c.lat), c.used) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			t0 := time.Now()
			if c.err = c.b.Run(); c.err != nil {
				continue
			}
			d := time.Since(t0)
			c.lat, c.used = append(c.lat, d.Seconds()), c.used+d
			tell(c.batch)
			more = true
		}
	}
	failed = map[int]error{}
	for _, c := range cs {
		if c.err != nil {
			failed[c.batch] = c.err
			continue
		}
		rows = append(rows, samplesOf(c.lat, Sample{Kind: KindInference, Backend: backendORT, Provider: tg.provider, Device: tg.device,
			Model: m.Name, Precision: precision, Batch: int32(c.batch), Threads: int32(threads), Concurrency: 1})...)
	}
	return rows, failed, nil
}

// samplesOf turns latencies into rows that share everything but the repeat.
func samplesOf(lat []float64, proto Sample) []Sample {
	out := make([]Sample, len(lat))
	for i, l := range lat {
		s := proto
		s.Repeat, s.LatencyS, s.Source = int32(i), l, SourceMeasured
		out[i] = s
	}
	return out
}

// measureGonumMatMul times n×n float32 products in pure Go. gonum's Sgemm
// splits large products across GOMAXPROCS goroutines, so the row records
// that many threads.
func measureGonumMatMul(ctx context.Context, n, repeats int) ([]Sample, error) {
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	fill(a, 1)
	fill(b, 2)
	var impl gonum.Implementation
	lat, err := timeRuns(ctx, exactly(1, repeats), func() error {
		impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return samplesOf(lat, Sample{Kind: KindMatMul, Backend: backendGonum, Provider: providerGo, Device: deviceCPU,
		Model: "matmul", Precision: FP32, Batch: int32(n), Threads: int32(runtime.GOMAXPROCS(0)), Concurrency: 1}), nil
}

// measureORTMatMul times n×n float32 products through onnxruntime: the
// zoo's matmul model takes A as its input "A" and multiplies it by its
// initializer B into its output "Y".
func measureORTMatMul(ctx context.Context, tg target, n, threads, repeats int) ([]Sample, error) {
	model, err := zoo.MatMul(n, FP32)
	if err != nil {
		return nil, err
	}
	shape := []int64{int64(n), int64(n)}
	s, err := ort.NewSession(model, "A", shape, "Y", shape, tg.options(threads))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	fill(s.Input(), 1)
	lat, err := timeRuns(ctx, exactly(1, repeats), s.Run)
	if err != nil {
		return nil, err
	}
	return samplesOf(lat, Sample{Kind: KindMatMul, Backend: backendORT, Provider: tg.provider, Device: tg.device,
		Model: "matmul", Precision: FP32, Batch: int32(n), Threads: int32(threads), Concurrency: 1}), nil
}

// contenders are the contention measurement's sessions, made as a round
// first needs them and kept for the profile's life: session slot i of a
// model is reused by every round that runs that model in slot i, rather
// than k sessions being built anew each round.
type contenders struct {
	tg       target
	c        Contention
	cat      *catalog.Catalog
	models   map[string][]byte // built, fp32, or as a file holds them
	sessions map[contender]*ort.Session
}

type contender struct {
	model string
	slot  int
}

func newContenders(tg target, c Contention, ms models, seed int64) (*contenders, error) {
	cs := &contenders{tg: tg, c: c, cat: ms.cat, models: map[string][]byte{}, sessions: map[contender]*ort.Session{}}
	for _, name := range c.Models {
		b, err := ms.build(name, FP32, seed)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", name, err)
		}
		cs.models[name] = b
	}
	return cs, nil
}

// precision is the precision model's contention sessions run in: fp32,
// or what a file holds.
func (cs *contenders) precision(model string) string {
	if m, _ := cs.cat.Lookup(model); !m.HasPrecision(FP32) {
		return m.Precisions[0]
	}
	return FP32
}

// session returns slot's session of model, and whether it is new (made
// now, so not warm yet).
func (cs *contenders) session(model string, slot int) (s *ort.Session, fresh bool, err error) {
	key := contender{model, slot}
	if s := cs.sessions[key]; s != nil {
		return s, false, nil
	}
	m, _ := cs.cat.Lookup(model)
	s, err = newModelSession(cs.tg, cs.models[model], m, cs.c.Batch, 1)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", model, err)
	}
	cs.sessions[key] = s
	return s, true, nil
}

func (cs *contenders) close() {
	for _, s := range cs.sessions {
		s.Close()
	}
}

// measure runs k sessions at once, session i of the round's model
// Contention.ModelOf(round, i), one intra-op thread each, and times each
// session's Repeats runs after its warm-up, every session running until
// all have theirs (together): how much lanes that share the cores slow
// each other down. A session runs warmup runs untimed when it is new,
// not in every round: it is kept, and warm, between them. round numbers
// the rows' repeats apart from other rounds'.
func (cs *contenders) measure(ctx context.Context, k, round, warmup int) ([]Sample, error) {
	c := cs.c
	sessions := make([]*ort.Session, k)
	names := make([]string, k)
	warmups := make([]int, k)
	for i := range sessions {
		names[i] = c.ModelOf(round, i)
		s, fresh, err := cs.session(names[i], i)
		if err != nil {
			return nil, err
		}
		sessions[i] = s
		if fresh {
			warmups[i] = warmup
		}
	}
	lat, err := together(ctx, warmups, c.Repeats, func(i int) error { return sessions[i].Run() })
	if err != nil {
		return nil, fmt.Errorf("%d sessions (%s): %w", k, strings.Join(names, ", "), err)
	}
	var out []Sample
	for i := range sessions {
		rows := samplesOf(lat[i], Sample{Kind: KindContention, Backend: backendORT, Provider: cs.tg.provider, Device: cs.tg.device,
			Model: names[i], Precision: cs.precision(names[i]), Batch: int32(c.Batch), Threads: 1, Concurrency: int32(k)})
		for j := range rows {
			rows[j].Repeat = int32((round*k+i)*c.Repeats + j) // distinct across sessions and rounds
		}
		out = append(out, rows...)
	}
	return out, nil
}

// together runs len(warmups) sessions at once, session i run(i)
// warmups[i] times untimed, then repeats times timed, and keeps every
// session running, untimed, until all have their timed runs: each timed
// run then has the others running beside it from its start to its end.
// Sessions of unequal run times would otherwise stop unequally, and the
// slowest's last runs, timed alone, would pass for contended ones
// (docs/fidelity.md, "The profile's contention sessions").
func together(ctx context.Context, warmups []int, repeats int, run func(i int) error) ([][]float64, error) {
	k := len(warmups)
	lat := make([][]float64, k)
	errs := make([]error, k)
	var pending atomic.Int64 // sessions still short of their timed runs
	pending.Store(int64(k))
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait() // all sessions begin together
			lat[i], errs[i] = timeRuns(ctx, exactly(warmups[i], repeats), func() error { return run(i) })
			pending.Add(-1)
			if errs[i] != nil {
				return
			}
			for pending.Load() > 0 && ctx.Err() == nil {
				if err := run(i); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	start.Done()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("session %d of %d: %w", i+1, k, err)
		}
	}
	return lat, nil
}
