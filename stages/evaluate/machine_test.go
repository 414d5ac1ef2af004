package evaluate

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// observation is one machine.parquet row on a 2-core machine: what the
// profile measured, for how long, the load, the others' and the stolen
// shares and the reference timing in milliseconds.
func observation(during string, seconds, load, others, steal, refMS float64) profilespec.MachineRow {
	return profilespec.MachineRow{During: during, IntervalS: seconds, Cores: 2, Load1: load, Load5: load, Load15: load,
		OthersCPU: others, SelfCPU: 0.5, Steal: steal, ReferenceS: refMS * ms}
}

// quietMachine is a quiet profile's observations: every figure well
// inside its threshold, a product too short for its shares.
func quietMachine() []profilespec.MachineRow {
	rows := []profilespec.MachineRow{
		observation(profilespec.DuringBefore, 1, 0.2, 0.01, 0, 1.0),
		observation("mlp fp32 threads 1", 2, 0.5, 0.02, 0, 1.02),
		observation("resnet18 fp32 threads 1", 5, 1.1, 0.03, 0.001, 1.05),
		observation("matmul 256", 0.05, 1.1, math.NaN(), math.NaN(), 0.99),
	}
	var at float64
	for i := range rows {
		at += rows[i].IntervalS
		rows[i].Seq, rows[i].ElapsedS = int32(i), at
	}
	return rows
}

// TestMachineThresholds checks when the report calls the profiled
// machine busy, and that it names the figures that say so.
func TestMachineThresholds(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		edit func(rows []profilespec.MachineRow) []profilespec.MachineRow
		// want are phrases of the warning; none for a quiet machine,
		// whose line then holds quiet.
		want, quiet []string
	}{
		{"quiet", nil, nil, []string{"The machine was quiet while the profile measured: other processes used 2.7% of the 2 cores (at most 3.0% in any second)",
			"0.1% was stolen", "the load average was 0.2 before it started", "the reference timing varied 1.06×"}},
		{"others over the profile", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[1].OthersCPU, r[2].OthersCPU = 0.3, 0.52
			return r
		}, []string{"**The profile was measured on a busy machine.** Other processes used 45.7% of the 2 cores while it measured (52.0% during resnet18 fp32 threads 1).",
			"every simulated result inherits them", "`mlsched run --force profile`"}, nil},
		{"others in one stretch", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[1].OthersCPU = 0.25
			return r
		}, []string{"Other processes used 25.0% of the 2 cores during mlp fp32 threads 1 (9.3% over the whole profile)."}, nil},
		{"others in the second before", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[0].OthersCPU = 0.5
			return r
		}, []string{"Other processes used 50.0% of the 2 cores in the second before it started (2.7% over the whole profile)."}, nil},
		// Under a second, a burst is a tick or two: not judged alone.
		{"a burst under a second", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[3].OthersCPU, r[3].IntervalS = 0.9, 0.5
			return r
		}, nil, []string{"other processes used 8.5% of the 2 cores (at most 3.0% in any second)"}},
		{"steal", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[2].Steal = 0.05
			return r
		}, []string{"A hypervisor stole 3.6% of the cores' time while it measured."}, nil},
		{"steal in one stretch", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[1].Steal = 0.04
			return r
		}, []string{"A hypervisor stole 4.0% of the cores' time during mlp fp32 threads 1."}, nil},
		// The others' share is the sound measure: where it reads quiet, a
		// high load average (a build just before, the profile's own
		// sessions) or a slow reference timing is not a busy machine.
		{"load before above half the cores, others quiet", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[0].Load1 = 10.2
			return r
		}, nil, []string{"the load average was 10.2 before it started"}},
		{"load before above half the cores, no shares", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			for i := range r {
				r[i].OthersCPU, r[i].Steal = nan, nan
			}
			r[0].Load1 = 10.2
			return r
		}, []string{"The load average was 10.2 on the 2 cores before it started."}, nil},
		{"load before at half the cores", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[0].Load1 = 1
			return r
		}, nil, []string{"the load average was 1 before it started"}},
		// The load during the profile counts the profile's own sessions.
		{"load during the profile", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[2].Load1 = 3
			return r
		}, nil, []string{"the load average was 0.2 before it started"}},
		// One observation in four is a quarter of them.
		{"a slow reference timing of four, others quiet", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[2].ReferenceS = 1.9 * ms
			return r
		}, nil, []string{"the reference timing varied 1.92× (over 1.25× its fastest at 1 of 4 observations)."}},
		{"a slow reference timing of four, no shares", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			for i := range r {
				r[i].OthersCPU, r[i].Steal = nan, nan
			}
			r[2].ReferenceS = 1.9 * ms
			return r
		}, []string{"The reference timing took over 1.25× its fastest (990 µs) at 1 of 4 observations, up to 1.92×."}, nil},
		// One in six is a moment's neighbour, not a busy machine.
		{"a slow reference timing of six", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[2].ReferenceS = 1.9 * ms
			return append(r, observation("matmul 512", 0.5, 1.1, 0.02, 0, 1.01), observation("contention round 2", 2, 1.1, 0.02, 0, 1.0))
		}, nil, []string{"the reference timing varied 1.92× (over 1.25× its fastest at 1 of 6 observations)."}},
		{"everything at once, in order", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			r[0].Load1, r[2].OthersCPU, r[2].Steal, r[2].ReferenceS = 10.2, 0.8, 0.05, 2*ms
			return r
		}, []string{"**The profile was measured on a busy machine.** Other processes used 57.7% of the 2 cores while it measured (80.0% during resnet18 fp32 threads 1). " +
			"A hypervisor stole 3.6% of the cores' time while it measured. Its timings are a busy machine's, and every simulated result inherits them: " +
			"run the profile again on a quiet machine (`mlsched run --force profile`)."}, nil},
		{"no /proc", func(r []profilespec.MachineRow) []profilespec.MachineRow {
			for i := range r {
				r[i].Load1, r[i].OthersCPU, r[i].Steal = nan, nan, nan
			}
			return r
		}, nil, []string{"The machine was quiet while the profile measured: the reference timing varied 1.06× (this machine's load and CPU shares could not be read)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := quietMachine()
			if tt.edit != nil {
				rows = tt.edit(rows)
			}
			m := machineLoadOf(rows)
			md := m.markdown()
			if got := m.warning(); (got == "") != (len(tt.want) == 0) {
				t.Fatalf("warning = %q, want one: %v", got, len(tt.want) > 0)
			}
			for _, w := range tt.want {
				if !strings.Contains(m.warning(), w) || !strings.Contains(md, w) {
					t.Errorf("warning and section lack %q:\n%s", w, md)
				}
			}
			for _, w := range tt.quiet {
				if !strings.Contains(md, w) {
					t.Errorf("section lacks %q:\n%s", w, md)
				}
			}
			if !strings.Contains(md, "The report warns past 10.0% of the cores used by others (over the profile, or in any second of it) or 2.0% stolen; where those shares cannot be read, past a load average of 1 before the profile (0.5 a core) or a reference timing over 1.25× its fastest at 20.0% of the observations or more") {
				t.Errorf("section lacks the thresholds:\n%s", md)
			}
			busy := slices.IndexFunc(m.metricRows(), func(r MetricRow) bool { return r.Metric == "busy" })
			if busy < 0 || m.metricRows()[busy].Value != map[bool]float64{true: 1, false: 0}[len(tt.want) > 0] {
				t.Errorf("metric rows %+v: busy wrong", m.metricRows())
			}
		})
	}
}

// TestBusyMachineOpensTheReport runs the stage on a profile measured on
// a busy machine, one measured on a quiet one and one that did not
// record it: the busy one's warning opens the report and the Profile
// section, with every observation tabulated, and metrics.parquet has its
// figures; the others have no warning.
func TestBusyMachineOpensTheReport(t *testing.T) {
	f := newFixture(t)
	busy := quietMachine()
	busy[0].Load1 = 10.2
	busy[1].OthersCPU, busy[2].OthersCPU = 0.4, 0.5
	for _, tt := range []struct {
		name    string
		rows    []profilespec.MachineRow
		profile string // what the Profile section says of the machine
		busy    float64
	}{
		{"busy", busy, "**The profile was measured on a busy machine.** Other processes used 47.1% of the 2 cores", 1},
		{"quiet", quietMachine(), "The machine was quiet while the profile measured: other processes used 2.7% of the 2 cores", 0},
		{"not recorded", nil, "This profile does not say how busy the machine was while it measured", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := f
			in.in.Machine = filepath.Join(t.TempDir(), profilespec.MachineFile)
			if tt.rows != nil {
				if err := parquetio.WriteFile(in.in.Machine, tt.rows, nil); err != nil {
					t.Fatal(err)
				}
			}
			out := run(t, in, testConfig())
			b, err := os.ReadFile(filepath.Join(out, ReportMD))
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			top := md[strings.Index(md, "# mlsched evaluation\n\n")+len("# mlsched evaluation\n\n"):]
			opens := strings.HasPrefix(top, "**The profile was measured on a busy machine.** Other processes used 47.1% of the 2 cores while it measured (50.0% during resnet18 fp32 threads 1). Its timings")
			if opens != (tt.busy == 1) {
				t.Errorf("the report opens with the warning: %v, want %v:\n%.400s", opens, tt.busy == 1, top)
			}
			profile := md[strings.Index(md, "## Profile\n\n")+len("## Profile\n\n"):]
			if !strings.HasPrefix(profile, tt.profile) {
				t.Errorf("the Profile section opens\n%.300s\nwant %q", profile, tt.profile)
			}
			if table := strings.Contains(profile, "| nothing (the idle second before) | 1 s | 10.2 | 1.0% | 0.0% | 1 ms |"); table != (tt.busy == 1) {
				t.Errorf("the observations are tabulated: %v, want %v", table, tt.busy == 1)
			}
			rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, r := range rows {
				if r.Scope == section.ScopeMachine {
					got[r.Metric] = r.Value
				}
			}
			if tt.busy < 0 {
				if len(got) != 0 {
					t.Errorf("machine rows %v, want none", got)
				}
				return
			}
			if got["busy"] != tt.busy || got["cores"] != 2 || got["load1_before"] != tt.rows[0].Load1 || math.Abs(got["reference_spread"]-1.05/0.99) > 1e-9 {
				t.Errorf("machine rows %v", got)
			}
		})
	}
}
