package fidelity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// fidelityRun is one real run of the fidelity fixture: the end-to-end
// latencies of its jobs, real and simulated; NaN marks a rejected job.
// Job i (from 1) arrives at i seconds and runs alone in its own batch.
type fidelityRun struct {
	policy    string
	load      float64
	real, sim []float64
	// replay, if not nil, is the replay's (the simulator on the real
	// run's batch times), with missed batches lacking a real time.
	replay []float64
	missed int64
}

// fidelitySLO is every fixture job's SLO: it meets it within 0.45 s.
const fidelitySLO = 0.45

// fidelityFixture is a tiny schedule artifact's real part, numbers chosen
// by hand: fifo and edf at two loads on a real cluster of one device, the
// simulated cluster's declared accelerator left out.
type fidelityFixture struct {
	runs []fidelityRun
	// repeats are runs of a run's jobs beyond its first.
	repeats []fidelityRepeat
	// faster and slower are the simulations, with service times shorter
	// and longer by sensitivity, of the runs they name (policy@load).
	sensitivity    float64
	faster, slower map[string][]float64
	// main is the simulated cluster, real the real one.
	main, real []schedulespec.ClusterRow
}

// fidelityRepeat is the repeat'th real run of the policy's jobs at load.
type fidelityRepeat struct {
	policy string
	load   float64
	repeat int32
	e2e    []float64
}

func scaled(n int, by float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = by * float64(i+1)
	}
	return out
}

func newFidelityFixture() fidelityFixture {
	cpu := schedulespec.ClusterRow{Device: "cpu", Kind: schedulespec.KindMeasured, ProfileDevice: "cpu", Threads: 1, Lanes: 2,
		MemoryMiB: 8192, Speed: 1, ContentionMeasured: true, ContentionFactors: []float64{1, 1.25}, EffectiveLanes: 1.6}
	accel := schedulespec.ClusterRow{Device: "accel", Kind: schedulespec.KindDeclared, ProfileDevice: "cpu", Threads: 1, Lanes: 4,
		MemoryMiB: 16384, Speed: 10, ContentionFactors: []float64{1, 1, 1, 1}, EffectiveLanes: 4}
	f := fidelityFixture{main: []schedulespec.ClusterRow{cpu, accel}, real: []schedulespec.ClusterRow{cpu}}
	// edf at 50%: exact but for its slowest job, simulated half as slow
	// again; at 80% each policy has an eleventh job, rejected.
	edf50 := scaled(10, 0.12)
	edf50sim := slices.Clone(edf50)
	edf50sim[9] = 1.8
	fifo80, fifo80sim, edf80 := append(scaled(10, 0.2), math.NaN()), append(scaled(10, 0.16), math.NaN()), append(scaled(10, 0.19), math.NaN())
	f.runs = []fidelityRun{
		{"fifo", 0.5, scaled(10, 0.1), scaled(10, 0.105), scaled(10, 0.101), 0},
		{"edf", 0.5, edf50, edf50sim, slices.Clone(edf50), 2},
		{"fifo", 0.8, fifo80, fifo80sim, nil, 0},
		{"edf", 0.8, edf80, slices.Clone(edf80), nil, 0},
	}
	// fifo at 50% ran twice more, 10% slower and 5% faster: the
	// simulation, 5% slower than the first run, lies within the three.
	f.repeats = []fidelityRepeat{{"fifo", 0.5, 2, scaled(10, 0.11)}, {"fifo", 0.5, 3, scaled(10, 0.095)}}
	// fifo at 50% simulated 5% faster and slower: the simulation moves
	// up more than down, and the real run lies outside the band.
	f.sensitivity = 0.05
	f.faster = map[string][]float64{"fifo@0.5": scaled(10, 0.104)}
	f.slower = map[string][]float64{"fifo@0.5": scaled(10, 0.12)}
	return f
}

// traceOf lays out a run's latencies as a trace and a devices file.
func traceOf(policy string, e2e []float64) ([]schedulespec.TraceRow, []schedulespec.BatchRow) {
	var trace []schedulespec.TraceRow
	var batches []schedulespec.BatchRow
	for i, e := range e2e {
		at := float64(i + 1)
		r := schedulespec.TraceRow{JobID: int64(101 + i), Policy: policy, Class: generatespec.ClassInteractive, ArrivalS: at, StartS: at, EndS: at}
		if math.IsNaN(e) {
			r.Lane, r.Rejected, r.Reason = -1, true, "fits no device"
			trace = append(trace, r)
			continue
		}
		r.Device, r.DeviceKind, r.Lane, r.BatchID, r.BatchSize = "cpu", schedulespec.KindMeasured, int32(i%2), int64(i+1), 1
		r.EndS, r.ServiceS, r.E2ES, r.SLOMet, r.SplitParts = at+e, e, e, e <= fidelitySLO, 1
		trace = append(trace, r)
		batches = append(batches, schedulespec.BatchRow{Device: "cpu", DeviceKind: schedulespec.KindMeasured, Lane: int32(i % 2),
			BatchID: int64(i + 1), Jobs: 1, Samples: 1, StartS: at, EndS: at + e})
	}
	return trace, batches
}

// dispatchOf gives each completed job of a real run its batch, on a
// timeline of its own: 1 ms of dispatch overhead, 100 µs of notice lag;
// even jobs run alone on lane 0, 1.1 times the profile's mean, and odd
// jobs in pairs, one on each lane from the same moment, twice the mean
// (the last odd one alone, for want of a partner);
// the first batch faults 7 pages in.
func dispatchOf(e2e []float64) []schedulespec.DispatchRow {
	var out []schedulespec.DispatchRow
	for i, e := range e2e {
		if math.IsNaN(e) {
			continue
		}
		at, lane, mean := float64(10*i), int32(0), (e-0.001)/1.1
		if i%2 == 1 {
			mean = (e - 0.001) / 2
			if i%4 == 3 {
				at, lane = float64(10*(i-2)), 1 // beside job i-2
			}
		}
		d := schedulespec.DispatchRow{BatchID: int64(i + 1), Device: "cpu", Lane: lane, Model: "mlp", Precision: "fp32", Jobs: 1, Samples: 1,
			StartS: at, HandedS: at, PickedS: at, RunS: at + 0.001, EndS: at + e, NoticedS: at + e + 0.0001, Busy: 1 + lane, ProfileMeanS: mean}
		if i == 0 {
			d.Faults = 7
		}
		out = append(out, d)
	}
	return out
}

// write writes the fixture's real/ into a new schedule directory.
func (f fidelityFixture) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var rows []schedulespec.RealRunRow
	for _, r := range f.runs {
		run := schedulespec.RealRunDir(r.policy, r.load)
		row := schedulespec.RealRunRow{Policy: r.policy, Load: r.load, ScheduleLoad: r.load / 20, Jobs: int64(len(r.real)), SpanS: 12,
			WallS: 12.5, Trace: run + "/trace.parquet", Devices: run + "/devices.parquet", Dispatch: run + "/dispatch.parquet",
			SimTrace: run + "/sim/trace.parquet", SimDevices: run + "/sim/devices.parquet",
			LateEvents: int64(len(r.real)), LateP50S: 0.0004, LateP99S: 0.002, LateMaxS: 0.003}
		if len(rows) == 0 { // the first run warmed the sessions, one of them in vain
			row.WarmRuns, row.WarmS, row.WarmFaulting = 9, 4.5, 1
		}
		key := fmt.Sprintf("%s@%g", r.policy, r.load)
		var extra []struct {
			trace, devices string
			e2e            []float64
		}
		if fe, ok := f.faster[key]; ok {
			row.Sensitivity = f.sensitivity
			row.FasterTrace, row.FasterDevices = run+"/sim-faster/trace.parquet", run+"/sim-faster/devices.parquet"
			row.SlowerTrace, row.SlowerDevices = run+"/sim-slower/trace.parquet", run+"/sim-slower/devices.parquet"
			extra = append(extra, struct {
				trace, devices string
				e2e            []float64
			}{row.FasterTrace, row.FasterDevices, fe}, struct {
				trace, devices string
				e2e            []float64
			}{row.SlowerTrace, row.SlowerDevices, f.slower[key]})
		}
		sides := []struct {
			trace, devices string
			e2e            []float64
		}{{row.Trace, row.Devices, r.real}, {row.SimTrace, row.SimDevices, r.sim}}
		if r.replay != nil {
			row.ReplayTrace, row.ReplayDevices, row.ReplayMissed = run+"/replay/trace.parquet", run+"/replay/devices.parquet", r.missed
			sides = append(sides, struct {
				trace, devices string
				e2e            []float64
			}{row.ReplayTrace, row.ReplayDevices, r.replay})
		}
		rows = append(rows, row)
		for _, side := range append(sides, extra...) {
			trace, batches := traceOf(r.policy, side.e2e)
			writeRows(t, dir, side.trace, trace)
			writeRows(t, dir, side.devices, batches)
		}
		writeRows(t, dir, row.Dispatch, dispatchOf(r.real))
	}
	writeRows(t, dir, schedulespec.RealRunsFile, rows)
	var repeats []schedulespec.RealRepeatRow
	for _, r := range f.repeats {
		rel := schedulespec.RealRepeatDir(r.policy, r.load, int(r.repeat))
		row := schedulespec.RealRepeatRow{Policy: r.policy, Load: r.load, Repeat: r.repeat, Jobs: int64(len(r.e2e)), WallS: 12.5,
			Trace: rel + "/trace.parquet", Devices: rel + "/devices.parquet", Dispatch: rel + "/dispatch.parquet"}
		trace, batches := traceOf(r.policy, r.e2e)
		writeRows(t, dir, row.Trace, trace)
		writeRows(t, dir, row.Devices, batches)
		writeRows(t, dir, row.Dispatch, dispatchOf(r.e2e))
		repeats = append(repeats, row)
	}
	if len(repeats) > 0 {
		writeRows(t, dir, schedulespec.RealRepeatsFile, repeats)
	}
	writeRows(t, dir, schedulespec.RealDir+"/"+schedulespec.ClusterFile, f.real)
	return dir
}

// writeRows writes rows as the Parquet file rel, a slash-separated path
// under dir, making its directory.
func writeRows[T any](t *testing.T, dir, rel string, rows []T) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(path, rows, nil); err != nil {
		t.Fatal(err)
	}
}

func readFixture(t *testing.T, f fidelityFixture) *comparison {
	t.Helper()
	fid, err := readRuns(f.write(t), f.main)
	if err != nil {
		t.Fatal(err)
	}
	if fid == nil {
		t.Fatal("no real runs read")
	}
	if fid.enough != minBeyond {
		t.Fatalf("read with %d jobs beyond a percentile to judge it, want %d", fid.enough, minBeyond)
	}
	// The fixture's runs hold about ten jobs each, far too few to judge a
	// percentile on (TestBandText): every percentile is judged here, so
	// that the arithmetic shows.
	fid.enough = 0
	return fid
}

func near(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-3)
}
