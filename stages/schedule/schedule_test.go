package schedule

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// TestHandChecked runs three jobs on one single-lane device whose service
// times are exactly 10 ms per sample, so every start and end follows by
// hand:
//
//	job 0: arrives 0,     batch 1: runs   0 –  10 ms
//	job 1: arrives 5 ms,  batch 2: waits, 10 –  30 ms; SLO 20 ms → missed
//	job 2: arrives 100 ms, batch 1: runs 100 – 110 ms
//
// With one device and one lane every policy must give this schedule.
func TestHandChecked(t *testing.T) {
	jobs := writeJobs(t, []generate.Job{
		{ID: 10, ArrivalS: 0, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
		{ID: 11, ArrivalS: 0.005, Class: generatespec.ClassBatch, SLOS: 0.02, Model: "mlp", BatchSize: 2, Precision: generatespec.PrecisionFP32},
		{ID: 12, ArrivalS: 0.1, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
	})
	// Every policy but learned, which needs a placement network (and
	// with one device has no migration to decide).
	names := slices.DeleteFunc(policy.Names(), func(n string) bool { return n == "learned" })
	cfg := oneDevice(1, 1024, names...)
	cfg.Batching.Window = 0 // batch_aware and dynamic batch: nothing here can
	o := runStage(t, cfg, 1, writeSamples(t, constantProfile()), jobs)

	type want struct {
		id             int64
		class          string
		batch          int32
		arrival, start float64
		end            float64
		sloMet         bool
		batchID        int64
	}
	wants := []want{
		{10, generatespec.ClassInteractive, 1, 0, 0, 0.010, true, 1},
		{11, generatespec.ClassBatch, 2, 0.005, 0.010, 0.030, false, 2},
		{12, generatespec.ClassInteractive, 1, 0.1, 0.1, 0.110, true, 3},
	}
	for _, p := range cfg.Policies {
		t.Run(p, func(t *testing.T) {
			trace := o.traces[p]
			if len(trace) != len(wants) {
				t.Fatalf("%d trace rows, want %d", len(trace), len(wants))
			}
			for i, w := range wants {
				r := trace[i]
				if r.JobID != w.id || r.Policy != p || r.Device != "cpu" || r.DeviceKind != KindMeasured || r.Lane != 0 ||
					r.BatchID != w.batchID || r.BatchSize != w.batch || r.Class != w.class ||
					r.Rejected || r.Reason != "" || r.SLOMet != w.sloMet {
					t.Errorf("row %d = %+v, want job %d", i, r, w.id)
				}
				if !near(r.ArrivalS, w.arrival) || !near(r.StartS, w.start) || !near(r.EndS, w.end) ||
					!near(r.WaitS, w.start-w.arrival) || !near(r.ServiceS, w.end-w.start) || !near(r.E2ES, w.end-w.arrival) {
					t.Errorf("row %d times: arrival %v start %v end %v wait %v service %v e2e %v; want arrival %v start %v end %v",
						i, r.ArrivalS, r.StartS, r.EndS, r.WaitS, r.ServiceS, r.E2ES, w.arrival, w.start, w.end)
				}
			}
			batches := o.batches[p]
			if len(batches) != len(wants) {
				t.Fatalf("%d devices rows, want %d", len(batches), len(wants))
			}
			for i, w := range wants {
				b := batches[i]
				// mlp's catalog memory is a few KiB: weights plus w.batch samples.
				if b.Device != "cpu" || b.DeviceKind != KindMeasured || b.Lane != 0 || b.BatchID != w.batchID ||
					b.Jobs != 1 || b.Samples != w.batch || !near(b.StartS, w.start) || !near(b.EndS, w.end) ||
					!(b.MemoryMiB > 0 && b.MemoryMiB < 1) {
					t.Errorf("devices row %d = %+v, want batch %d of %d samples, %v–%v", i, b, w.batchID, w.batch, w.start, w.end)
				}
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	prof := writeSamples(t, noisyProfile())
	jobs := generateJobs(t, mlpWorkload(20_000), 3)
	cfg := testConfig()
	base := digests(t, runStage(t, cfg, 7, prof, jobs).dir)
	if len(base) != 6+2*len(cfg.Policies) {
		t.Fatalf("wrote %d files: %v", len(base), base)
	}

	again := digests(t, runStage(t, cfg, 7, prof, jobs).dir)
	other := digests(t, runStage(t, cfg, 8, prof, jobs).dir)
	for name, sum := range base {
		if again[name] != sum {
			t.Errorf("%s differs between two runs with the same inputs", name)
		}
		// The seed draws service times and random placements; the cluster,
		// the bounds and the list of runs do not depend on it, nor do the
		// sweep's and the studies' files with them off (TestSweep and
		// TestStudies cover them on).
		dependsOnSeed := !slices.Contains([]string{ClusterFile, BoundsFile, RunsFile, SweepFile, CapacityFile, StudiesFile}, name)
		if (other[name] != sum) != dependsOnSeed {
			t.Errorf("%s differs under another seed = %v, want %v", name, other[name] != sum, dependsOnSeed)
		}
	}
}

// TestDeclaredSpeed runs the same jobs on a measured device and on a
// declared one of speed 2 using the same profile: with exact 10 ms per
// sample, every job's service time halves, and the outputs say which
// device was declared.
func TestDeclaredSpeed(t *testing.T) {
	prof := writeSamples(t, append(constantProfile(), inference("cpu", "mlp", profilespec.FP16, 1, 10)...))
	jobs := generateJobs(t, mlpWorkload(2_000), 1)
	measured := oneDevice(1, 1024, "fifo")
	declared := oneDevice(1, 1024, "fifo")
	declared.Cluster[0].Kind, declared.Cluster[0].Speed, declared.Cluster[0].Name = KindDeclared, 2, "accel"

	for _, tt := range []struct {
		cfg  Config
		name string
		kind string
		per  float64 // seconds per sample
	}{
		{measured, "cpu", KindMeasured, 0.010},
		{declared, "accel", KindDeclared, 0.005},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			o := runStage(t, tt.cfg, 1, prof, jobs)
			if len(o.traces["fifo"]) != 2000 {
				t.Fatalf("%d trace rows, want 2000", len(o.traces["fifo"]))
			}
			for _, r := range o.traces["fifo"] {
				if want := float64(r.BatchSize) * tt.per; !near(r.ServiceS, want) || r.Device != tt.name || r.DeviceKind != tt.kind {
					t.Fatalf("job %d (batch %d): service %v on %s (%s), want %v on %s (%s)", r.JobID, r.BatchSize, r.ServiceS, r.Device, r.DeviceKind, want, tt.name, tt.kind)
				}
			}
			c := o.cluster[0]
			if c.Device != tt.name || c.Kind != tt.kind || c.ContentionMeasured || !slices.Equal(c.ContentionFactors, []float64{1}) {
				t.Errorf("cluster row %+v", c)
			}
			if tt.kind == KindDeclared && !strings.Contains(c.ContentionNote, "declared") {
				t.Errorf("declared device's contention note %q does not say it is declared", c.ContentionNote)
			}
		})
	}
}

// TestRejected gives mlp 10 MiB per sample on a 15 MiB device: a batch of
// one fits, a batch of two fits nowhere and is recorded as rejected.
func TestRejected(t *testing.T) {
	jobs := writeJobs(t, []generate.Job{
		{ID: 1, ArrivalS: 0.5, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 2, Precision: generatespec.PrecisionFP32},
		{ID: 2, ArrivalS: 1, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
	})
	cfg := oneDevice(1, 15, "fifo", "edf")
	cfg.Memory.PerSampleMiB = map[string]float64{"mlp": 10}
	o := runStage(t, cfg, 1, writeSamples(t, constantProfile()), jobs)
	for _, p := range cfg.Policies {
		tr := o.traces[p]
		if len(tr) != 2 {
			t.Fatalf("%s: %d rows, want 2", p, len(tr))
		}
		r := tr[0]
		if r.JobID != 1 || !r.Rejected || !strings.Contains(r.Reason, "memory") || r.Device != "" || r.DeviceKind != "" ||
			r.Lane != -1 || r.BatchID != 0 || r.SLOMet || r.StartS != 0.5 || r.EndS != 0.5 || r.E2ES != 0 {
			t.Errorf("%s: rejected job's row = %+v", p, r)
		}
		if r := tr[1]; r.JobID != 2 || r.Rejected || r.Reason != "" || !r.SLOMet || !near(r.EndS, 1.01) {
			t.Errorf("%s: second job's row = %+v", p, r)
		}
		if b := o.batches[p]; len(b) != 1 || b[0].BatchID != 1 || !near(b[0].MemoryMiB, 10+mlpWeightMiB()) {
			t.Errorf("%s: devices rows %+v, want one batch of %v MiB", p, b, 10+mlpWeightMiB())
		}
	}
	if b := o.bounds; b.Jobs != 2 || b.UnfitJobs != 1 || !near(b.MeanLatencyLBS, 0.01) {
		t.Errorf("bounds %+v, want 2 jobs, 1 unfit, mean latency bound 10 ms", b)
	}
}

// TestRejectedShareWarns: when more than 5% of the jobs fit on no device,
// the stage says so, with the share and the jobs by model and precision,
// in a manifest note and as a warning (memory_mib: 1 rejected 38% of the
// jobs without a word).
func TestRejectedShareWarns(t *testing.T) {
	for _, tt := range []struct {
		big  int // jobs too large for the device, of 20
		want string
	}{
		{1, ""},
		{2, "10.0% of the 20 eval jobs (2) fit on no device and are rejected under every policy, more than 5%: 2 mlp fp32 need more memory than any device holds (the largest, cpu, holds 15 MiB: schedule.cluster[0].memory_mib)"},
	} {
		var jobs []generate.Job
		for i := range 20 {
			batch := int32(1)
			if i < tt.big {
				batch = 2
			}
			jobs = append(jobs, generate.Job{ID: int64(i + 1), ArrivalS: float64(i), Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: batch, Precision: generatespec.PrecisionFP32})
		}
		cfg := oneDevice(1, 15, "fifo")
		cfg.Memory.PerSampleMiB = map[string]float64{"mlp": 10}
		notes := map[string]string{}
		var warned []string
		err := Run(context.Background(), cfg, 1, Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, constantProfile()), Jobs: writeJobs(t, jobs)},
			Output{Dir: t.TempDir(), Metadata: testMeta, Notes: notes, Warn: func(msg string) { warned = append(warned, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == "" {
			if len(warned) > 0 || notes[NoteRejected] != "" {
				t.Errorf("%d of 20 rejected: warned %q, note %q; want nothing", tt.big, warned, notes[NoteRejected])
			}
			continue
		}
		if notes[NoteRejected] != tt.want || len(warned) != 1 || warned[0] != "schedule: "+tt.want {
			t.Errorf("%d of 20 rejected: note %q, warned %q; want %q", tt.big, notes[NoteRejected], warned, tt.want)
		}
	}
}

func mlpWeightMiB() float64 {
	m, _ := catalog.Zoo().Lookup("mlp")
	return float64(m.WeightBytes) / (1 << 20)
}

// TestBoundsByHand checks the bounds on a two-device cluster: a measured
// cpu of two lanes whose contention factor at 2 is 12.5/10 = 1.25, and a
// declared accelerator of one lane at speed 4. mlp takes 10 ms a sample.
//
//	effective lanes: cpu max(1/1, 2/1.25) = 1.6, accel 1 → 2.6
//	speed capacity: 1·1.6 + 4·1 = 5.6
//	jobs (batch, arrival): (1, 0), (2, 0), (1, 1 s); fastest on the accel:
//	  2.5, 5, 2.5 ms → work 10 ms; profiled work 10 + 20 + 10 = 40 ms
//	work bound: max(10/2.6, 40/5.6) ms = 7.142857 ms
//	arrival bound: 1 s + 2.5 ms; mean latency bound: 10/3 ms
func TestBoundsByHand(t *testing.T) {
	prof := append(constantProfile(),
		samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 1, 10, 10)...)
	prof = append(prof, samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 2, 12.5, 12.5)...)
	jobs := writeJobs(t, []generate.Job{
		{ID: 1, ArrivalS: 0, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
		{ID: 2, ArrivalS: 0, Class: generatespec.ClassBatch, SLOS: 1, Model: "mlp", BatchSize: 2, Precision: generatespec.PrecisionFP32},
		{ID: 3, ArrivalS: 1, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
	})
	cfg := testConfig()
	cfg.Cluster[0].MemoryMiB, cfg.Cluster[1].Lanes, cfg.Cluster[1].Speed = 1024, 1, 4
	o := runStage(t, cfg, 1, writeSamples(t, prof), jobs)

	want := BoundsRow{
		Jobs: 3, WorkS: 0.010, EffectiveLanes: 2.6, ProfiledWorkS: 0.040, SpeedCapacity: 5.6,
		WorkLBS: 0.040 / 5.6, ArrivalLBS: 1.0025, MakespanLBS: 1.0025, MeanLatencyLBS: 0.010 / 3,
	}
	got := o.bounds
	if got.Jobs != want.Jobs || got.UnfitJobs != 0 || !near(got.WorkS, want.WorkS) || !near(got.EffectiveLanes, want.EffectiveLanes) ||
		!near(got.ProfiledWorkS, want.ProfiledWorkS) || !near(got.SpeedCapacity, want.SpeedCapacity) || !near(got.WorkLBS, want.WorkLBS) ||
		!near(got.ArrivalLBS, want.ArrivalLBS) || !near(got.MakespanLBS, want.MakespanLBS) || !near(got.MeanLatencyLBS, want.MeanLatencyLBS) {
		t.Errorf("bounds = %+v\nwant     %+v", got, want)
	}
	cpu := o.cluster[0]
	if !cpu.ContentionMeasured || len(cpu.ContentionFactors) != 2 || cpu.ContentionFactors[0] != 1 || !near(cpu.ContentionFactors[1], 1.25) || !near(cpu.EffectiveLanes, 1.6) {
		t.Errorf("cpu cluster row = %+v", cpu)
	}
	// Service times here are exact, so every policy's schedule obeys the
	// bounds, not only in expectation.
	for p, tr := range o.traces {
		var makespan, latency float64
		for _, r := range tr {
			makespan = max(makespan, r.EndS)
			latency += r.E2ES / float64(len(tr))
		}
		if makespan < got.MakespanLBS-1e-12 || latency < got.MeanLatencyLBS-1e-12 {
			t.Errorf("%s: makespan %v, mean latency %v beat the bounds %v, %v", p, makespan, latency, got.MakespanLBS, got.MeanLatencyLBS)
		}
	}
}

// TestLoadScalesArrivals checks that load 2 halves every arrival and keeps
// each job's SLO: a job meets it exactly when it ends within the SLO of
// its (scaled) arrival.
func TestLoadScalesArrivals(t *testing.T) {
	prof := writeSamples(t, noisyProfile())
	jobs, err := parquetio.ReadAll[generate.Job](generateJobs(t, mlpWorkload(3_000), 2))
	if err != nil {
		t.Fatal(err)
	}
	jobsPath := writeJobs(t, jobs)
	byID := map[int64]generate.Job{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	for _, load := range []float64{1, 2} {
		cfg := testConfig()
		cfg.Policies, cfg.Load = []string{"greedy"}, load
		o := runStage(t, cfg, 1, prof, jobsPath)
		for _, r := range o.traces["greedy"] {
			j := byID[r.JobID]
			if r.ArrivalS != j.ArrivalS/load {
				t.Fatalf("load %v: job %d arrives at %v, want %v", load, r.JobID, r.ArrivalS, j.ArrivalS/load)
			}
			if r.SLOMet != (r.EndS <= r.ArrivalS+j.SLOS) {
				t.Fatalf("load %v: job %d ends %v after arriving at %v with SLO %v, slo_met %v", load, r.JobID, r.EndS, r.ArrivalS, j.SLOS, r.SLOMet)
			}
		}
	}
}

func TestMissingCurveNamesIt(t *testing.T) {
	jobs := writeJobs(t, []generate.Job{
		{ID: 1, ArrivalS: 0, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32},
		{ID: 7, ArrivalS: 1, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP16},
	})
	cfg := testConfig()
	dir := t.TempDir()
	err := Run(context.Background(), cfg, 1, Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, constantProfile()), Jobs: jobs}, Output{Dir: dir})
	for _, want := range []string{"schedule: ", "cluster[0] (cpu, measured)", "mlp fp16", "job 7", "profile device cpu at 1 threads",
		"cpu/mlp/fp32/threads=1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run = %v, want an error containing %q", err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed run wrote %d files before failing", len(ents))
	}
}

func TestRunErrors(t *testing.T) {
	prof := writeSamples(t, constantProfile())
	jobs := writeJobs(t, []generate.Job{{ID: 1, Class: generatespec.ClassInteractive, SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: generatespec.PrecisionFP32}})
	unknownDevice := testConfig()
	unknownDevice.Cluster[0].ProfileDevice = "gpu0"
	badConfig := testConfig()
	badConfig.Load = 0
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  Config
		in   Inputs
		want string
	}{
		{"invalid config", context.Background(), badConfig, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, "schedule: invalid config: schedule.load: must be a factor in [0.001, 1000], got 0"},
		{"no samples", context.Background(), testConfig(), Inputs{Models: catalogtest.ZooFile(t), Samples: filepath.Join(t.TempDir(), "none.parquet"), Jobs: jobs}, "schedule: read profile samples"},
		{"no jobs", context.Background(), testConfig(), Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: filepath.Join(t.TempDir(), "none.parquet")}, "schedule: open jobs"},
		{"profile lacks the device", context.Background(), unknownDevice, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, "cluster[0] (cpu): service: contention of device gpu0: not measured; the profile has devices cpu"},
		{"cancelled", cancelled, testConfig(), Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, context.Canceled.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(tt.ctx, tt.cfg, 1, tt.in, Output{Dir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if err := Run(cancelled, testConfig(), 1, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, Output{Dir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestProgress(t *testing.T) {
	cfg := testConfig()
	var calls, last, total int64
	err := Run(context.Background(), cfg, 1,
		Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: generateJobs(t, mlpWorkload(10_000), 1)},
		Output{Dir: t.TempDir(), Progress: func(d, n int64) { calls++; last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(cfg.Policies)) * 10_000; calls == 0 || last != want || total != want {
		t.Errorf("progress: %d calls, last %d of %d, want the last at %d of %d", calls, last, total, want, want)
	}
}

// TestTraceIsTheSimulation replays each policy with sim.Run directly, on
// jobs read whole and never reused, and checks that the stage's streamed
// trace, whose reader recycles the memory of finished jobs, says the same.
// The overload (load 100) keeps long queues, so a job's memory is reused
// while others wait.
func TestTraceIsTheSimulation(t *testing.T) {
	prof := noisyProfile()
	jobsPath := generateJobs(t, mlpWorkload(5_000), 9)
	cfg := testConfig()
	cfg.Load = 100
	cfg.Policies = append(cfg.Policies, "dynamic+split+migrate")
	cfg.Splitting.MinBatch = 8
	cfg.Replications = 2
	const seed = 5
	o := runStage(t, cfg, seed, writeSamples(t, prof), jobsPath)

	rows, err := parquetio.ReadAll[generate.Job](jobsPath)
	if err != nil {
		t.Fatal(err)
	}
	jobs := make([]*sim.Job, len(rows))
	for i, r := range rows {
		a := r.ArrivalS / cfg.Load
		class, precision := sim.Batch, int32(0)
		if r.Class == generatespec.ClassInteractive {
			class = sim.Interactive
		}
		if r.Precision == generatespec.PrecisionFP16 {
			precision = 1
		}
		jobs[i] = &sim.Job{ID: r.ID, Arrival: a, Deadline: a + r.SLOS, Class: class,
			Model: int32(slices.Index(catalog.Zoo().Names(), r.Model)), Precision: precision, Batch: r.BatchSize}
	}
	// The train stage simulates what cluster.Load loads, configured by
	// SimConfig: the same jobs, and the same simulations.
	w, err := cluster.Load(context.Background(), cfg, catalog.Zoo(), writeSamples(t, prof), jobsPath, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != len(jobs) {
		t.Fatalf("cluster.Load: %d jobs, want %d", len(w.Jobs), len(jobs))
	}
	for i, j := range jobs {
		if w.Jobs[i] != *j {
			t.Fatalf("cluster.Load: job %d = %+v, want %+v", i, w.Jobs[i], *j)
		}
	}
	replay := replayer(o, w, jobs, seed)
	for _, name := range cfg.Policies {
		for rep := 1; rep <= cfg.Replications; rep++ {
			t.Run(replicationKey(name, rep), func(t *testing.T) { replay(t, name, rep) })
		}
		if slices.EqualFunc(o.traces[name], o.traces[replicationKey(name, 2)], func(a, b TraceRow) bool { return a.EndS == b.EndS }) {
			t.Errorf("%s: the second replication ended every job when the first did; its seeds should differ", name)
		}
	}
}

// replayer returns a function that checks one replication of a policy
// against sim.Run on the same jobs.
func replayer(o output, w *cluster.Workload, jobs []*sim.Job, seed int64) func(t *testing.T, name string, rep int) {
	return func(t *testing.T, name string, rep int) {
		simSeed, policySeed := Unit{Spec: name, Replication: rep}.seeds(seed)
		spec, err := policy.ParseSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := w.SimConfig(name, simSeed, policySeed)
		if err != nil {
			t.Fatal(err)
		}
		cl := w.Cluster
		i := 0
		var recs []sim.Record
		_, err = sim.Run(sc,
			func() (*sim.Job, bool) {
				if i == len(jobs) {
					return nil, false
				}
				i++
				return jobs[i-1], true
			},
			func(r *sim.Record) error { recs = append(recs, *r); return nil })
		if err != nil {
			t.Fatal(err)
		}
		trace := o.traces[replicationKey(name, rep)]
		if len(trace) != len(recs) {
			t.Fatalf("trace has %d rows, the simulation %d records", len(trace), len(recs))
		}
		var reordered bool
		for k, r := range recs {
			tr := trace[k]
			if tr.JobID != r.Job.ID || tr.Device != cl.Device(int(r.Device)).Name || tr.Lane != r.Lane || tr.BatchID != r.BatchID ||
				tr.BatchSize != r.BatchSize || tr.Migrated != r.Migrated || tr.SplitParts != r.SplitParts ||
				tr.StartS != r.Start || tr.EndS != r.End || tr.ArrivalS != r.Job.Arrival {
				t.Fatalf("row %d = %+v, the simulation recorded job %d on device %d lane %d batch %d, %v–%v",
					k, tr, r.Job.ID, r.Device, r.Lane, r.BatchID, r.Start, r.End)
			}
			reordered = reordered || (k > 0 && tr.JobID < trace[k-1].JobID)
		}
		if !reordered {
			t.Errorf("jobs completed in arrival order: the test needs queues that reorder them")
		}
		// Each option shows in the files, and only with the option.
		var migrated, split, merged bool
		for _, tr := range trace {
			migrated = migrated || tr.Migrated
			split = split || tr.SplitParts > 1
		}
		for _, b := range o.batches[replicationKey(name, rep)] {
			merged = merged || b.Jobs > 1
		}
		if migrated != spec.Migrate || split != spec.Split || merged != spec.Batch {
			t.Errorf("migrated %v, split %v, merged %v; the spec is %+v", migrated, split, merged, spec)
		}
	}
}

// TestCancelDuringSimulation cancels the run at its first progress report
// of some work done (the report of none, as the simulations begin, comes
// first), while the policies are simulating, and expects Run to stop
// early with the context's error.
func TestCancelDuringSimulation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last, total int64
	first := [2]int64{-1, -1}
	err := Run(ctx, testConfig(), 1,
		Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: generateJobs(t, mlpWorkload(200_000), 1)},
		Output{Dir: t.TempDir(), Progress: func(d, n int64) {
			if first[0] < 0 {
				first = [2]int64{d, n}
			}
			if d > 0 && last == 0 {
				last, total = d, n
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if last == 0 || last >= total/2 {
		t.Errorf("progress reached %d of %d before the run stopped; want it stopped soon after the first report", last, total)
	}
	if first[0] != 0 || first[1] != total {
		t.Errorf("first report %d of %d, want none of %d done as the simulations begin", first[0], first[1], total)
	}
}

// TestPoliciesShareTheirDraws: on one single-lane device, where fifo and
// edf run every job alone at its own size, each job takes the same
// ground-truth time under both (common random numbers), though the two
// run the jobs in different orders; a second replication draws others.
func TestPoliciesShareTheirDraws(t *testing.T) {
	cfg := oneDevice(1, 1<<20, "fifo", "edf")
	cfg.Load = 3 // queues, so that edf reorders
	cfg.Replications = 2
	o := runStage(t, cfg, 4, writeSamples(t, noisyProfile()), generateJobs(t, mlpWorkload(2000), 4))
	service := func(key string) map[int64]float64 {
		m := map[int64]float64{}
		for _, r := range o.traces[key] {
			m[r.JobID] = r.ServiceS
		}
		return m
	}
	fifo, edf, again := service("fifo"), service("edf"), service(replicationKey("fifo", 2))
	var reordered, differ bool
	for i, r := range o.traces["edf"] {
		reordered = reordered || r.JobID != o.traces["fifo"][i].JobID
	}
	// service_s is end minus start, so it carries the rounding of
	// those times: equal to within 1e-12 of the clock's reading.
	span := o.bounds.ArrivalLBS * 10
	for id, s := range fifo {
		if math.Abs(edf[id]-s) > 1e-12*span {
			t.Fatalf("job %d took %v under fifo and %v under edf", id, s, edf[id])
		}
		differ = differ || math.Abs(again[id]-s) > 1e-12*span
	}
	if !reordered || !differ {
		t.Errorf("edf reordered the jobs: %v; the second replication drew other times: %v; want both", reordered, differ)
	}
}
