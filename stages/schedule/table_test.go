package schedule

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// TestTablesWriteParquetGoBytes: the trace and devices files the recorder
// writes through parquetio/columnar are, byte for byte, what parquet-go's
// GenericWriter writes from the same rows with the same options and
// metadata, in Write calls of rowBuffer rows as the stage used to make
// them, for policies that batch, split, migrate, place at random and
// reject.
func TestTablesWriteParquetGoBytes(t *testing.T) {
	cfg, cl, jobsPath := rejectingFixture(t)
	meta := map[string]string{parquetio.KeyStage: "schedule", parquetio.KeyVersion: "0123456789abcdef"}
	for _, spec := range rejectingPolicies {
		t.Run(spec, func(t *testing.T) {
			u := Unit{Spec: spec, Replication: 1, Load: cfg.Load, Predictor: cfg.Predictor}
			dir := filepath.Join(t.TempDir(), spec)
			if err := runUnit(context.Background(), u, cfg, cl, 7, jobsPath, 3000, filesIn(dir, meta), &progress{}, nil); err != nil {
				t.Fatal(err)
			}
			sameBytes[TraceRow](t, filepath.Join(dir, TraceFile), meta, traceWriterOptions)
			sameBytes[BatchRow](t, filepath.Join(dir, DevicesFile), meta, batchWriterOptions)
		})
	}
}

// sameBytes reads path's rows and has parquet-go write them again.
func sameBytes[T any](t *testing.T, path string, meta map[string]string, opts []parquet.WriterOption) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[T](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", path)
	}
	var want bytes.Buffer
	w := parquet.NewGenericWriter[T](&want, parquetio.WriterOptions(meta, opts...)...)
	for i := 0; i < len(rows); i += rowBuffer {
		if _, err := w.Write(rows[i:min(i+rowBuffer, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s: %d bytes, parquet-go writes %d from its %d rows", filepath.Base(path), len(got), want.Len(), len(rows))
	}
}

// TestRecorderSetsEveryField: the recorder fills its rows field by field,
// over the row a previous Write left in the buffer. Every field of
// TraceRow and BatchRow must be set, for a job run and a job rejected, so
// that none carries a value over: the rows here start with every field
// set to something else, and must come out as the rows written whole.
func TestRecorderSetsEveryField(t *testing.T) {
	_, cl, _ := rejectingFixture(t)
	r, err := newRecorder(t.TempDir(), "edf", cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.abort()
	job := &sim.Job{ID: 42, Arrival: 1.5, Deadline: 2, Class: sim.Batch}
	ran := &sim.Record{Job: job, Device: 1, Lane: 0, BatchID: 7, BatchSize: 4, Start: 1.75, End: 2.5, Migrated: true, SplitParts: 2}
	rejected := &sim.Record{Job: job, Device: -1, Lane: -1, Start: 1.5, End: 1.5, Reason: "too big"}
	dev := cl.Device(1)
	for _, tt := range []struct {
		rec  *sim.Record
		want TraceRow
	}{
		{ran, TraceRow{JobID: 42, Policy: "edf", Device: dev.Name, DeviceKind: dev.Kind, Lane: 0, BatchID: 7, BatchSize: 4,
			Class: cluster.ClassName(sim.Batch), ArrivalS: 1.5, StartS: 1.75, EndS: 2.5, WaitS: 0.25, ServiceS: 0.75, E2ES: 1,
			SLOMet: false, Migrated: true, SplitParts: 2}},
		{rejected, TraceRow{JobID: 42, Policy: "edf", Lane: -1, Class: cluster.ClassName(sim.Batch), ArrivalS: 1.5, StartS: 1.5, EndS: 1.5,
			Rejected: true, Reason: "too big"}},
	} {
		poison(t, r.trace.next())
		if err := r.record(tt.rec); err != nil {
			t.Fatal(err)
		}
		if got := r.trace.buf[r.trace.n-1]; got != tt.want {
			t.Errorf("record(%+v):\n got %+v\nwant %+v", *tt.rec, got, tt.want)
		}
	}
	poison(t, r.batches.next())
	b := &sim.BatchRecord{Device: 1, Lane: 0, BatchID: 7, Jobs: 2, Samples: 4, Memory: 12.5, Start: 1.75, End: 2.5}
	if err := r.batch(b); err != nil {
		t.Fatal(err)
	}
	want := BatchRow{Device: dev.Name, DeviceKind: dev.Kind, Lane: 0, BatchID: 7, Jobs: 2, Samples: 4, MemoryMiB: 12.5, StartS: 1.75, EndS: 2.5}
	if got := r.batches.buf[r.batches.n-1]; got != want {
		t.Errorf("batch(%+v):\n got %+v\nwant %+v", *b, got, want)
	}
}

// poison sets every field of the struct *p to a value no recorder writes.
func poison[T any](t *testing.T, p *T) {
	t.Helper()
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("poison")
		case reflect.Int32, reflect.Int64:
			f.SetInt(-99)
		case reflect.Float64:
			f.SetFloat(-99)
		case reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("poison: field %s is a %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}
