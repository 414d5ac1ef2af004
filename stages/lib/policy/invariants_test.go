package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// noisy is a Service whose ground truth varies with u around its
// prediction, with per-model memory and contention that grows with lanes.
type noisy struct{ secs, mem []float64 }

func (n noisy) Time(d int, m, p, b int32, u float64) float64 {
	return n.secs[m] * float64(b) * (0.5 + u)
}
func (n noisy) Predict(d int, m, p, b int32) float64 { return n.secs[m] * float64(b) }
func (n noisy) Memory(m, p, b int32) float64         { return n.mem[m] * float64(b) }
func (n noisy) Contention(d, k int) float64          { return 1 + 0.15*float64(max(k-1, 0)) }

func randomWorkload(seed uint64, n int) []*sim.Job {
	r := rand.New(rand.NewPCG(seed, 1))
	jobs := make([]*sim.Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / 30 // about 30 jobs/s
		class := sim.Class(r.IntN(2))
		jobs[i] = &sim.Job{ID: int64(i), Arrival: t, Class: class, Model: int32(r.IntN(3)),
			Batch: int32(1 + r.IntN(4)), Deadline: t + 0.1 + float64(class)*0.9}
	}
	return jobs
}

var (
	invDevs = []sim.Device{
		{Name: "cpu", Lanes: 2, Memory: 40, Speed: 1},
		{Name: "gpu", Lanes: 4, Memory: 60, Speed: 3},
		{Name: "small", Lanes: 1, Memory: 12, Speed: 0.5},
	}
	invSvc = noisy{secs: []float64{0.01, 0.05, 0.1}, mem: []float64{2, 5, 9}}
)

// invSettings are the options' parameters in the invariant runs: small
// batches, a short window, splits from 3 samples, a cheap move.
var invSettings = Settings{
	Batching:      sim.Batching{MaxBatch: 6, Window: 0.02},
	Split:         sim.Split{MinBatch: 3},
	MigrationCost: 0.01,
	// The learned policy's network stands in as the Threshold rule here,
	// its decisions served in batches that take time, so that the
	// invariants hold with decisions in flight too.
	Learned: func() (sim.Migrator, error) { return Threshold{}, nil },
	Serving: Serving{Latency: func(n int, _ float64) float64 { return 0.001 * float64(n) }, Batch: 4, Window: 0.002},
}

// specs lists every policy alone, with each option it supports, and with
// all of them.
func specs() []Spec {
	var out []Spec
	for _, n := range Names() {
		for _, s := range []string{n, n + "+batch", n + "+split", n + "+migrate", n + "+batch+split+migrate", n + "+split+migrate",
			n + "@" + PlaceBacklog, n + "@" + PlaceRoundRobin + "+batch", n + "@" + PlaceRandom + "+split+migrate",
			n + "~" + AblateThreshold, n + "+batch+split~" + AblateFree} {
			if sp, err := ParseSpec(s); err == nil && !slices.Contains(out, sp) {
				out = append(out, sp)
			}
		}
	}
	return out
}

type run struct {
	recs    []*sim.Record
	batches []sim.BatchRecord
	stats   sim.Stats
}

func runAll(t *testing.T, sp Spec, jobs []*sim.Job) run {
	t.Helper()
	cfg := specConfig(t, sp)
	var out run
	cfg.OnBatch = func(b *sim.BatchRecord) error { out.batches = append(out.batches, *b); return nil }
	i := 0
	st, err := sim.Run(cfg,
		func() (*sim.Job, bool) {
			if i == len(jobs) {
				return nil, false
			}
			i++
			return jobs[i-1], true
		},
		func(r *sim.Record) error { c := *r; out.recs = append(out.recs, &c); return nil })
	if err != nil {
		t.Fatal(err)
	}
	out.stats = st
	return out
}

// strictPolicies are the registered policies that keep strict order, as
// each says through sim.StrictOrder: asked, not listed, so that a new
// strict-order policy is checked as one without editing this test.
func strictPolicies(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range Names() {
		p, err := New(n, Options{Seed: 7, Weights: DefaultWeights()})
		if err != nil {
			t.Fatal(err)
		}
		if so, ok := p.(sim.StrictOrder); ok && so.StrictOrder() {
			out[n] = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no registered policy keeps strict order; the strict-order invariant is never checked")
	}
	return out
}

// queuedBefore reports whether job a comes before job b in the order of a
// device queue under policy p: its Ranker's, ties broken by arrival, or
// arrival alone without one. (In runs without splits or moves each job is
// queued once, on arrival.)
func queuedBefore(p sim.Policy, a, b *sim.Job) bool {
	if r, ok := p.(sim.Ranker); ok {
		if r.Less(a, b) || r.Less(b, a) {
			return r.Less(a, b)
		}
	}
	return a.Arrival < b.Arrival
}

func TestInvariantsOnRandomWorkloads(t *testing.T) {
	jobs := randomWorkload(11, 3000)
	strictOrder := strictPolicies(t)
	for _, sp := range specs() {
		t.Run(sp.String(), func(t *testing.T) {
			got := runAll(t, sp, jobs)
			checkJobs(t, sp, jobs, got)
			checkBatches(t, sp, got)
			plain := !sp.Migrates() && !sp.Split // records show where each job waited
			p, _ := New(sp.Name, Options{Seed: 7, Weights: DefaultWeights()})
			_, grouped := p.(sim.GroupPicker)
			strict := strictOrder[sp.Name]
			for d, dev := range invDevs {
				rs := onDevice(got.recs, int32(d))
				switch {
				case !plain:
				case strict && !sp.Batch:
					// Never overtaken: no job starts while one before it
					// in the queue's order waits on the device.
					for _, a := range rs {
						for _, b := range rs {
							if b.Job.Arrival < a.Start && a.Start < b.Start && queuedBefore(p, b.Job, a.Job) {
								t.Fatalf("device %d started job %d at %g while job %d, before it in order, waited", d, a.Job.ID, a.Start, b.Job.ID)
							}
						}
					}
				case !strict && !sp.Batch:
					// Work conserving: a waiting job never sees a free lane
					// with room for it on its device.
					for _, r := range rs {
						for _, at := range changesOn(rs, r.Job.Arrival, r.Start) {
							if busyAt(rs, at) < dev.Lanes && memoryAt(got.batches, d, at)+invSvc.Memory(r.Job.Model, 0, r.Job.Batch) <= dev.Memory {
								t.Fatalf("job %d waits on device %d at %g with a free lane and room", r.Job.ID, d, at)
							}
						}
					}
				case sp.Batch || grouped:
					// A device is never empty while a job has waited on it
					// longer than the window.
					for _, r := range rs {
						from := r.Job.Arrival + invSettings.Batching.Window
						for _, at := range changesOn(rs, from, r.Start) {
							if busyAt(rs, at) == 0 {
								t.Fatalf("device %d is empty at %g while job %d, waiting since %g, waits until %g", d, at, r.Job.ID, r.Job.Arrival, r.Start)
							}
						}
					}
				}
			}
			// Determinism: a second run gives the same records.
			again := runAll(t, sp, jobs)
			for i := range got.recs {
				if *got.recs[i] != *again.recs[i] {
					t.Fatalf("run differs at record %d: %+v vs %+v", i, got.recs[i], again.recs[i])
				}
			}
			if sp.Migrates() && got.stats.Migrations == 0 || sp.Split && got.stats.Splits == 0 {
				t.Errorf("options never used: %+v", got.stats)
			}
		})
	}
}

// checkJobs checks that every job ran once, after it arrived, in a batch
// that ran it, and split only when allowed.
func checkJobs(t *testing.T, sp Spec, jobs []*sim.Job, got run) {
	t.Helper()
	byID := map[int64]*sim.BatchRecord{}
	for i := range got.batches {
		byID[got.batches[i].BatchID] = &got.batches[i]
	}
	seen := map[int64]int{}
	for _, r := range got.recs {
		seen[r.Job.ID]++
		j := r.Job
		if r.Rejected() || r.Start < j.Arrival || r.End <= r.Start {
			t.Fatalf("job %d: %+v", j.ID, r)
		}
		b := byID[r.BatchID]
		if b == nil || b.Device != r.Device || b.Lane != r.Lane || b.End != r.End || b.Samples != r.BatchSize ||
			b.Model != j.Model || b.Precision != j.Precision {
			t.Fatalf("job %d's record %+v does not match its batch %+v", j.ID, r, b)
		}
		if r.SplitParts == 1 && b.Start != r.Start {
			t.Fatalf("job %d started at %g in a batch started at %g", j.ID, r.Start, b.Start)
		}
		if r.SplitParts > 1 && (!sp.Split || j.Batch < invSettings.Split.MinBatch || r.SplitParts > int32(len(invDevs))) {
			t.Fatalf("job %d of %d samples split in %d", j.ID, j.Batch, r.SplitParts)
		}
		if r.Migrated && !sp.Migrates() {
			t.Fatalf("job %d moved without +migrate", j.ID)
		}
	}
	if len(seen) != len(jobs) || len(got.recs) != len(jobs) {
		t.Fatalf("%d records of %d distinct jobs, want %d", len(got.recs), len(seen), len(jobs))
	}
}

// checkBatches checks that batches respect the largest batch, never share a
// lane and never overfill a device.
func checkBatches(t *testing.T, sp Spec, got run) {
	t.Helper()
	var members int64
	for _, r := range got.recs {
		members += int64(r.SplitParts)
	}
	var inBatches int64
	lanes := map[[2]int32][]sim.BatchRecord{}
	for _, b := range got.batches {
		inBatches += int64(b.Jobs)
		if b.Jobs > 1 && (!sp.Batch || b.Samples > invSettings.Batching.MaxBatch) {
			t.Fatalf("batch %+v merges jobs beyond the limit", b)
		}
		k := [2]int32{b.Device, b.Lane}
		lanes[k] = append(lanes[k], b)
	}
	if inBatches != members {
		t.Fatalf("batches hold %d jobs and parts, the records %d", inBatches, members)
	}
	for k, bs := range lanes {
		slices.SortFunc(bs, func(a, b sim.BatchRecord) int { return cmpF(a.Start, b.Start) })
		for i := 1; i < len(bs); i++ {
			if bs[i].Start < bs[i-1].End {
				t.Fatalf("lane %v runs batches %d and %d at once", k, bs[i-1].BatchID, bs[i].BatchID)
			}
		}
	}
	for _, b := range got.batches {
		if use := memoryAt(got.batches, int(b.Device), b.Start); use > invDevs[b.Device].Memory+1e-9 {
			t.Fatalf("device %d holds %g of %g memory at %g", b.Device, use, invDevs[b.Device].Memory, b.Start)
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func onDevice(rs []*sim.Record, d int32) []*sim.Record {
	var out []*sim.Record
	for _, r := range rs {
		if r.Device == d {
			out = append(out, r)
		}
	}
	return out
}

// running lists the jobs running on a device at time t (started, not ended).
func running(rs []*sim.Record, t float64) []*sim.Record {
	var out []*sim.Record
	for _, r := range rs {
		if r.Start <= t && t < r.End {
			out = append(out, r)
		}
	}
	return out
}

// busyAt counts the lanes busy at t: the distinct batches running.
func busyAt(rs []*sim.Record, t float64) int {
	ids := map[int64]bool{}
	for _, r := range running(rs, t) {
		ids[r.BatchID] = true
	}
	return len(ids)
}

// memoryAt is what the batches running on device d hold at t.
func memoryAt(bs []sim.BatchRecord, d int, t float64) float64 {
	var m float64
	for _, b := range bs {
		if int(b.Device) == d && b.Start <= t && t < b.End {
			m += b.Memory
		}
	}
	return m
}

// changesOn returns the arrival and every end on the device in [from, to):
// the only moments a waiting job could have started.
func changesOn(rs []*sim.Record, from, to float64) []float64 {
	if to <= from {
		return nil
	}
	out := []float64{from}
	for _, r := range rs {
		if r.End > from && r.End < to {
			out = append(out, r.End)
		}
	}
	return out
}
