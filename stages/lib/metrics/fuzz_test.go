package metrics

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// seedFile writes rows to a Parquet file and adds its bytes to f's corpus.
func seedFile[T any](f *testing.F, rows []T, opts ...parquet.WriterOption) {
	f.Helper()
	path := filepath.Join(f.TempDir(), "seed.parquet")
	if err := parquetio.WriteFile(path, rows, nil, opts...); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// FuzzReadTrace feeds ReadTrace, evaluate's reader of schedule's traces,
// any bytes, from the hand-made trace written whole and in small pages
// (and the files in testdata/fuzz/FuzzReadTrace). It never panics; its
// errors name the file; and a trace it accepts keeps what its doc
// promises: one row per job, ordered by id, each completed job on a known
// device, each rejected one on none with its SLO missed, and every time
// finite.
func FuzzReadTrace(f *testing.F) {
	seedFile(f, handRows())
	seedFile(f, handRows(), parquet.PageBufferSize(200), parquet.MaxRowsPerRowGroup(7))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "edf", schedulespec.TraceFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ReadTrace(path, handDevices)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		n := tr.Len()
		for _, c := range [][]float64{tr.Arrival, tr.Start, tr.End, tr.Wait, tr.Service, tr.E2E} {
			if len(c) != n {
				t.Fatalf("columns of %d and %d rows", len(c), n)
			}
			for i, v := range c {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("row %d: time %v", i, v)
				}
			}
		}
		if len(tr.Class) != n || len(tr.Device) != n || len(tr.SLOMet) != n || len(tr.Rejected) != n || len(tr.BatchSize) != n {
			t.Fatalf("columns of unequal length for %d rows", n)
		}
		if !slices.IsSorted(tr.JobID) || len(slices.Compact(slices.Clone(tr.JobID))) != n {
			t.Fatalf("job ids not ascending and unique: %v", tr.JobID)
		}
		for i := range n {
			switch {
			case tr.Class[i] != Interactive && tr.Class[i] != Batch:
				t.Fatalf("row %d: class %d", i, tr.Class[i])
			case tr.Rejected[i] && (tr.Device[i] != NoDevice || tr.SLOMet[i]):
				t.Fatalf("row %d: rejected on device %d, SLO met %v", i, tr.Device[i], tr.SLOMet[i])
			case !tr.Rejected[i] && (tr.Device[i] < 0 || int(tr.Device[i]) >= len(handDevices)):
				t.Fatalf("row %d: device %d", i, tr.Device[i])
			}
		}
	})
}

// FuzzJobSamples feeds JobSamples, evaluate's reader of generate's
// workload, any bytes, from a generated eval workload and ids spread too
// far for the dense table (and the files in testdata/fuzz/FuzzJobSamples).
// It never panics, its errors name the file, and what it accepts maps
// every job it counts to a batch of at least one sample.
func FuzzJobSamples(f *testing.F) {
	dir := f.TempDir()
	gen := generate.DefaultConfig()
	gen.Train.Jobs, gen.Eval.Jobs = 1, 40
	if err := generate.Run(context.Background(), gen, 1, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadEval)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	type idBatch struct {
		ID        int64 `parquet:"job_id"`
		BatchSize int32 `parquet:"batch_size"`
	}
	seedFile(f, []idBatch{{1, 3}, {1 << 40, 1}, {-5, 64}})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "jobs-eval.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := JobSamples(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		cf, err := parquetio.OpenColumns(path)
		if err != nil {
			t.Fatalf("JobSamples read a file OpenColumns refuses: %v", err)
		}
		defer cf.Close()
		ids, _ := cf.Column("job_id", parquet.Int64)
		got := make([]int64, s.Len())
		if err := ids.Int64s(got); err != nil {
			t.Fatalf("re-reading the ids JobSamples read: %v", err)
		}
		for _, id := range got {
			if b, ok := s.Of(id); !ok || b < 1 {
				t.Fatalf("job %d: samples %d, %v", id, b, ok)
			}
		}
	})
}
