package schedule

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
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
