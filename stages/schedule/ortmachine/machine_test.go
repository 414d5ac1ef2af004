package ortmachine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// flat is a Service for the policies' predictions and the memory tokens:
// a real run draws no times from it.
type flat struct{}

func (flat) Time(d int, m, p, b int32, u float64) float64 { panic("a real run draws no times") }
func (flat) Predict(d int, m, p, b int32) float64         { return 0.001 * float64(b) }
func (flat) Memory(m, p, b int32) float64                 { return float64(b) }
func (flat) Contention(d, k int) float64                  { panic("a real run models no contention") }

// fifo places every job on device 0 and runs them in arrival order.
type fifo struct{}

func (fifo) Name() string                   { return "fifo" }
func (fifo) Place(*sim.Job, *sim.State) int { return 0 }

var tiny = []string{"mlp", "resnet18"}

func models(t *testing.T) func(model, precision int32) (Model, error) {
	t.Helper()
	built := map[int32]Model{}
	for i, name := range tiny {
		b, err := zoo.Build(name, zoo.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := catalog.Zoo().Lookup(name)
		built[int32(i)] = Model{Catalog: c, ONNX: b}
	}
	return func(model, precision int32) (Model, error) {
		m, ok := built[model]
		if !ok || precision != 0 {
			return Model{}, fmt.Errorf("no model %d at precision %d", model, precision)
		}
		return m, nil
	}
}

// TestRealRunIsCausal runs a few dozen mlp and resnet18 jobs for real on
// two lanes, with micro-batches, and checks what a real run must satisfy:
// no job starts before it arrives, no lane runs two batches at once, every
// batch's moments come in order, and its jobs' records are its own.
func TestRealRunIsCausal(t *testing.T) {
	orttest.Require(t)
	realRunIsCausal(t, "")
}

// TestRealRunOnCUDA runs the same jobs on CUDA lanes, a session per batch
// size, where this machine has a GPU onnxruntime's CUDA provider can use;
// elsewhere the machine must refuse, naming the provider.
func TestRealRunOnCUDA(t *testing.T) {
	orttest.Require(t)
	if probe := ort.ProbeProvider(ort.CUDA); probe != nil {
		x, err := New(context.Background(), Config{Devices: []Device{{Name: "gpu", Lanes: 1, Threads: 1, Provider: ort.CUDA}}, Model: models(t), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		err = x.Prepare(0, 0, 1)
		if err == nil || !strings.Contains(err.Error(), "CUDA execution provider") {
			t.Fatalf("Prepare on CUDA where ProbeProvider says %v: %v; want an error naming the CUDA execution provider", probe, err)
		}
		t.Logf("no CUDA here (%v); Prepare refused: %v", probe, err)
		return
	}
	realRunIsCausal(t, ort.CUDA)
}

func realRunIsCausal(t *testing.T, provider string) {
	var jobs []*sim.Job
	for i := range 40 {
		a := 0.004 * float64(i)
		jobs = append(jobs, &sim.Job{ID: int64(i), Arrival: a, Deadline: a + 0.1, Model: int32(i % 3 % 2), Batch: int32(1 + i%4)})
	}
	x, err := New(context.Background(), Config{Devices: []Device{{Name: "cpu", Lanes: 2, Threads: 1, Provider: provider}}, Model: models(t), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for m := range int32(2) {
		for b := int32(1); b <= 8; b++ {
			if err := x.Prepare(m, 0, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := x.Begin(0); err != nil {
		t.Fatal(err)
	}
	var recs []sim.Record
	var batches []sim.BatchRecord
	next := func() func() (*sim.Job, bool) {
		i := 0
		return func() (*sim.Job, bool) {
			if i == len(jobs) {
				return nil, false
			}
			i++
			return jobs[i-1], true
		}
	}()
	cfg := sim.Config{Devices: []sim.Device{{Name: "cpu", Lanes: 2, Memory: 1000, Speed: 1}}, Service: flat{}, Policy: fifo{},
		Batching: sim.Batching{MaxBatch: 8, Window: 0.002}, Machine: x,
		OnBatch: func(b *sim.BatchRecord) error { batches = append(batches, *b); return nil }}
	st, err := sim.Run(cfg, next, func(r *sim.Record) error { recs = append(recs, *r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ran, late := x.Finish()
	// Arrivals and batching timers come due 40 times or more; Wait
	// handles each at its time, never before it. How late it handles
	// them is a measurement, not a property: BenchmarkWaitLateness.
	if len(late) < len(jobs) {
		t.Errorf("%d events handled at their time, want one per arrival at least (%d)", len(late), len(jobs))
	}
	for i, l := range late {
		if !(l >= 0) {
			t.Errorf("event %d handled %v s before its time", i, -l)
		}
	}
	if provider == ort.CUDA {
		// Each lane's 16 sessions, one per model and batch size, ran twice.
		if w := x.Warmup(); w.Sessions != 32 || w.Runs != 64 {
			t.Errorf("warm-up: %+v; want 32 sessions warmed in 64 runs", w)
		}
		return
	}
	// Begin warmed each lane's two sessions at their largest size, 8,
	// until a run faulted no page in: then no batch of the run should.
	if w := x.Warmup(); w.Sessions != 4 || w.Runs < 4 || w.Runs > 4*maxWarmRuns || w.Faulting != 0 || !(w.Seconds > 0) {
		t.Errorf("warm-up: %+v; want 4 sessions warmed in 4 to %d runs, none still faulting", w, 4*maxWarmRuns)
	}
	if w := x.Warmup(); threadFaults() >= 0 {
		// A shape's first run faults its tensors in, thousands of pages
		// a session here (18,821 for the four, 2026-11-28); after the
		// warm-up a batch may still meet a stray page that the kernel or
		// the Go runtime faults in for reasons of its own (1 page, once,
		// in a loaded CI run), but never a shape's worth: at most a
		// hundredth of a session's first run.
		if w.ColdFaults < 1000 {
			t.Fatalf("warm-up: %+v; the sessions' first runs faulted %d pages in, too few to show what warming saves", w, w.ColdFaults)
		}
		limit := w.ColdFaults / int64(w.Sessions) / 100
		for _, b := range ran {
			if b.Faults > limit {
				t.Errorf("batch %d of %d samples faulted %d pages in after the warm-up (a session's first run: %d on average)", b.BatchID, b.Samples, b.Faults, w.ColdFaults/int64(w.Sessions))
			}
		}
	}
	// A second run finds the sessions warm.
	if err := x.Begin(1); err != nil {
		t.Fatal(err)
	}
	x.Finish()
	if w := x.Warmup(); w.Runs != 0 {
		t.Errorf("the second run's warm-up: %+v; want none", w)
	}
	if len(recs) != len(jobs) || st.Batches != int64(len(ran)) || int(st.Batches) != len(batches) {
		t.Fatalf("%d records of %d jobs, %d batches, the machine saw %d", len(recs), len(jobs), len(batches), len(ran))
	}
	for _, r := range recs {
		if r.Start < r.Job.Arrival || r.End <= r.Start {
			t.Errorf("job %d arrived at %v and ran [%v, %v]", r.Job.ID, r.Job.Arrival, r.Start, r.End)
		}
	}
	lastEnd := map[int32]float64{}
	merged := 0
	for i, b := range ran {
		sb := batches[0]
		for _, c := range batches {
			if c.BatchID == b.BatchID {
				sb = c
			}
		}
		if b.BatchID != int64(i+1) || sb.BatchID != b.BatchID || sb.Start > b.Handed || sb.End != b.End || sb.Samples != b.Samples {
			t.Errorf("batch %d: the machine's %+v, the simulator's %+v", i+1, b, sb)
		}
		if !(b.Handed <= b.Picked && b.Picked <= b.Run && b.Run < b.End && b.End <= b.Noticed) {
			t.Errorf("batch %d's moments are out of order: %+v", b.BatchID, b)
		}
		if sb.Start < lastEnd[b.Lane] {
			t.Errorf("batch %d started on lane %d at %v, before the lane's last batch ended at %v", b.BatchID, b.Lane, sb.Start, lastEnd[b.Lane])
		}
		lastEnd[b.Lane] = b.End
		if b.Bound {
			t.Errorf("batch %d of %d samples was bound during the run, though every size was prepared", b.BatchID, b.Samples)
		}
		if b.Jobs > 1 {
			merged++
		}
	}
	if merged == 0 {
		t.Error("no micro-batch merged jobs: the test does not exercise concatenation")
	}
}

// waitsPerOp is the waits of one BenchmarkWaitLateness op: enough for a
// P99 at make bench's one op.
const waitsPerOp = 300

// BenchmarkWaitLateness times how late Wait returns for a time due 0 to 3
// ms ahead, on a machine with one idle lane, waitsPerOp times an op, and
// reports the median and P99 over the waits (lateness-p50-µs,
// lateness-p99-µs), to set beside a plain Go timer's (docs/benchmarks.md).
func BenchmarkWaitLateness(b *testing.B) {
	orttest.Require(b)
	x, err := New(context.Background(), Config{Devices: []Device{{Name: "cpu", Lanes: 1, Threads: 1}}, Model: func(int32, int32) (Model, error) {
		return Model{}, fmt.Errorf("no models")
	}, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	if err := x.Begin(0); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var late []float64
	for b.Loop() {
		for range waitsPerOp {
			t := x.Now() + 0.003*r.Float64()
			if _, ended, err := x.Wait(t); err != nil || ended {
				b.Fatalf("Wait(%v) = ended %v, %v; want the time to come", t, ended, err)
			}
			late = append(late, x.Now()-t)
		}
	}
	slices.Sort(late)
	b.ReportMetric(1e6*late[len(late)/2], "lateness-p50-µs")
	b.ReportMetric(1e6*late[min(len(late)-1, len(late)*99/100)], "lateness-p99-µs")
}
