package ortmachine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Device is one device of this machine that runs batches for real: Lanes
// workers, each with its own onnxruntime sessions of IntraOpThreads
// threads.
type Device struct {
	Name    string
	Lanes   int
	Threads int
	// Provider is the onnxruntime execution provider the device's lanes
	// run on: ort.CPU (also when empty) or ort.CUDA, on GPU ordinal GPU.
	// A CUDA lane keeps a session per batch size, as the profile times a
	// GPU: a CUDA session sets its convolutions up again whenever its
	// input shape changes.
	Provider string
	GPU      int
}

// Model is one model at one precision, as the profile built and timed it.
type Model struct {
	// Catalog is the model's catalog entry: its name, and its input's and
	// output's names and shapes.
	Catalog catalog.Model
	// ONNX is the serialized model.
	ONNX []byte
}

// Config is a real run's cluster and models.
type Config struct {
	Devices []Device
	// Model gives the model that the simulator's (model, precision)
	// indexes name.
	Model func(model, precision int32) (Model, error)
	// Seed fills the inputs.
	Seed uint64
}

// Batch is one batch as it ran, by the machine's clock (seconds, the
// jobs' time): what the scheduler's trace cannot see.
type Batch struct {
	// BatchID is the simulator's: batches are numbered as they start.
	BatchID          int64
	Device, Lane     int32
	Model, Precision int32
	Jobs, Samples    int32
	// Handed is when the scheduler handed the batch to the machine (just
	// after the trace's start: the policy's decision), Picked when its
	// lane's worker took it, Run when the inputs
	// were concatenated and onnxruntime's Run began, End when Run returned
	// (the trace's end), and Noticed when the scheduler heard of the end.
	Handed, Picked, Run, End, Noticed float64
	// Bound is true when the batch's size was new to its lane: its
	// tensors were made during the run.
	Bound bool
	// Faults is how many pages the lane's thread faulted in during Run
	// (minor faults; -1 where the system does not count a thread's):
	// memory onnxruntime had not used before, which costs time the
	// profile's warm runs never pay.
	Faults int64
}

// Warmup is what Begin did before the clock started: Runs runs of
// Sessions sessions, each at the largest batch size prepared for it,
// taking Seconds, after which Faulting sessions still faulted pages in.
// ColdFaults are the pages the sessions' first warm runs faulted in (0
// where the system does not count a thread's): what the batches would
// otherwise have paid on the clock.
type Warmup struct {
	Sessions, Runs, Faulting int
	Seconds                  float64
	ColdFaults               int64
}

// maxWarmRuns bounds the runs that warm a session: onnxruntime faults in
// new memory on the first run at a shape, and for some models on the
// second; the third ran without a fault in every measurement.
const maxWarmRuns = 4

// poolSamples is how many distinct input samples each model keeps: a job's
// samples are taken from them in turn.
const poolSamples = 64

// Machine runs the batches a simulation starts on this machine's
// onnxruntime, on the wall clock (sim.Machine). Prepare every (model,
// precision, batch size) a run will see, Begin, hand it to the simulator
// as sim.Config.Machine, and Finish; Close it after the last run.
type Machine struct {
	ctx     context.Context
	cfg     Config
	origin  float64
	devices [][]*lane  // [device][lane]
	poolsMu sync.Mutex // lanes make sessions, and pools, on their own goroutines
	pools   map[int32][]float32
	done    chan result
	timer   *time.Timer
	begun   time.Time
	started bool
	batches []Batch
	late    []float64 // how late each due event was handled, seconds
	warmup  Warmup
	wg      sync.WaitGroup // the lanes' workers
	closed  bool
}

var _ sim.Machine = (*Machine)(nil)

// pair numbers a (model, precision).
func pair(model, precision int32) int32 { return model<<8 | precision }

// lane is one worker, a goroutine locked to its own OS thread for the
// machine's life: it makes its sessions and bindings, warms them and runs
// its batches on that thread, so that whatever onnxruntime keeps per
// thread is made once and reused, as in a server's worker. ops carries
// what it is asked to do, in order; sessions, by pair, are its alone.
type lane struct {
	x        *Machine
	d, i     int
	opts     ort.SessionOptions
	sessions map[int32]*session
	ops      chan func()
}

// session is a lane's onnxruntime session of one model and precision, with
// a binding per batch size.
type session struct {
	s        *ort.Session
	sig      catalog.Model // the input's and output's names and shapes
	elems    int           // input floats per sample
	pool     []float32     // poolSamples samples of seeded inputs, shared by the lanes
	bindings map[int32]*ort.Binding
	warm     int32 // the largest batch size warmed
	// onnx and sized serve a CUDA lane: the model, and a session per
	// batch size, whose binding is bindings' entry; warmed are the sizes
	// warmed.
	onnx   []byte
	sized  []*ort.Session
	warmed map[int32]bool
}

// task is a batch handed to a lane.
type task struct {
	batch Batch
	jobs  []part
}

// part is a job's share of a batch: which inputs it brings.
type part struct {
	id    int64
	batch int32
}

type result struct {
	batch Batch
	err   error
}

// New prepares a machine on cfg's devices; onnxruntime must be loaded
// (ort.Init). ctx ends the run: Wait returns its error once it is done.
func New(ctx context.Context, cfg Config) (*Machine, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("real: no devices")
	}
	if cfg.Model == nil {
		return nil, errors.New("real: no models")
	}
	for d, dev := range cfg.Devices {
		if dev.Lanes < 1 || dev.Threads < 1 {
			return nil, fmt.Errorf("real: device %d (%s): want lanes >= 1 and threads >= 1, got %d and %d", d, dev.Name, dev.Lanes, dev.Threads)
		}
	}
	x := &Machine{ctx: ctx, cfg: cfg, pools: map[int32][]float32{}}
	lanes := 0
	for d, dev := range cfg.Devices {
		var ls []*lane
		for i := range dev.Lanes {
			opts := ort.SessionOptions{Provider: dev.Provider, Device: dev.GPU, IntraOpThreads: dev.Threads, InterOpThreads: 1}
			l := &lane{x: x, d: d, i: i, opts: opts, sessions: map[int32]*session{}, ops: make(chan func(), 1)}
			x.wg.Add(1)
			go l.work()
			ls = append(ls, l)
			lanes++
		}
		x.devices = append(x.devices, ls)
	}
	x.done = make(chan result, lanes)
	return x, nil
}

// work does what the lane is asked, on one OS thread, until Close.
func (l *lane) work() {
	defer l.x.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for op := range l.ops {
		op()
	}
}

// call has the lane do f on its thread and returns f's error.
func (l *lane) call(f func() error) error {
	errc := make(chan error, 1)
	l.ops <- func() { errc <- f() }
	return <-errc
}

// each has every lane do f on its thread, the lanes at once.
func (x *Machine) each(f func(l *lane) error) error {
	var g errgroup.Group
	for _, ls := range x.devices {
		for _, l := range ls {
			g.Go(func() error { return l.call(func() error { return f(l) }) })
		}
	}
	return g.Wait()
}

// Prepare makes every lane ready to run batches of samples samples of the
// model and precision: its session (run once, untimed, when new) and the
// tensors of that batch size. A size not prepared is bound when a batch
// first needs it, during the run (Batch.Bound).
func (x *Machine) Prepare(model, precision, samples int32) error {
	if x.started {
		return errors.New("real: prepare while a run is under way")
	}
	if x.closed {
		return errors.New("real: prepare after close")
	}
	return x.each(func(l *lane) error {
		s, err := l.session(model, precision)
		if err != nil {
			return err
		}
		_, _, err = l.binding(s, samples)
		return err
	})
}

// warm runs each of the lane's sessions at its largest bound batch size,
// unless an earlier warm-up did, until a run faults no page in (or
// maxWarmRuns), and adds what it did to w.
func (l *lane) warm(w *Warmup) error {
	if l.opts.Provider == ort.CUDA {
		return l.warmSized(w)
	}
	for _, s := range l.sessions {
		largest := int32(0)
		for b := range s.bindings {
			largest = max(largest, b)
		}
		if largest <= s.warm {
			continue
		}
		b := s.bindings[largest]
		w.Sessions++
		for n := 1; ; n++ {
			before := threadFaults()
			if err := b.Run(); err != nil {
				return fmt.Errorf("real: warm batch size %d on device %d lane %d: %w", largest, l.d, l.i, err)
			}
			w.Runs++
			if before < 0 { // faults uncounted: as many runs as they took where counted
				if n == maxWarmRuns-1 {
					break
				}
				continue
			}
			after := threadFaults()
			if n == 1 {
				w.ColdFaults += after - before
			}
			if after == before {
				break
			}
			if n == maxWarmRuns {
				w.Faulting++
				break
			}
		}
		s.warm = largest
	}
	return nil
}

// session returns the lane's session of the model and precision, making
// and warming it when it has none.
func (l *lane) session(model, precision int32) (*session, error) {
	p := pair(model, precision)
	if s := l.sessions[p]; s != nil {
		return s, nil
	}
	m, err := l.x.cfg.Model(model, precision)
	if err != nil {
		return nil, fmt.Errorf("real: %w", err)
	}
	c := m.Catalog
	s := &session{sig: c, elems: 1, bindings: map[int32]*ort.Binding{}, onnx: m.ONNX, warmed: map[int32]bool{}}
	for _, d := range c.InputShape {
		s.elems *= int(d)
	}
	s.s, err = ort.NewSession(m.ONNX, c.Input, c.InputDims(1), c.Output, c.OutputDims(1), l.opts)
	if err != nil {
		return nil, fmt.Errorf("real: %s on device %d lane %d: %w", c.Name, l.d, l.i, err)
	}
	l.sessions[p] = s
	if err := s.s.Run(); err != nil { // warm: the first run sets up what later ones reuse
		return nil, fmt.Errorf("real: %s on device %d lane %d: %w", c.Name, l.d, l.i, err)
	}
	s.pool = l.x.pool(p, s.elems)
	return s, nil
}

// pool returns the seeded input samples of pair p, of elems floats each,
// making them the first time: values in [-1, 1), since latency does not
// depend on them but all-zero inputs or denormals could take odd paths.
func (x *Machine) pool(p int32, elems int) []float32 {
	x.poolsMu.Lock()
	defer x.poolsMu.Unlock()
	if pool, ok := x.pools[p]; ok {
		return pool
	}
	pool := make([]float32, poolSamples*elems)
	r := rand.New(rand.NewPCG(x.cfg.Seed, uint64(p)))
	for i := range pool {
		pool[i] = r.Float32()*2 - 1
	}
	x.pools[p] = pool
	return pool
}

// binding returns the session's binding of samples samples, making it if
// it has none (made true). A new binding's tensors are written once, so
// that the kernel maps their pages now: the first batch to fill a fresh
// input tensor otherwise pays its page faults between its lane taking it
// and Run, on a binding Prepare had made (docs/fidelity.md).
func (l *lane) binding(s *session, samples int32) (b *ort.Binding, made bool, err error) {
	if b := s.bindings[samples]; b != nil {
		return b, false, nil
	}
	if l.opts.Provider == ort.CUDA {
		ss, err := ort.NewSession(s.onnx, s.sig.Input, s.sig.InputDims(int(samples)), s.sig.Output, s.sig.OutputDims(int(samples)), l.opts)
		if err != nil {
			return nil, false, fmt.Errorf("real: device %d lane %d: batch size %d: %w", l.d, l.i, samples, err)
		}
		s.sized = append(s.sized, ss)
		b = ss.First()
	} else if b, err = s.s.Bind(s.sig.InputDims(int(samples)), s.sig.OutputDims(int(samples))); err != nil {
		return nil, false, fmt.Errorf("real: device %d lane %d: %w", l.d, l.i, err)
	}
	clear(b.Input())
	clear(b.Output())
	s.bindings[samples] = b
	return b, true, nil
}

// warmSized warms a CUDA lane: each session of a batch size not warmed
// yet runs twice, the first run choosing its convolutions' algorithms.
func (l *lane) warmSized(w *Warmup) error {
	for _, s := range l.sessions {
		for size, b := range s.bindings {
			if s.warmed[size] {
				continue
			}
			w.Sessions++
			for range 2 {
				if err := b.Run(); err != nil {
					return fmt.Errorf("real: warm batch size %d on device %d lane %d: %w", size, l.d, l.i, err)
				}
				w.Runs++
			}
			s.warmed[size] = true
		}
	}
	return nil
}

// Begin starts a run: it warms every lane's sessions (Warmup), then
// starts the clock, at origin. A run measures a warm server, as the
// profile measures warm runs: a lane's first runs at a session's largest
// size fault in the memory that its smaller sizes then reuse. A run ends
// with Finish; the machine may begin another after it, its sessions
// kept.
func (x *Machine) Begin(origin float64) error {
	if x.started {
		return errors.New("real: begin while a run is under way")
	}
	if x.closed {
		return errors.New("real: begin after close")
	}
	t := time.Now()
	var mu sync.Mutex
	var w Warmup
	err := x.each(func(l *lane) error {
		var lw Warmup
		err := l.warm(&lw)
		mu.Lock()
		w.Sessions, w.Runs, w.Faulting, w.ColdFaults = w.Sessions+lw.Sessions, w.Runs+lw.Runs, w.Faulting+lw.Faulting, w.ColdFaults+lw.ColdFaults
		mu.Unlock()
		return err
	})
	w.Seconds = time.Since(t).Seconds()
	x.warmup = w
	if err != nil {
		return err
	}
	x.started, x.batches, x.late = true, nil, nil
	x.origin = origin
	x.begun = time.Now()
	return nil
}

// Warmup returns what the last Begin did before its clock started.
func (x *Machine) Warmup() Warmup { return x.warmup }

// Finish ends the run that Begin started, once its lanes have finished
// what they were given, and returns its batches, in the order they
// started, and how late each event due at a time (an arrival, a batching
// timer) was handled, seconds, in order.
func (x *Machine) Finish() (batches []Batch, late []float64) {
	if !x.started {
		return nil, nil
	}
	_ = x.each(func(*lane) error { return nil }) // each lane's earlier ops are done
	for len(x.done) > 0 {
		<-x.done // what ran after the scheduler stopped
	}
	x.started = false
	return x.batches, x.late
}

// Now implements sim.Machine: seconds since Begin, from its origin.
func (x *Machine) Now() float64 {
	return x.origin + time.Since(x.begun).Seconds()
}

// Start implements sim.Machine: it hands the batch to its lane's worker.
func (x *Machine) Start(d, lane int, jobs []*sim.Job, samples int32) error {
	if !x.started {
		return errors.New("real: start before begin")
	}
	if d < 0 || d >= len(x.devices) || lane < 0 || lane >= len(x.devices[d]) {
		return fmt.Errorf("real: no lane %d on device %d", lane, d)
	}
	h := jobs[0]
	t := task{batch: Batch{BatchID: int64(len(x.batches) + 1), Device: int32(d), Lane: int32(lane), Model: h.Model, Precision: h.Precision,
		Jobs: int32(len(jobs)), Samples: samples, Handed: x.Now()}}
	t.jobs = make([]part, len(jobs))
	for i, j := range jobs {
		t.jobs[i] = part{id: j.ID, batch: j.Batch}
	}
	x.batches = append(x.batches, t.batch)
	l := x.devices[d][lane]
	select {
	case l.ops <- func() {
		b, err := l.run(t)
		x.done <- result{batch: b, err: err}
	}:
		return nil
	default:
		return fmt.Errorf("real: device %d lane %d is given a batch while it runs one", d, lane)
	}
}

// run concatenates a batch's inputs into one tensor and runs it once.
func (l *lane) run(t task) (Batch, error) {
	x := l.x
	b := t.batch
	b.Picked = x.Now()
	s, err := l.session(b.Model, b.Precision)
	if err != nil {
		return b, err
	}
	bind, made, err := l.binding(s, b.Samples)
	if err != nil {
		return b, err
	}
	b.Bound = made
	in, pool := bind.Input(), s.pool
	off := 0
	for _, p := range t.jobs {
		for k := range int(p.batch) {
			src := int((uint64(p.id)*7 + uint64(k)) % poolSamples)
			off += copy(in[off:off+s.elems], pool[src*s.elems:(src+1)*s.elems])
		}
	}
	if off != len(in) {
		return b, fmt.Errorf("real: batch %d: its jobs hold %d samples, the batch %d", b.BatchID, off/s.elems, b.Samples)
	}
	before := threadFaults()
	b.Run = x.Now()
	if err := bind.Run(); err != nil {
		return b, err
	}
	b.End = x.Now()
	b.Faults = -1
	if before >= 0 {
		b.Faults = threadFaults() - before
	}
	return b, nil
}

// A Go timer fires up to a millisecond late on Linux, its poller sleeping
// in whole milliseconds, which would hold every arrival back by that
// much. Wait's timer is set coarseMargin early instead, and the rest is
// slept in slices of at most fineSlice on the kernel's high-resolution
// timer, watching for ended batches between them: tens of microseconds
// late instead (BenchmarkWaitLateness; docs/benchmarks.md has the
// figures).
const (
	coarseMargin = 1500 * time.Microsecond
	fineSlice    = 100 * time.Microsecond
)

// Wait implements sim.Machine: it returns the first batch to end, or
// nothing at t.
func (x *Machine) Wait(t float64) (sim.Done, bool, error) {
	if !x.started {
		return sim.Done{}, false, errors.New("real: wait before begin")
	}
	// A batch that has ended goes first, even when t is past.
	select {
	case r := <-x.done:
		return x.notice(r)
	default:
	}
	if math.IsInf(t, 1) {
		select {
		case r := <-x.done:
			return x.notice(r)
		case <-x.ctx.Done():
			return sim.Done{}, false, x.ctx.Err()
		}
	}
	if coarse := time.Duration((t-x.Now())*1e9) - coarseMargin; coarse > 0 {
		if x.timer == nil {
			x.timer = time.NewTimer(coarse)
		} else {
			x.timer.Reset(coarse)
		}
		select {
		case r := <-x.done:
			x.timer.Stop()
			return x.notice(r)
		case <-x.timer.C:
		case <-x.ctx.Done():
			x.timer.Stop()
			return sim.Done{}, false, x.ctx.Err()
		}
	}
	for {
		select {
		case r := <-x.done:
			return x.notice(r)
		default:
		}
		if err := x.ctx.Err(); err != nil {
			return sim.Done{}, false, err
		}
		rest := time.Duration((t - x.Now()) * 1e9)
		if rest <= 0 {
			break
		}
		sleep(min(rest, fineSlice))
	}
	x.late = append(x.late, x.Now()-t)
	return sim.Done{}, false, nil
}

// notice records a batch's end as the scheduler hears of it.
func (x *Machine) notice(r result) (sim.Done, bool, error) {
	if r.err != nil {
		return sim.Done{}, false, r.err
	}
	b := r.batch
	b.Noticed = x.Now()
	x.batches[b.BatchID-1] = b
	return sim.Done{Device: int(b.Device), Lane: int(b.Lane), End: b.End}, true, nil
}

// Close ends a run under way and frees the sessions.
func (x *Machine) Close() error {
	if x.closed {
		return nil
	}
	x.Finish()
	x.closed = true
	var mu sync.Mutex
	var errs []error
	_ = x.each(func(l *lane) error {
		for _, s := range l.sessions {
			for _, ss := range append(s.sized, s.s) {
				err := ss.Close()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}
		return nil
	})
	for _, ls := range x.devices {
		for _, l := range ls {
			close(l.ops)
		}
	}
	x.wg.Wait()
	return errors.Join(errs...)
}
