package fidelity

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

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
			if o, text := fid.verdict(i); (o == met) != tt.met || o == notHeld || o == notJudged {
				t.Errorf("verdict %v (%s), want met %v", o, text, tt.met)
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
		rows := metricRows(fid)
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
			{"fifo", 0.5, "band_lo_p50_e2e_s", 0.525}, {"fifo", 0.5, "band_hi_p50_e2e_s", 0.525}, {"fifo", 0.5, "in_band_p50_e2e", 0},
			{"edf", 0.8, "in_band_mean_e2e", 1},
		} {
			i := slices.IndexFunc(rows, func(r section.MetricRow) bool {
				return r.Scope == section.ScopeFidelity && r.Policy == w.policy && r.Load == w.load && r.Metric == w.metric
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
		run  int
		o    outcome
		text string
	}{
		{0, met, "met (P50 +5.0%, P99 +5.0%, same order)"},
		{1, notHeld, "not held to it"},
		{2, met, "met (P50 +9.0%, P99 +9.0%, nothing to rank)"},
	}
	for _, tt := range tests {
		if o, text := fid.verdict(tt.run); o != tt.o || text != tt.text {
			t.Errorf("verdict(%s) = %v, %q; want %v, %q", fid.runs[tt.run].name(), o, text, tt.o, tt.text)
		}
	}
	if want := "Of the 2 runs held to it: met in 2 (fifo at 50.0% and edf at 80.0%)."; !strings.Contains(fid.targetText(), want) {
		t.Errorf("target text %q lacks %q", fid.targetText(), want)
	}
	rows := metricRows(fid)
	if slices.ContainsFunc(rows, func(r section.MetricRow) bool { return r.Policy == "edf+migrate" && r.Metric == "target_met" }) {
		t.Error("edf+migrate, which the target does not name, has a target_met row")
	}
	if slices.ContainsFunc(rows, func(r section.MetricRow) bool { return r.Load == 0.8 && r.Metric == "same_order" }) {
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
			fid, err := readRuns(dir, newFidelityFixture().main)
			if err != nil || fid != nil {
				t.Fatalf("readRuns = %v, %v; want nil, nil", fid, err)
			}
			sec, err := render(fid)
			if err != nil || sec.Title != "" {
				t.Errorf("section %q (%v) without real runs", sec.Title, err)
			}
			if rows := metricRows(fid); len(rows) != 0 {
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
			_, err := readRuns(dir, f.main)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readRuns = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
