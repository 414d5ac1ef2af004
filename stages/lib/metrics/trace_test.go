package metrics

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestReadTrace checks that a trace read back orders its rows by job id
// and keeps every field, on the hand-made trace and on a larger one
// written in many small pages and row groups with ids that do not fit the
// slot placement.
func TestReadTrace(t *testing.T) {
	big := synthTrace(20_000, 5, "big", 1)
	for i := range big.JobID {
		big.JobID[i] = int64(i) * 7 // spread: sorted, not slotted
	}
	tests := []struct {
		name string
		rows []schedulespec.TraceRow
		opts []parquet.WriterOption
	}{
		{"hand", handRows(), nil},
		{"big", reversed(traceRows(big)), []parquet.WriterOption{parquet.PageBufferSize(2000), parquet.MaxRowsPerRowGroup(3000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.name, schedulespec.TraceFile)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := parquetio.WriteFile(path, tt.rows, nil, tt.opts...); err != nil {
				t.Fatal(err)
			}
			devices := handDevices
			if tt.name == "big" {
				devices = benchDevices
			}
			tr, err := ReadTrace(path, devices)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(tt.rows)
			slices.SortFunc(want, func(a, b schedulespec.TraceRow) int { return int(a.JobID - b.JobID) })
			if tr.Len() != len(want) || tr.Policy != want[0].Policy {
				t.Fatalf("read %d rows of policy %q, want %d of %q", tr.Len(), tr.Policy, len(want), want[0].Policy)
			}
			got := traceRows(tr)
			for i, w := range want {
				w.DeviceKind, w.Lane, w.BatchID, w.SplitParts, w.Reason = "", 0, 0, 0, "" // not read
				if got[i] != w {
					t.Fatalf("row %d: read %+v, want %+v", i, got[i], w)
				}
			}
		})
	}
}

func reversed[T any](s []T) []T {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// TestReadTraceEmpty checks that an empty trace names its directory's
// policy.
func TestReadTraceEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo", schedulespec.TraceFile)
	write(t, path, []schedulespec.TraceRow{})
	tr, err := ReadTrace(path, handDevices)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 0 || tr.Policy != "fifo" {
		t.Errorf("ReadTrace = %d rows of policy %q, want 0 of fifo", tr.Len(), tr.Policy)
	}
}

// Traces with a column missing or of another type, or one that may hold
// nulls.
type (
	noE2E struct {
		JobID     int64   `parquet:"job_id"`
		Policy    string  `parquet:"policy"`
		Device    string  `parquet:"device"`
		BatchSize int32   `parquet:"batch_size"`
		Class     string  `parquet:"class"`
		ArrivalS  float64 `parquet:"arrival_s"`
		StartS    float64 `parquet:"start_s"`
		EndS      float64 `parquet:"end_s"`
		WaitS     float64 `parquet:"wait_s"`
		ServiceS  float64 `parquet:"service_s"`
		SLOMet    bool    `parquet:"slo_met"`
		Rejected  bool    `parquet:"rejected"`
	}
	intE2E struct {
		noE2E
		E2ES int64 `parquet:"e2e_s"`
	}
	nullableE2E struct {
		noE2E
		E2ES *float64 `parquet:"e2e_s,optional"`
	}
)

func TestReadTraceErrors(t *testing.T) {
	with := func(f func(*schedulespec.TraceRow)) []schedulespec.TraceRow {
		rows := handRows()
		f(&rows[len(rows)-1]) // row 22, job 120
		return rows
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	write(t, good, handRows())
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated, garbled := filepath.Join(dir, "truncated.parquet"), filepath.Join(dir, "garbled.parquet")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(data)
	for i := 4; i < len(bad)/2; i++ {
		bad[i] ^= 0x5a
	}
	if err := os.WriteFile(garbled, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	noCol := []noE2E{{JobID: 1, Policy: "p", Class: "batch", Rejected: true}}
	tests := []struct {
		name    string
		rows    any // a slice to write, or a path written already
		devices []string
		want    string
	}{
		{"missing column", noCol, handDevices, "no column e2e_s"},
		{"wrong type", []intE2E{{noE2E: noCol[0]}}, handDevices, "column e2e_s: want a required DOUBLE column, got"},
		{"nullable column", []nullableE2E{{noE2E: noCol[0]}}, handDevices, "column e2e_s: want a required DOUBLE column"},
		{"unknown device", with(func(r *schedulespec.TraceRow) { r.Device = "gpu9" }), handDevices, `row 22 (job 120): device "gpu9" is not one of the cluster's ["a" "b"]`},
		{"device left out", handRows(), []string{"a"}, `device "b" is not one of the cluster's ["a"]`},
		{"unknown class", with(func(r *schedulespec.TraceRow) { r.Class = "bulk" }), handDevices, `row 22 (job 120): class "bulk" is not one of [interactive batch]`},
		{"duplicate job", with(func(r *schedulespec.TraceRow) { r.JobID = 101 }), handDevices, "rows 1 and 22 are both job 101"},
		{"rejected on a device", with(func(r *schedulespec.TraceRow) { r.Rejected = true }), handDevices, `row 22 (job 120): rejected, but ran on device "a"`},
		{"rejected in time", with(func(r *schedulespec.TraceRow) { r.Rejected, r.Device, r.SLOMet = true, "", true }), handDevices, "row 22 (job 120): rejected, but met its SLO"},
		{"completed nowhere", with(func(r *schedulespec.TraceRow) { r.Device = "" }), handDevices, "row 22 (job 120): not rejected, but has no device"},
		{"not finite", with(func(r *schedulespec.TraceRow) { r.E2ES = math.Inf(1) }), handDevices, "row 22 (job 120): e2e_s is +Inf; times must be finite"},
		{"two policies", with(func(r *schedulespec.TraceRow) { r.Policy = "other" }), handDevices, `row 22 (job 120): policy "other", but earlier rows are of "hand"`},
		{"devices named twice", handRows(), []string{"a", "b", "a"}, `the cluster names device "a" twice`},
		{"truncated", truncated, handDevices, "truncated.parquet"},
		{"garbled", garbled, handDevices, "garbled.parquet"},
		{"no file", filepath.Join(dir, "none.parquet"), handDevices, "none.parquet: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, ok := tt.rows.(string)
			if !ok {
				path = filepath.Join(t.TempDir(), "trace.parquet")
				var err error
				switch rows := tt.rows.(type) {
				case []schedulespec.TraceRow:
					err = parquetio.WriteFile(path, rows, nil)
				case []noE2E:
					err = parquetio.WriteFile(path, rows, nil)
				case []intE2E:
					err = parquetio.WriteFile(path, rows, nil)
				case []nullableE2E:
					err = parquetio.WriteFile(path, rows, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadTrace(path, tt.devices)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("ReadTrace = %v, want an error naming %s and containing %q", err, path, tt.want)
			}
		})
	}
}

func TestReadInputs(t *testing.T) {
	dir := handFiles(t)
	cl, err := ReadCluster(filepath.Join(dir, schedulespec.ClusterFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cl.Devices, handDevices) || !slices.Equal(cl.Lanes, []int32{2, 1}) {
		t.Errorf("ReadCluster = %+v, want devices %q with 2 and 1 lanes", cl, handDevices)
	}
	b, err := ReadBounds(filepath.Join(dir, schedulespec.BoundsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1 || b[0] != (Bounds{MakespanLBS: 32, MeanLatencyLBS: 8.4}) {
		t.Errorf("ReadBounds = %+v, want one replication's, 32 and 8.4", b)
	}
	busy, err := ReadBusy(filepath.Join(dir, schedulespec.PolicyFile("hand", schedulespec.DevicesFile)), []string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(busy, []float64{10, 40}) {
		t.Errorf("ReadBusy in the order b, a = %v, want [10 40]", busy)
	}

	// Consecutive ids make a slice, spread ones a map: both look up alike.
	for _, step := range []int64{1, 1000} {
		path := filepath.Join(t.TempDir(), "jobs-eval.parquet")
		write(t, path, []generate.Job{{ID: 5 * step, BatchSize: 3}, {ID: 1 * step, BatchSize: 1}, {ID: 3 * step, BatchSize: 2}})
		s, err := JobSamples(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id   int64
			want int32
			ok   bool
		}{{1 * step, 1, true}, {3 * step, 2, true}, {5 * step, 3, true}, {2 * step, 0, false}, {6 * step, 0, false}, {-step, 0, false}} {
			if got, ok := s.Of(c.id); got != c.want || ok != c.ok {
				t.Errorf("ids by %d: Of(%d) = %d, %v; want %d, %v", step, c.id, got, ok, c.want, c.ok)
			}
		}
		if s.Len() != 3 {
			t.Errorf("ids by %d: Len = %d, want 3", step, s.Len())
		}
	}
}

func TestReadInputErrors(t *testing.T) {
	type oneBound struct {
		MakespanLBS float64 `parquet:"makespan_lb_s"`
	}
	tests := []struct {
		name  string
		write func(path string) error
		read  func(path string) error
		want  string
	}{
		{"cluster device twice", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.ClusterRow{{Device: "a", Lanes: 1}, {Device: "a", Lanes: 1}}, nil)
		}, readCluster, `row 2: device "a" appears twice`},
		{"cluster no lanes", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.ClusterRow{{Device: "a", Lanes: 0}}, nil)
		}, readCluster, `row 1: device "a" has 0 lanes`},
		{"bounds no rows", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.BoundsRow{}, nil)
		}, readBounds, "0 rows, want one per replication"},
		{"bounds replications out of order", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.BoundsRow{{Replication: 1}, {Replication: 3}}, nil)
		}, readBounds, "row 2: replication 3; want the replications in order from 1"},
		{"bounds column", func(p string) error {
			return parquetio.WriteFile(p, []oneBound{{1}}, nil)
		}, readBounds, "no column mean_latency_lb_s"},
		{"bounds negative", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.BoundsRow{{Replication: 1, MakespanLBS: -1}}, nil)
		}, readBounds, "row 1: makespan_lb_s is -1"},
		{"busy device", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.BatchRow{{Device: "a", EndS: 1}, {Device: "c", EndS: 1}}, nil)
		}, readBusy, `row 2: device "c" is not one of the cluster's ["a" "b"]`},
		{"busy backwards", func(p string) error {
			return parquetio.WriteFile(p, []schedulespec.BatchRow{{Device: "a", StartS: 2, EndS: 1}}, nil)
		}, readBusy, "row 1: a batch from start_s 2 to end_s 1"},
		{"samples twice", func(p string) error {
			return parquetio.WriteFile(p, []generate.Job{{ID: 7, BatchSize: 1}, {ID: 8, BatchSize: 1}, {ID: 7, BatchSize: 2}}, nil)
		}, readSamples, "rows 1 and 3 are both job 7"},
		{"samples twice, spread", func(p string) error {
			return parquetio.WriteFile(p, []generate.Job{{ID: 7, BatchSize: 1}, {ID: 8e6, BatchSize: 1}, {ID: 8e6, BatchSize: 2}}, nil)
		}, readSamples, "rows 2 and 3 are both job 8000000"},
		{"samples empty batch", func(p string) error {
			return parquetio.WriteFile(p, []generate.Job{{ID: 7, BatchSize: 0}}, nil)
		}, readSamples, "row 1 (job 7): batch_size must be at least 1, got 0"},
		{"samples not parquet", func(p string) error {
			return os.WriteFile(p, []byte("job_id,batch_size\n1,1\n"), 0o644)
		}, readSamples, "x.parquet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.parquet")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			err := tt.read(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("read = %v, want an error naming %s and containing %q", err, path, tt.want)
			}
		})
	}
}

func readCluster(p string) error { _, err := ReadCluster(p); return err }
func readBounds(p string) error  { _, err := ReadBounds(p); return err }
func readBusy(p string) error    { _, err := ReadBusy(p, handDevices); return err }
func readSamples(p string) error { _, err := JobSamples(p); return err }

// TestReadCorruptPages flips bytes inside the column data of a trace, one
// place at a time: every read must fail cleanly or succeed, never panic.
func TestReadCorruptPages(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	write(t, good, traceRows(synthTrace(3000, 1, "p", 1)))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for at := 4; at < len(data)-8; at += len(data) / 97 {
		bad := slices.Clone(data)
		for i := at; i < min(at+16, len(bad)-8); i++ {
			bad[i] ^= 0xff
		}
		path := filepath.Join(dir, "bad.parquet")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadTrace(path, benchDevices) // must not panic
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("bytes at %d flipped: error %v does not name the file", at, err)
		}
		if errors.Is(err, parquetio.ErrCorrupt) && !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("bytes at %d flipped: %v", at, err)
		}
	}
}
