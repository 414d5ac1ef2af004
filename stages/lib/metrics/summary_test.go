package metrics

import (
	"cmp"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// The hand-made workload: jobs k = 1..20 (ids 100+k) complete, arriving at
// k, waiting k-1 and served for 1 s, so their end-to-end latency is k and
// they end at 2k; jobs 1-5 are interactive (SLO 2 s: jobs 1 and 2 meet
// it), 6-20 batch (SLO 10 s: jobs 6-10 meet it). Job 121 (interactive,
// arriving at 3) and job 122 (batch, at 7) are rejected. Job k has k
// samples of its own; the rejected ones 50.
var handDevices = []string{"a", "b"}

func handRows() []schedulespec.TraceRow {
	var rows []schedulespec.TraceRow
	for k := 1; k <= 20; k++ {
		class, slo := generatespec.ClassBatch, 10.0
		if k <= 5 {
			class, slo = generatespec.ClassInteractive, 2
		}
		a := float64(k)
		rows = append(rows, schedulespec.TraceRow{
			JobID: 100 + int64(k), Policy: "hand", Device: handDevices[k%2], DeviceKind: "declared", Lane: 0,
			BatchID: int64(k), BatchSize: int32(k), Class: class,
			ArrivalS: a, StartS: a + a - 1, EndS: 2 * a, WaitS: a - 1, ServiceS: 1, E2ES: a,
			SLOMet: a <= slo, SplitParts: 1,
		})
	}
	for _, r := range []struct {
		id      int64
		class   string
		arrival float64
	}{{121, generatespec.ClassInteractive, 3}, {122, generatespec.ClassBatch, 7}} {
		rows = append(rows, schedulespec.TraceRow{
			JobID: r.id, Policy: "hand", Lane: -1, Class: r.class,
			ArrivalS: r.arrival, StartS: r.arrival, EndS: r.arrival, Rejected: true, Reason: "fits nowhere",
		})
	}
	// Completion order, rejected jobs at their arrival.
	slices.SortStableFunc(rows, func(x, y schedulespec.TraceRow) int { return cmp.Compare(x.EndS, y.EndS) })
	return rows
}

// handFiles writes the hand-made schedule outputs and the workload's jobs
// and returns the directory. Device a (2 lanes) is busy 25 + 15 = 40
// lane-seconds, b (1 lane) 10.
func handFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	jobs := []generate.Job{}
	for k := 1; k <= 20; k++ {
		jobs = append(jobs, generate.Job{ID: 100 + int64(k), BatchSize: int32(k)})
	}
	jobs = append(jobs, generate.Job{ID: 121, BatchSize: 50}, generate.Job{ID: 122, BatchSize: 50})
	write(t, filepath.Join(dir, "jobs-eval.parquet"), jobs)
	write(t, filepath.Join(dir, schedulespec.ClusterFile), []schedulespec.ClusterRow{
		{Device: "a", Kind: "declared", Lanes: 2, Speed: 1, ContentionFactors: []float64{1, 1}},
		{Device: "b", Kind: "declared", Lanes: 1, Speed: 1, ContentionFactors: []float64{1}},
	})
	write(t, filepath.Join(dir, schedulespec.BoundsFile), []schedulespec.BoundsRow{{Replication: 1, Jobs: 22, UnfitJobs: 2, MakespanLBS: 32, MeanLatencyLBS: 8.4}})
	write(t, filepath.Join(dir, schedulespec.PolicyFile("hand", schedulespec.TraceFile)), handRows())
	write(t, filepath.Join(dir, schedulespec.PolicyFile("hand", schedulespec.DevicesFile)), []schedulespec.BatchRow{
		{Device: "a", Lane: 0, BatchID: 1, Jobs: 1, Samples: 1, StartS: 0, EndS: 25},
		{Device: "a", Lane: 1, BatchID: 2, Jobs: 1, Samples: 2, StartS: 5, EndS: 20},
		{Device: "b", Lane: 0, BatchID: 3, Jobs: 1, Samples: 3, StartS: 30, EndS: 40},
	})
	return dir
}

// write writes rows to path, making its directory.
func write[T any](t testing.TB, path string, rows []T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(path, rows, nil); err != nil {
		t.Fatal(err)
	}
}

// handSummary reads the hand-made files and summarizes them.
func handSummary(t *testing.T) (Summary, *Trace) {
	t.Helper()
	dir := handFiles(t)
	cl, err := ReadCluster(filepath.Join(dir, schedulespec.ClusterFile))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ReadBounds(filepath.Join(dir, schedulespec.BoundsFile))
	if err != nil {
		t.Fatal(err)
	}
	b := bs[0]
	tr, err := ReadTrace(filepath.Join(dir, schedulespec.PolicyFile("hand", schedulespec.TraceFile)), cl.Devices)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := ReadBusy(filepath.Join(dir, schedulespec.PolicyFile("hand", schedulespec.DevicesFile)), cl.Devices)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := JobSamples(filepath.Join(dir, "jobs-eval.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return Summarize(tr, busy, cl, b, samples), tr
}

func TestSummarizeByHand(t *testing.T) {
	s, _ := handSummary(t)
	if len(s.Classes) != 2 || len(s.Devices) != 2 {
		t.Fatalf("Summarize gave %d classes and %d devices, want 2 and 2: %+v", len(s.Classes), len(s.Devices), s)
	}
	in, ba := s.Classes[0], s.Classes[1]
	tests := []struct {
		name      string
		got, want float64
	}{
		{"jobs", float64(s.Jobs), 22},
		{"rejected", float64(s.Rejected), 2},
		// e2e 1..20: mean 10.5; ranks ⌈10⌉, ⌈19⌉, ⌈19.8⌉ = 10, 19, 20.
		{"e2e mean", s.E2E.Mean, 10.5},
		{"e2e p50", s.E2E.P50, 10},
		{"e2e p95", s.E2E.P95, 19},
		{"e2e p99", s.E2E.P99, 20},
		{"e2e max", s.E2E.Max, 20},
		// waits 0..19.
		{"wait mean", s.Wait.Mean, 9.5},
		{"wait p50", s.Wait.P50, 9},
		{"wait p95", s.Wait.P95, 18},
		{"wait p99", s.Wait.P99, 19},
		{"wait max", s.Wait.Max, 19},
		{"service mean", s.Service.Mean, 1},
		{"service p99", s.Service.P99, 1},
		// Interactive: 6 jobs, e2e 1..5 (ranks ⌈2.5⌉ = 3, ⌈4.75⌉ = 5),
		// 2 met their SLO.
		{"interactive jobs", float64(in.Jobs), 6},
		{"interactive e2e mean", in.E2E.Mean, 3},
		{"interactive e2e p50", in.E2E.P50, 3},
		{"interactive e2e p95", in.E2E.P95, 5},
		{"interactive wait mean", in.Wait.Mean, 2},
		{"interactive slo violation", in.SLOViolation, 4.0 / 6},
		{"interactive goodput", in.Goodput, 2.0 / 40},
		// Batch: 16 jobs, e2e 6..20 (15 values: rank ⌈7.5⌉ = 8, the 13),
		// 5 met their SLO.
		{"batch jobs", float64(ba.Jobs), 16},
		{"batch e2e mean", ba.E2E.Mean, 13},
		{"batch e2e p50", ba.E2E.P50, 13},
		{"batch e2e p95", ba.E2E.P95, 20},
		{"batch wait mean", ba.Wait.Mean, 12},
		{"batch slo violation", ba.SLOViolation, 11.0 / 16},
		{"batch goodput", ba.Goodput, 5.0 / 40},
		// 7 of 22 met their SLO; the last job ends at 40.
		{"slo violation", s.SLOViolation, 15.0 / 22},
		{"makespan", s.Makespan, 40},
		{"goodput", s.Goodput, 7.0 / 40},
		{"throughput", s.Throughput, 20.0 / 40},
		{"samples/s", s.SampleThroughput, 210.0 / 40}, // 1+2+...+20
		{"busy a", s.Devices[0].BusyLaneS, 40},
		{"utilization a", s.Devices[0].Utilization, 40.0 / (2 * 40)},
		{"busy b", s.Devices[1].BusyLaneS, 10},
		{"utilization b", s.Devices[1].Utilization, 10.0 / (1 * 40)},
		// (0.5 + 0.25)² / (2 · (0.25 + 0.0625))
		{"jain", s.Jain, 0.9},
		{"fairness", s.Fairness, 12.0 / 2},
		{"makespan gap", s.MakespanGap, 40.0/32 - 1},
		{"latency gap", s.LatencyGap, 10.5/8.4 - 1},
		// The P99 of a resample of 20 is its largest: P(max <= 16) =
		// 0.8^20 = 1.2% and P(max <= 17) = 0.85^20 = 3.9% put the 2.5th
		// percentile at 17.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if math.Abs(tt.got-tt.want) > 1e-12 {
				t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
	if s.Policy != "hand" || in.Class != generatespec.ClassInteractive || ba.Class != generatespec.ClassBatch ||
		s.Devices[0].Device != "a" || s.Devices[1].Device != "b" {
		t.Errorf("names: policy %q, classes %q %q, devices %q %q", s.Policy, in.Class, ba.Class, s.Devices[0].Device, s.Devices[1].Device)
	}
}

// TestSummarizeEdges checks the documented values where a metric is
// undefined or degenerate.
func TestSummarizeEdges(t *testing.T) {
	nan := math.NaN()
	job := func(id int64, class uint8, e2e float64, rejected bool) func(*Trace) {
		return func(t *Trace) {
			dev, met := int16(0), !rejected
			if rejected {
				dev, e2e = NoDevice, 0
			}
			t.JobID = append(t.JobID, id)
			t.Class = append(t.Class, class)
			for _, s := range []*[]float64{&t.Arrival, &t.Start, &t.Wait, &t.Service} {
				*s = append(*s, 0)
			}
			t.End = append(t.End, e2e)
			t.E2E = append(t.E2E, e2e)
			t.SLOMet = append(t.SLOMet, met)
			t.Rejected = append(t.Rejected, rejected)
			t.Device = append(t.Device, dev)
			t.BatchSize = append(t.BatchSize, 1)
		}
	}
	tests := []struct {
		name  string
		jobs  []func(*Trace)
		busy  []float64
		check func(Summary) []float64 // got, want pairs
	}{
		{"no jobs", nil, []float64{0, 0}, func(s Summary) []float64 {
			return []float64{s.Makespan, 0, s.Throughput, 0, s.SLOViolation, nan, s.E2E.Mean, nan, s.E2E.P99, nan,
				s.Jain, 1, s.Fairness, nan, s.MakespanGap, -1, s.LatencyGap, nan, float64(len(s.Classes)), 0}
		}},
		{"all rejected", []func(*Trace){job(1, Interactive, 0, true), job(2, Batch, 0, true)}, []float64{0, 0}, func(s Summary) []float64 {
			return []float64{s.Makespan, 0, s.Goodput, 0, s.SLOViolation, 1, s.Wait.Mean, nan, s.Fairness, nan, float64(len(s.Classes)), 2,
				s.Classes[0].SLOViolation, 1, s.Classes[0].E2E.Max, nan}
		}},
		{"batch only", []func(*Trace){job(1, Batch, 2, false), job(2, Batch, 4, false)}, []float64{6, 0}, func(s Summary) []float64 {
			// Utilizations 6/(2·4) = 0.75 and 0: Jain 0.75²/(2·0.75²) = 0.5.
			return []float64{s.Makespan, 4, s.Devices[0].Utilization, 0.75, s.Jain, 0.5, s.Fairness, nan, float64(len(s.Classes)), 1,
				s.E2E.P50, 2, s.E2E.P99, 4}
		}},
		{"interactive never waits", []func(*Trace){job(1, Interactive, 1, false), job(2, Batch, 1, false)}, []float64{1, 1}, func(s Summary) []float64 {
			// Utilizations 1/(2·1) and 1/(1·1): Jain 1.5²/(2·1.25) = 0.9.
			return []float64{s.Fairness, nan, s.Jain, 0.9}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trace{Policy: "p", Devices: []string{"x", "y"}}
			for _, j := range tt.jobs {
				j(tr)
			}
			s := Summarize(tr, tt.busy, Cluster{Devices: tr.Devices, Lanes: []int32{2, 1}}, Bounds{MakespanLBS: 10}, nil)
			c := tt.check(s)
			for i := 0; i < len(c); i += 2 {
				if got, want := c[i], c[i+1]; !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("value %d = %v, want %v (summary %+v)", i/2, got, want, s)
				}
			}
		})
	}
}

func TestSummarizeMismatchPanics(t *testing.T) {
	tr := &Trace{Policy: "p", Devices: []string{"x"}}
	defer func() {
		if recover() == nil {
			t.Error("Summarize with busy times for 2 devices of a 1-device trace did not panic")
		}
	}()
	Summarize(tr, []float64{1, 2}, Cluster{Devices: []string{"x"}, Lanes: []int32{1}}, Bounds{}, nil)
}
