package evaluate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestFidelityRun runs the stage on the tiny fixture without real runs
// and with two, made of its simulations' traces (fifo's run set against
// edf's simulation and the other way round), and checks the report and
// metrics.parquet.
func TestFidelityRun(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig()
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
	if strings.Contains(md, "## Fidelity") || slices.ContainsFunc(rows, func(r MetricRow) bool { return r.Scope == section.ScopeFidelity }) {
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
			if got, want := value(section.ScopeFidelity, p[0], "real_"+q+"_e2e_s"), value(section.ScopePolicy, p[0], q+"_e2e_s"); got != want {
				t.Errorf("%s: real %s %v, want its policy's %v", p[0], q, got, want)
			}
			if got, want := value(section.ScopeFidelity, p[0], "sim_"+q+"_e2e_s"), value(section.ScopePolicy, p[1], q+"_e2e_s"); got != want {
				t.Errorf("%s: simulated %s %v, want %s's %v", p[0], q, got, p[1], want)
			}
		}
	}
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

// dispatchOf gives each job of a real run its batch, as the fidelity
// package's fixture does: 1 ms of dispatch overhead, 100 µs of notice
// lag; even jobs run alone on lane 0, 1.1 times the profile's mean, and
// odd jobs in pairs, one on each lane from the same moment, twice the
// mean; the first batch faults 7 pages in.
func dispatchOf(e2e []float64) []schedulespec.DispatchRow {
	var out []schedulespec.DispatchRow
	for i, e := range e2e {
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
