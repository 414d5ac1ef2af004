package cluster

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// FuzzReadJobs feeds the jobs reader that schedule and train read
// generate's workloads with (OpenJobs) any bytes, from a generated eval
// workload, the same jobs with every column plain, and the files in
// testdata/fuzz/FuzzReadJobs. Whatever the file holds, the reader never
// panics or runs away, its errors name the file, and every job it yields
// is one the simulator can take: a finite arrival at least 0 and never
// before the previous one, a deadline not before it, a batch of at least
// one sample, and a class, model and precision it knows.
func FuzzReadJobs(f *testing.F) {
	dir := f.TempDir()
	gen := generate.DefaultConfig()
	gen.Train.Jobs, gen.Eval.Jobs = 1, 60
	if err := generate.Run(context.Background(), gen, 1, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadEval))
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	jobs, err := parquetio.ReadAll[generate.Job](path)
	if err != nil {
		f.Fatal(err)
	}
	plain := make([]plainJob, len(jobs))
	for i, j := range jobs {
		plain[i] = plainJob{j.ID, j.ArrivalS, j.Class, j.SLOS, j.Model, j.BatchSize, j.Precision}
	}
	plainPath := filepath.Join(dir, "plain.parquet")
	if err := parquetio.WriteFile(plainPath, plain, nil, parquet.PageBufferSize(300)); err != nil {
		f.Fatal(err)
	}
	if b, err = os.ReadFile(plainPath); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "jobs-eval.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenJobs(path, catalog.Zoo(), 2, 0)
		if err != nil {
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "jobs-eval.parquet") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		defer r.Close()
		prev := math.Inf(-1)
		for n := 0; n < 20_000; n++ { // a few bytes may hold millions of rows
			j, err := r.Next()
			if err != nil {
				if !strings.Contains(err.Error(), "jobs-eval.parquet") {
					t.Fatalf("error %q does not name the file", err)
				}
				return
			}
			if j == nil {
				return
			}
			switch {
			case math.IsNaN(j.Arrival) || math.IsInf(j.Arrival, 0) || j.Arrival < 0 || j.Arrival < prev:
				t.Fatalf("job %d: arrival %v after %v", j.ID, j.Arrival, prev)
			case !(j.Deadline >= j.Arrival):
				t.Fatalf("job %d: deadline %v before arrival %v", j.ID, j.Deadline, j.Arrival)
			case j.Batch < 1:
				t.Fatalf("job %d: batch %d", j.ID, j.Batch)
			case j.Class != sim.Interactive && j.Class != sim.Batch:
				t.Fatalf("job %d: class %d", j.ID, j.Class)
			case j.Model < 0 || int(j.Model) >= catalog.Zoo().Len() || j.Precision < 0 || j.Precision >= numPrecisions:
				t.Fatalf("job %d: model %d, precision %d", j.ID, j.Model, j.Precision)
			}
			prev = j.Arrival
			r.Recycle(j)
		}
	})
}
