package metrics

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// benchJobs is the size of the benchmarks' workload.
const benchJobs = 1_000_000

var benchDevices = []string{"cpu0", "cpu1", "gpu0", "gpu1"}

// synthTrace makes a plausible trace of n jobs with ids from 1<<40, the
// same jobs for every seed: a fifth interactive, one in a thousand
// rejected, SLOs of 0.5 s and 5 s. seed draws the exponential waits and
// services, which speed divides.
func synthTrace(n int, seed uint64, policy string, speed float64) *Trace {
	jobs := rand.New(rand.NewPCG(7, 7))
	r := rand.New(rand.NewPCG(seed, 99))
	t := &Trace{Policy: policy, Devices: benchDevices}
	for i := range n {
		cls := uint8(Batch)
		slo := 5.0
		if jobs.Float64() < 0.2 {
			cls, slo = Interactive, 0.5
		}
		arrival := float64(i) * 0.001
		rejected := jobs.IntN(1000) == 0
		wait, service := r.ExpFloat64()*0.2/speed, r.ExpFloat64()*0.1/speed
		dev, batch := int16(r.IntN(len(benchDevices))), int32(1+r.IntN(64))
		if rejected {
			wait, service, dev, batch = 0, 0, NoDevice, 0
		}
		t.JobID = append(t.JobID, 1<<40+int64(i))
		t.Class = append(t.Class, cls)
		t.Arrival = append(t.Arrival, arrival)
		t.Start = append(t.Start, arrival+wait)
		t.End = append(t.End, arrival+wait+service)
		t.Wait = append(t.Wait, wait)
		t.Service = append(t.Service, service)
		t.E2E = append(t.E2E, wait+service)
		t.SLOMet = append(t.SLOMet, !rejected && wait+service <= slo)
		t.Rejected = append(t.Rejected, rejected)
		t.Device = append(t.Device, dev)
		t.BatchSize = append(t.BatchSize, batch)
	}
	return t
}

// traceRows turns a trace back into the rows a schedule stage writes, in
// completion order.
func traceRows(t *Trace) []schedulespec.TraceRow {
	rows := make([]schedulespec.TraceRow, t.Len())
	for i := range rows {
		dev := ""
		if d := t.Device[i]; d >= 0 {
			dev = t.Devices[d]
		}
		rows[i] = schedulespec.TraceRow{
			JobID: t.JobID[i], Policy: t.Policy, Device: dev, Class: classNames[t.Class[i]],
			BatchSize: t.BatchSize[i], ArrivalS: t.Arrival[i], StartS: t.Start[i], EndS: t.End[i],
			WaitS: t.Wait[i], ServiceS: t.Service[i], E2ES: t.E2E[i], SLOMet: t.SLOMet[i], Rejected: t.Rejected[i],
		}
	}
	return rows
}

func BenchmarkReadTrace(b *testing.B) {
	t := synthTrace(benchJobs, 1, "fifo", 1)
	rows := traceRows(t)
	// Completion order, as a schedule stage writes it.
	slices.SortStableFunc(rows, func(a, b schedulespec.TraceRow) int { return cmp.Compare(a.EndS, b.EndS) })
	path := filepath.Join(b.TempDir(), "trace.parquet")
	if err := parquetio.WriteFile(path, rows, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadTrace(path, benchDevices); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchJobs)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkSummarize(b *testing.B) {
	t := synthTrace(benchJobs, 1, "fifo", 1)
	busy := make([]float64, len(benchDevices))
	cl := Cluster{Devices: benchDevices, Lanes: []int32{2, 2, 1, 1}}
	for b.Loop() {
		s := Summarize(t, busy, cl, Bounds{MakespanLBS: 900, MeanLatencyLBS: 0.1}, nil)
		if math.IsNaN(s.E2E.P99) {
			b.Fatal("no P99")
		}
	}
}

// BenchmarkEvaluate is the evaluate stage's summaries at the scale it was
// sized for: ten policies of 200k jobs, each summarized.
func BenchmarkEvaluate(b *testing.B) {
	const n, policies = 200_000, 10
	traces := make([]*Trace, policies)
	for p := range traces {
		traces[p] = synthTrace(n, uint64(p)+1, fmt.Sprint("policy", p), 1+float64(p)/20)
	}
	busy := make([]float64, len(benchDevices))
	cl := Cluster{Devices: benchDevices, Lanes: []int32{2, 2, 1, 1}}
	for b.Loop() {
		for _, t := range traces {
			Summarize(t, busy, cl, Bounds{MakespanLBS: 190, MeanLatencyLBS: 0.1}, nil)
		}
	}
}
