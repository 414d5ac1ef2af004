package evaluate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
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

func readFixture(t *testing.T, f fidelityFixture) *fidelity {
	t.Helper()
	fid, err := readFidelity(f.write(t), f.main)
	if err != nil {
		t.Fatal(err)
	}
	if fid == nil {
		t.Fatal("no real runs read")
	}
	return fid
}

func near(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-3)
}

// TestFidelity checks each run's numbers against the fixture's, worked
// out by hand: the percentiles and their errors, the per-job errors, SLO
// attainment, utilization, the rankings and the target's verdict.
func TestFidelity(t *testing.T) {
	fid := readFixture(t, newFidelityFixture())
	tests := []struct {
		run                        string
		p50, p50Sim, p99, p99Sim   float64
		errP50, errP99             float64
		median, p90, within        float64
		slo, sloSim, util, utilSim float64
		compared                   int
		met                        bool
	}{
		// Every job simulated 5% slow: within the target.
		{run: "fifo at 50.0%", p50: 0.5, p50Sim: 0.525, p99: 1, p99Sim: 1.05, errP50: 0.05, errP99: 0.05,
			median: 0.05, p90: 0.05, within: 1, slo: 0.4, sloSim: 0.4, util: 5.5 / (2 * 11), utilSim: 5.775 / (2 * 11.05), compared: 10, met: true},
		// The slowest job simulated at 1.8 s for 1.2 s: P99 50% off.
		{run: "edf at 50.0%", p50: 0.6, p50Sim: 0.6, p99: 1.2, p99Sim: 1.8, errP50: 0, errP99: 0.5,
			median: 0, p90: 0, within: 0.9, slo: 0.3, sloSim: 0.3, util: 6.6 / (2 * 11.2), utilSim: 7.2 / (2 * 11.8), compared: 10},
		// Every job 20% fast; the rejected eleventh misses its SLO and
		// is compared in neither.
		{run: "fifo at 80.0%", p50: 1, p50Sim: 0.8, p99: 2, p99Sim: 1.6, errP50: -0.2, errP99: -0.2,
			median: 0.2, p90: 0.2, within: 0, slo: 2.0 / 11, sloSim: 2.0 / 11, util: 11.0 / (2 * 12), utilSim: 8.8 / (2 * 11.6), compared: 10},
		// Exact, but at 80% the simulator ranks fifo first and the real
		// runs edf: missed on the ranking alone.
		{run: "edf at 80.0%", p50: 0.95, p50Sim: 0.95, p99: 1.9, p99Sim: 1.9, errP50: 0, errP99: 0,
			median: 0, p90: 0, within: 1, slo: 2.0 / 11, sloSim: 2.0 / 11, util: 10.45 / (2 * 11.9), utilSim: 10.45 / (2 * 11.9), compared: 10},
	}
	if len(fid.runs) != len(tests) {
		t.Fatalf("%d runs, want %d", len(fid.runs), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			r := fid.runs[i]
			if r.name() != tt.run {
				t.Fatalf("run %d is %s, want %s", i, r.name(), tt.run)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"real P50", r.real.E2E.P50, tt.p50}, {"sim P50", r.sim.E2E.P50, tt.p50Sim},
				{"real P99", r.real.E2E.P99, tt.p99}, {"sim P99", r.sim.E2E.P99, tt.p99Sim},
				{"P50 error", relErr(r.sim.E2E.P50, r.real.E2E.P50), tt.errP50}, {"P99 error", relErr(r.sim.E2E.P99, r.real.E2E.P99), tt.errP99},
				{"median abs. error", r.jobErr.median, tt.median}, {"P90 abs. error", r.jobErr.p90, tt.p90}, {"within ±10%", r.jobErr.within, tt.within},
				{"real SLO attainment", 1 - r.real.SLOViolation, tt.slo}, {"sim SLO attainment", 1 - r.sim.SLOViolation, tt.sloSim},
				{"real utilization", r.realUtil, tt.util}, {"sim utilization", r.simUtil, tt.utilSim},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			if len(r.pairedReal) != tt.compared {
				t.Errorf("%d jobs compared, want %d", len(r.pairedReal), tt.compared)
			}
			if held, met, text := fid.verdict(i); !held || met != tt.met {
				t.Errorf("verdict held %v met %v (%s), want held, met %v", held, met, text, tt.met)
			}
		})
	}

	t.Run("rankings", func(t *testing.T) {
		want := []struct {
			load              float64
			real, sim         []string
			winner, sameOrder bool
		}{
			{0.5, []string{"fifo", "edf"}, []string{"fifo", "edf"}, true, true},
			{0.8, []string{"edf", "fifo"}, []string{"fifo", "edf"}, false, false},
		}
		if len(fid.rankings) != len(want) {
			t.Fatalf("%d rankings, want %d", len(fid.rankings), len(want))
		}
		names := func(idx []int) []string {
			var out []string
			for _, i := range idx {
				out = append(out, fid.runs[i].row.Policy)
			}
			return out
		}
		for k, w := range want {
			rk := fid.rankings[k]
			if rk.load != w.load || !slices.Equal(names(rk.real), w.real) || !slices.Equal(names(rk.sim), w.sim) ||
				rk.sameWinner() != w.winner || rk.sameOrder() != w.sameOrder {
				t.Errorf("at %v: real %v, sim %v (same winner %v, order %v), want %v, %v (%v, %v)", rk.load, names(rk.real), names(rk.sim),
					rk.sameWinner(), rk.sameOrder(), w.real, w.sim, w.winner, w.sameOrder)
			}
		}
	})

	t.Run("rows", func(t *testing.T) {
		rows := fidelityRows(fid)
		for _, w := range []struct {
			policy string
			load   float64
			metric string
			value  float64
		}{
			{"fifo", 0.5, "real_p50_e2e_s", 0.5}, {"fifo", 0.5, "sim_p99_e2e_s", 1.05}, {"fifo", 0.5, "error_p99_e2e", 0.05},
			{"fifo", 0.5, "target_met", 1}, {"edf", 0.5, "target_met", 0}, {"edf", 0.5, "error_p99_e2e", 0.5},
			{"edf", 0.5, "job_median_abs_error", 0}, {"edf", 0.5, "job_within_10pct", 0.9},
			{"fifo", 0.8, "jobs", 11}, {"fifo", 0.8, "jobs_compared", 10}, {"fifo", 0.8, "real_slo_attainment", 2.0 / 11},
			{"fifo", 0.8, "sim_utilization", 8.8 / 23.2}, {"edf", 0.8, "target_met", 0}, {"edf", 0.8, "late_events", 11},
			{"", 0.5, "same_order", 1}, {"", 0.8, "same_winner", 0}, {"", 0.8, "same_order", 0},
			{"fifo", 0.5, "replay_p50_e2e_s", 0.505}, {"fifo", 0.5, "error_replay_p99_e2e", 0.01},
			{"edf", 0.5, "error_replay_p50_e2e", 0}, {"edf", 0.5, "replay_missed_batches", 2},
		} {
			i := slices.IndexFunc(rows, func(r MetricRow) bool {
				return r.Scope == ScopeFidelity && r.Policy == w.policy && r.Load == w.load && r.Metric == w.metric
			})
			if i < 0 {
				t.Errorf("no %s row of %q at %v", w.metric, w.policy, w.load)
				continue
			}
			if !near(rows[i].Value, w.value) {
				t.Errorf("%s of %q at %v = %v, want %v", w.metric, w.policy, w.load, rows[i].Value, w.value)
			}
		}
	})
}

// TestFidelityTarget holds other policies out of the target and checks
// that a load with one policy has nothing to rank.
func TestFidelityTarget(t *testing.T) {
	f := newFidelityFixture()
	f.runs = []fidelityRun{
		{policy: "fifo", load: 0.5, real: scaled(10, 0.1), sim: scaled(10, 0.105)},
		{policy: "edf+migrate", load: 0.5, real: scaled(10, 0.1), sim: scaled(10, 0.5)},
		{policy: "edf", load: 0.8, real: scaled(10, 0.1), sim: scaled(10, 0.109)},
	}
	fid := readFixture(t, f)
	tests := []struct {
		run       int
		held, met bool
		text      string
	}{
		{0, true, true, "met (P50 +5.0%, P99 +5.0%, same order)"},
		{1, false, false, "not held to it"},
		{2, true, true, "met (P50 +9.0%, P99 +9.0%, nothing to rank)"},
	}
	for _, tt := range tests {
		if held, met, text := fid.verdict(tt.run); held != tt.held || met != tt.met || text != tt.text {
			t.Errorf("verdict(%s) = %v, %v, %q; want %v, %v, %q", fid.runs[tt.run].name(), held, met, text, tt.held, tt.met, tt.text)
		}
	}
	if want := "Met in all 2 runs held to it."; !strings.Contains(fid.targetText(), want) {
		t.Errorf("target text %q lacks %q", fid.targetText(), want)
	}
	rows := fidelityRows(fid)
	if slices.ContainsFunc(rows, func(r MetricRow) bool { return r.Policy == "edf+migrate" && r.Metric == "target_met" }) {
		t.Error("edf+migrate, which the target does not name, has a target_met row")
	}
	if slices.ContainsFunc(rows, func(r MetricRow) bool { return r.Load == 0.8 && r.Metric == "same_order" }) {
		t.Error("a load with one policy has a same_order row")
	}
}

// TestSourcesOf checks the sources' figures and contributions on batches
// worked out by hand.
func TestSourcesOf(t *testing.T) {
	factors := map[string][]float64{"cpu": {1, 1.25}}
	row := schedulespec.RealRunRow{Policy: "fifo", Load: 0.5, Jobs: 4, LateEvents: 8, LateP50S: 0.0005}
	batch := func(lane, jobs int32, start, overhead, run, lag, mean float64) schedulespec.DispatchRow {
		return schedulespec.DispatchRow{Device: "cpu", Lane: lane, Jobs: jobs, StartS: start, HandedS: start, PickedS: start,
			RunS: start + overhead, EndS: start + overhead + run, NoticedS: start + overhead + run + lag, ProfileMeanS: mean}
	}
	tests := []struct {
		name    string
		batches []schedulespec.DispatchRow
		want    sources
	}{
		{
			// Two jobs alone 20 ms over an 80 ms mean. Lane 0's batch of
			// [1.003, 1.203] runs wholly beside lane 1's of [1.0, 1.5]:
			// modelled 100 ms × 1.25, 75 ms short. Lane 1's does 3 ms of
			// its 400 ms alone, 200 ms at 1/1.25 (160 ms of work), the
			// remaining 237 ms alone: 440 ms, 60 ms short. One batch has
			// no profile curve and counts for its dispatch alone.
			name: "alone, beside another lane, no curve",
			batches: []schedulespec.DispatchRow{
				batch(0, 2, 0, 0.001, 0.1, 0.0002, 0.08),
				batch(1, 1, 0.999, 0.001, 0.5, 0.0005, 0.4),
				batch(0, 1, 1, 0.003, 0.2, 0.0005, 0.1),
				batch(0, 1, 2, 0.002, 0.05, 0.0001, 0),
			},
			want: sources{batches: 4, jobs: 5, dispatchP50: 0.001, dispatchP99: 0.003, lagP50: 0.0002, lagP99: 0.0005,
				alone: 1.25, aloneN: 1, contended: 0.7 / 0.565, contendedN: 2, factor: 0.565 / 0.5, latePerJob: 2,
				contrib: [numSources]float64{srcAlone: 2 * 0.02 / 5, srcContention: (0.075 + 0.06) / 5, srcDispatch: (2*0.001 + 0.001 + 0.003 + 0.002) / 5, srcLateness: 0.0005 * 2}},
		},
		{
			// Three lanes busy on a device with factors for two: the
			// last; a device without factors: 1. Faster than the model:
			// negative contributions.
			name: "beyond the factors, faster than the model",
			batches: []schedulespec.DispatchRow{
				batch(0, 1, 0, 0.001, 0.1, 0.0001, 0.1),
				batch(1, 1, 0, 0, 1, 0.0001, 0),
				batch(2, 1, 0, 0, 1, 0.0001, 0),
				{Device: "gpu", Jobs: 1, StartS: 1, RunS: 1.001, EndS: 1.051, NoticedS: 1.0511, ProfileMeanS: 0.1},
			},
			want: sources{batches: 4, jobs: 4, dispatchP50: 0, dispatchP99: 0.001, lagP50: 0.0001, lagP99: 0.0001,
				alone: 0.5, aloneN: 1, contended: 0.8, contendedN: 1, factor: 1.25, latePerJob: 2,
				contrib: [numSources]float64{srcAlone: -0.05 / 4, srcContention: -0.025 / 4, srcDispatch: 0.002 / 4, srcLateness: 0.001}},
		},
		{
			// Two lanes run 50 ms each, together, of 100 ms means: each
			// does 40 ms of work beside the other, and the model runs on
			// alone past the real end, to 110 ms.
			name: "the model outlasts the real run",
			batches: []schedulespec.DispatchRow{
				batch(0, 1, 0, 0, 0.05, 0.0001, 0.1),
				batch(1, 1, 0, 0, 0.05, 0.0001, 0.1),
			},
			want: sources{batches: 2, jobs: 2, dispatchP50: 0, dispatchP99: 0, lagP50: 0.0001, lagP99: 0.0001,
				alone: math.NaN(), contended: 0.1 / 0.22, contendedN: 2, factor: 1.1, latePerJob: 2,
				contrib: [numSources]float64{srcAlone: 0, srcContention: -0.06, srcDispatch: 0, srcLateness: 0.001}},
		},
		{
			// Alone, two mlp batches of 40 µs against 2 µs profiled (20
			// times) and a ResNet batch 5% over 100 ms: weighed by time,
			// 0.10508 s over 0.100004 s, not the median's 20.
			name: "weighed by time",
			batches: []schedulespec.DispatchRow{
				batch(0, 1, 0, 0.001, 40e-6, 0.0001, 2e-6),
				batch(0, 1, 1, 0.001, 40e-6, 0.0001, 2e-6),
				batch(0, 1, 2, 0.001, 0.105, 0.0001, 0.1),
			},
			want: sources{batches: 3, jobs: 3, dispatchP50: 0.001, dispatchP99: 0.001, lagP50: 0.0001, lagP99: 0.0001,
				alone: 0.10508 / 0.100004, aloneN: 3, contended: math.NaN(), factor: math.NaN(), latePerJob: 2,
				contrib: [numSources]float64{srcAlone: (38e-6 + 38e-6 + 0.005) / 3, srcContention: 0, srcDispatch: 0.001, srcLateness: 0.001}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sourcesOf(tt.batches, row, factors)
			if err != nil {
				t.Fatal(err)
			}
			if got.batches != tt.want.batches || got.jobs != tt.want.jobs || got.aloneN != tt.want.aloneN || got.contendedN != tt.want.contendedN {
				t.Errorf("counts: %d batches, %d jobs, %d alone, %d contended; want %d, %d, %d, %d", got.batches, got.jobs, got.aloneN, got.contendedN,
					tt.want.batches, tt.want.jobs, tt.want.aloneN, tt.want.contendedN)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"dispatch P50", got.dispatchP50, tt.want.dispatchP50}, {"dispatch P99", got.dispatchP99, tt.want.dispatchP99},
				{"lag P50", got.lagP50, tt.want.lagP50}, {"lag P99", got.lagP99, tt.want.lagP99},
				{"alone ratio", got.alone, tt.want.alone}, {"contended ratio", got.contended, tt.want.contended},
				{"factor", got.factor, tt.want.factor}, {"late per job", got.latePerJob, tt.want.latePerJob},
				{"alone contribution", got.contrib[srcAlone], tt.want.contrib[srcAlone]},
				{"contention contribution", got.contrib[srcContention], tt.want.contrib[srcContention]},
				{"dispatch contribution", got.contrib[srcDispatch], tt.want.contrib[srcDispatch]},
				{"lateness contribution", got.contrib[srcLateness], tt.want.contrib[srcLateness]},
			} {
				if !(near(c.got, c.want) || math.IsNaN(c.got) && math.IsNaN(c.want)) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
	t.Run("largest", func(t *testing.T) {
		c := [numSources]float64{srcAlone: 0.01, srcContention: -0.03, srcDispatch: 0.02, srcLateness: math.NaN()}
		if k := largest(c); k != srcContention || sourceName(k, c) != "contention below the profiled factor" {
			t.Errorf("largest = %d (%s), want the contention, below its factor", k, sourceName(k, c))
		}
	})
}

// TestFidelitySection builds the section from the fixture, checks what
// it says and compares its Markdown with testdata/fidelity-section.md
// (-update rewrites it).
func TestFidelitySection(t *testing.T) {
	fid := readFixture(t, newFidelityFixture())
	sec, err := fidelitySection(&reportData{fidelity: fid})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Title != "Fidelity" {
		t.Errorf("title %q", sec.Title)
	}
	for _, want := range []string{
		"The real cluster: cpu (2 lanes, measured). Left out of it, of the simulated cluster: accel (declared: no hardware here to run it on)",
		"Met in 1 of the 4 runs held to it (fifo at 50.0%); **missed** in edf at 50.0%, fifo at 80.0% and edf at 80.0%.",
		"| fifo at 50.0% | 10 | 500 ms | 525 ms | +5.0% | 1 s | 1.05 s | +5.0% | 1 s | 1.05 s | +5.0% | met (P50 +5.0%, P99 +5.0%, same order) |",
		"| edf at 80.0% | 11 | 950 ms | 950 ms | 0.0% | 1.9 s | 1.9 s | 0.0% | 1.9 s | 1.9 s | 0.0% | **missed** (P50 0.0%, P99 0.0%, order differs) |",
		"| edf at 50.0% | 10 | 0.0% | 0.0% | 90.0% | 30.0% | 30.0% | 0.0 pp |",
		"| 80.0% | edf (1.05 s), fifo (1.1 s) | fifo (880 ms), edf (1.05 s) | **no** | **no** |",
		"The simulator ranks the policies as the real runs do at 50.0%, and **differently** at 80.0%.",
		"**The main remaining source of error is contention beyond the profiled factor**",
		"| fifo at 50.0% | 500 ms | 505 ms | +1.0% | +5.0% | 1 s | 1.01 s | +1.0% | +5.0% | 0 |",
		"| edf at 50.0% | 600 ms | 600 ms | 0.0% | 0.0% | 1.2 s | 1.2 s | 0.0% | +50.0% | 2 |",
		"| fifo at 50.0% | 3 | 500 ms, 550 ms, 475 ms | 525 ms | +5.0% | 1 s, 1.1 s, 950 ms | 1.05 s | +5.0% |",
		"Real runs of the same jobs differed by up to 15.8% at P50 and 15.8% at P99 (the largest over the smallest, less one). " +
			"The simulation lies within the real runs' range at P50 in 1 of 1 runs and at P99 in 1 of 1.",
		"| fifo at 50.0% | 500 ms | 520 ms | 525 ms | 600 ms | no | 1 s | 1.04 s | 1.05 s | 1.2 s | no |",
		"Service times 5.0% off move the simulated P50 by up to 14.3% (fifo at 50.0%).",
	} {
		if !strings.Contains(sec.Markdown, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	var names []string
	for _, c := range sec.Charts {
		names = append(names, c.Name)
		if !bytes.HasPrefix(c.SVG, []byte("<?xml")) || !strings.Contains(sec.Markdown, "](charts/"+c.Name+")") {
			t.Errorf("chart %s is not an SVG the section links", c.Name)
		}
	}
	want := []string{"fidelity-cdf-fifo-0-5.svg", "fidelity-cdf-edf-0-5.svg", "fidelity-cdf-fifo-0-8.svg", "fidelity-cdf-edf-0-8.svg", "fidelity-scatter.svg"}
	if !slices.Equal(names, want) {
		t.Errorf("charts %v, want %v", names, want)
	}
	md := (&report.Document{Title: "report", Sections: []report.Section{sec}}).Markdown()
	checkGolden(t, "fidelity-section.md", md, "the section")
}

// TestFidelityAbsent checks that an artifact without real runs leaves the
// section and its rows out, with no error.
func TestFidelityAbsent(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, dir string)
	}{
		{"no real directory", func(t *testing.T, dir string) {}},
		{"no runs", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, schedulespec.RealDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := parquetio.WriteFile(filepath.Join(dir, filepath.FromSlash(schedulespec.RealRunsFile)), []schedulespec.RealRunRow{}, nil); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.write(t, dir)
			fid, err := readFidelity(dir, newFidelityFixture().main)
			if err != nil || fid != nil {
				t.Fatalf("readFidelity = %v, %v; want nil, nil", fid, err)
			}
			sec, err := fidelitySection(&reportData{fidelity: fid})
			if err != nil || sec.Title != "" {
				t.Errorf("section %q (%v) without real runs", sec.Title, err)
			}
			if rows := fidelityRows(fid); len(rows) != 0 {
				t.Errorf("%d rows without real runs", len(rows))
			}
		})
	}
}

// TestReadFidelityErrors damages the fixture's files and checks that the
// error names what is wrong.
func TestReadFidelityErrors(t *testing.T) {
	run := schedulespec.RealRunDir("fifo", 0.5)
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"simulated jobs differ", func(t *testing.T, dir string) {
			trace, _ := traceOf("fifo", scaled(9, 0.1))
			writeRows(t, dir, run+"/sim/trace.parquet", trace)
		}, "read " + run + "/sim/trace.parquet: 9 jobs, and the real run's " + run + "/trace.parquet 10: job 110 ran for real only"},
		{"replayed jobs differ", func(t *testing.T, dir string) {
			trace, _ := traceOf("fifo", scaled(9, 0.1))
			writeRows(t, dir, run+"/replay/trace.parquet", trace)
		}, "read " + run + "/replay/trace.parquet: 9 jobs, and the real run's " + run + "/trace.parquet 10: job 110 ran for real only; a replay runs the real run's jobs"},
		{"no replay devices", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(run+"/replay/devices.parquet"))); err != nil {
				t.Fatal(err)
			}
		}, run + "/replay/devices.parquet"},
		{"run twice", func(t *testing.T, dir string) {
			rows, err := parquetio.ReadAll[schedulespec.RealRunRow](filepath.Join(dir, filepath.FromSlash(schedulespec.RealRunsFile)))
			if err != nil {
				t.Fatal(err)
			}
			writeRows(t, dir, schedulespec.RealRunsFile, append(rows, rows[0]))
		}, "read real/runs.parquet: row 5: fifo at load 0.5 appears twice"},
		{"no load", func(t *testing.T, dir string) {
			writeRows(t, dir, schedulespec.RealRunsFile, []schedulespec.RealRunRow{{Policy: "fifo"}})
		}, "read real/runs.parquet: row 1 (fifo): load = 0, want a positive fraction of capacity"},
		{"no dispatch", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(run+"/dispatch.parquet"))); err != nil {
				t.Fatal(err)
			}
		}, "read dispatch of fifo at load 0.5"},
		{"no real cluster", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, schedulespec.RealDir, schedulespec.ClusterFile)); err != nil {
				t.Fatal(err)
			}
		}, "read real cluster"},
		{"a device the real cluster lacks", func(t *testing.T, dir string) {
			trace, _ := traceOf("fifo", scaled(10, 0.1))
			trace[3].Device = "accel"
			writeRows(t, dir, run+"/trace.parquet", trace)
		}, `device "accel" is not one of the cluster's`},
		{"a sensitivity without its simulations", func(t *testing.T, dir string) {
			rows, err := parquetio.ReadAll[schedulespec.RealRunRow](filepath.Join(dir, filepath.FromSlash(schedulespec.RealRunsFile)))
			if err != nil {
				t.Fatal(err)
			}
			rows[1].Sensitivity = 0.02
			writeRows(t, dir, schedulespec.RealRunsFile, rows)
		}, `read real/runs.parquet: edf at load 0.5: sensitivity 0.02 with faster trace "" and slower trace ""; want a fraction below 1 and both`},
		{"a repeat of other jobs", func(t *testing.T, dir string) {
			trace, _ := traceOf("fifo", scaled(9, 0.1))
			writeRows(t, dir, schedulespec.RealRepeatDir("fifo", 0.5, 2)+"/trace.parquet", trace)
		}, "read " + schedulespec.RealRepeatDir("fifo", 0.5, 2) + "/trace.parquet: 9 jobs, and the first run's " + run + "/trace.parquet 10: job 110 ran for real only; a repeated run runs the first run's jobs"},
		{"a repeat out of order", func(t *testing.T, dir string) {
			rows, err := parquetio.ReadAll[schedulespec.RealRepeatRow](filepath.Join(dir, filepath.FromSlash(schedulespec.RealRepeatsFile)))
			if err != nil {
				t.Fatal(err)
			}
			writeRows(t, dir, schedulespec.RealRepeatsFile, rows[1:])
		}, "read real/repeats.parquet: row 1: fifo at load 0.5: run 3, want run 2"},
		{"a repeat of no run", func(t *testing.T, dir string) {
			writeRows(t, dir, schedulespec.RealRepeatsFile, []schedulespec.RealRepeatRow{{Policy: "sjf", Load: 0.5, Repeat: 2}})
		}, "read real/repeats.parquet: row 1: sjf at load 0.5 was not run first"},
		{"a time that is no number", func(t *testing.T, dir string) {
			d := dispatchOf(scaled(10, 0.1))
			d[2].RunS = math.NaN()
			writeRows(t, dir, run+"/dispatch.parquet", d)
		}, "read " + run + "/dispatch.parquet: row 3 (batch 3): a time is NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFidelityFixture()
			dir := f.write(t)
			tt.damage(t, dir)
			_, err := readFidelity(dir, f.main)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readFidelity = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestFidelityRun runs the stage on the tiny fixture without real runs
// and with two, made of its simulations' traces (fifo's run set against
// edf's simulation and the other way round), and checks the report and
// metrics.parquet.
func TestFidelityRun(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig()
	cfg.Bootstrap.Resamples = 100
	stage := func() (string, []MetricRow) {
		out := t.TempDir()
		if err := Run(context.Background(), cfg, 1, f.in, Output{Dir: out, Provenance: testProvenance}); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, ReportMD))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(md), rows
	}
	md, rows := stage()
	if strings.Contains(md, "## Fidelity") || slices.ContainsFunc(rows, func(r MetricRow) bool { return r.Scope == ScopeFidelity }) {
		t.Error("an artifact without real runs has a fidelity section or rows")
	}

	dir := f.in.Schedule
	cluster, err := parquetio.ReadAll[schedulespec.ClusterRow](filepath.Join(dir, schedulespec.ClusterFile))
	if err != nil {
		t.Fatal(err)
	}
	writeRows(t, dir, schedulespec.RealDir+"/"+schedulespec.ClusterFile, cluster)
	var runs []schedulespec.RealRunRow
	for _, p := range [][2]string{{"fifo", "edf"}, {"edf", "fifo"}} {
		disp := schedulespec.RealRunDir(p[0], 0.5) + "/dispatch.parquet"
		writeRows(t, dir, disp, dispatchOf([]float64{0.01, 0.02}))
		runs = append(runs, schedulespec.RealRunRow{Policy: p[0], Load: 0.5, Jobs: 2000, SpanS: 12,
			Trace: schedulespec.PolicyFile(p[0], schedulespec.TraceFile), Devices: schedulespec.PolicyFile(p[0], schedulespec.DevicesFile), Dispatch: disp,
			SimTrace: schedulespec.PolicyFile(p[1], schedulespec.TraceFile), SimDevices: schedulespec.PolicyFile(p[1], schedulespec.DevicesFile)})
	}
	writeRows(t, dir, schedulespec.RealRunsFile, runs)
	md, rows = stage()
	sweep, fidelity, profile := strings.Index(md, "\n## Load sweep\n"), strings.Index(md, "\n## Fidelity\n"), strings.Index(md, "\n## Profile\n")
	if !(sweep >= 0 && sweep < fidelity && fidelity < profile) {
		t.Errorf("the fidelity section (at %d) is not between the load sweep's (%d) and the profile's (%d)", fidelity, sweep, profile)
	}
	// A run's real figures are its policy's, its simulated ones the
	// other's.
	value := func(scope, policy, metric string) float64 {
		i := slices.IndexFunc(rows, func(r MetricRow) bool { return r.Scope == scope && r.Policy == policy && r.Metric == metric })
		if i < 0 {
			t.Fatalf("no %s row %s of %s", scope, metric, policy)
		}
		return rows[i].Value
	}
	for _, p := range [][2]string{{"fifo", "edf"}, {"edf", "fifo"}} {
		for _, q := range []string{"p50", "p99"} {
			if got, want := value(ScopeFidelity, p[0], "real_"+q+"_e2e_s"), value(ScopePolicy, p[0], q+"_e2e_s"); got != want {
				t.Errorf("%s: real %s %v, want its policy's %v", p[0], q, got, want)
			}
			if got, want := value(ScopeFidelity, p[0], "sim_"+q+"_e2e_s"), value(ScopePolicy, p[1], q+"_e2e_s"); got != want {
				t.Errorf("%s: simulated %s %v, want %s's %v", p[0], q, got, p[1], want)
			}
		}
	}
}

// TestSourcesNameTheQueueing checks that the section says so when the
// sources come to less than half the gap: the rest is queueing.
func TestSourcesNameTheQueueing(t *testing.T) {
	run := func(gap float64, sensitivity bool) *realRun {
		r := &realRun{row: schedulespec.RealRunRow{Policy: "edf", Load: 0.8}}
		r.src = sources{batches: 10, jobs: 10, gap: gap, faults: -1}
		r.src.contrib[srcContention] = 0.001
		if sensitivity {
			r.faster, r.slower = &metrics.Summary{}, &metrics.Summary{}
		}
		return r
	}
	const queueing = "They come to less than half the gap: the rest is queueing"
	tests := []struct {
		name          string
		run           *realRun
		want, sensing bool
	}{
		{"sources explain the gap", run(0.0015, true), false, false},
		{"a gap the sources do not explain", run(0.05, false), true, false},
		{"and a sensitivity to point to", run(-0.05, true), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := (&fidelity{runs: []*realRun{tt.run}}).sourcesText()
			if got := strings.Contains(text, queueing); got != tt.want {
				t.Errorf("names the queueing: %v, want %v:\n%s", got, tt.want, text)
			}
			if got := strings.Contains(text, "(the Sensitivity table)"); got != tt.sensing {
				t.Errorf("points to the Sensitivity table: %v, want %v", got, tt.sensing)
			}
		})
	}
}

// TestDrawsText checks the table of the simulation's own spread: the
// range over the draws takes in the first draw, and a real percentile
// counts as within it only between its ends.
func TestDrawsText(t *testing.T) {
	sum := func(p50, p99 float64) metrics.Summary {
		return metrics.Summary{E2E: metrics.Latency{P50: p50, P99: p99}}
	}
	run := func(policy string, real, sim metrics.Summary, draws ...metrics.Summary) *realRun {
		return &realRun{row: schedulespec.RealRunRow{Policy: policy, Load: 0.8}, real: real, sim: sim, draws: draws}
	}
	f := &fidelity{runs: []*realRun{
		// The first draw is the range's low end; the real P50 lies
		// inside, its P99 above.
		run("fifo", sum(0.11, 2.5), sum(0.10, 2.0), sum(0.12, 2.1), sum(0.11, 2.2)),
		// The real P50 on the range's upper end counts as within.
		run("edf", sum(0.30, 1.0), sum(0.20, 1.1), sum(0.30, 0.9)),
		// No draws: not in the table.
		run("greedy", sum(1, 1), sum(1, 1)),
	}}
	got := f.drawsText()
	for _, want := range []string{
		"| fifo at 80.0% | 3 | 110 ms | 100 ms | 100 ms – 120 ms | yes | 2.5 s | 2 s | 2 s – 2.2 s | no |",
		"| edf at 80.0% | 2 | 300 ms | 200 ms | 200 ms – 300 ms | yes | 1 s | 1.1 s | 900 ms – 1.1 s | yes |",
		"in 2 of 2 runs, the real P99 in 1 of 2; the draws' highest P50 is 50.0% above their lowest in edf at 80.0%.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("drawsText lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "greedy") {
		t.Errorf("drawsText has a run without draws:\n%s", got)
	}
	if (&fidelity{runs: []*realRun{run("fifo", sum(1, 1), sum(1, 1))}}).drawsText() != "" {
		t.Error("drawsText of runs without draws is not empty")
	}
}
