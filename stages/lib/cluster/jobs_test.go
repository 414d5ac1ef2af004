package cluster

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// plainJob is generate.Job without its encodings: every column plain.
type plainJob struct {
	ID        int64   `parquet:"job_id"`
	ArrivalS  float64 `parquet:"arrival_s"`
	Class     string  `parquet:"class"`
	SLOS      float64 `parquet:"slo_s"`
	Model     string  `parquet:"model"`
	BatchSize int32   `parquet:"batch_size"`
	Precision string  `parquet:"precision"`
}

// readJobs streams every job of a file through a JobReader.
func readJobs(t *testing.T, path string, load float64) ([]sim.Job, error) {
	t.Helper()
	r, err := OpenJobs(path, catalog.Zoo(), load, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []sim.Job
	for {
		j, err := r.Next()
		if err != nil || j == nil {
			return out, err
		}
		out = append(out, *j)
		r.Recycle(j)
	}
}

// TestJobReader checks the streaming reader against parquet-go's row
// reader on generate's file and on copies with other encodings and many
// small pages, so chunks straddle pages and dictionaries.
func TestJobReader(t *testing.T) {
	cfg := generate.DefaultConfig()
	cfg.Train.Jobs, cfg.Eval.Jobs = 1, 30_000
	src := generateJobs(t, cfg, 4)
	rows, err := parquetio.ReadAll[generate.Job](src)
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]plainJob, len(rows))
	for i, j := range rows {
		plain[i] = plainJob{j.ID, j.ArrivalS, j.Class, j.SLOS, j.Model, j.BatchSize, j.Precision}
	}
	dir := t.TempDir()
	plainPath, smallPages := filepath.Join(dir, "plain.parquet"), filepath.Join(dir, "small-pages.parquet")
	if err := parquetio.WriteFile(plainPath, plain, nil); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(smallPages, rows, nil, parquet.PageBufferSize(1000), parquet.MaxRowsPerRowGroup(7000)); err != nil {
		t.Fatal(err)
	}
	const load = 1.5
	for _, path := range []string{src, plainPath, smallPages} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got, err := readJobs(t, path, load)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rows) {
				t.Fatalf("read %d jobs, want %d", len(got), len(rows))
			}
			for i, w := range rows {
				g := got[i]
				if g.ID != w.ID || g.Arrival != w.ArrivalS/load || g.Deadline != w.ArrivalS/load+w.SLOS || classNames[g.Class] != w.Class ||
					catalog.Zoo().Names()[g.Model] != w.Model || precisionNames[g.Precision] != w.Precision || g.Batch != w.BatchSize {
					t.Fatalf("row %d: read %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestJobReaderErrors(t *testing.T) {
	good := plainJob{ID: 1, ArrivalS: 1, Class: "interactive", SLOS: 0.1, Model: "mlp", BatchSize: 1, Precision: "fp32"}
	with := func(f func(*plainJob)) []plainJob {
		bad := good
		bad.ID, bad.ArrivalS = 2, 2
		f(&bad)
		return []plainJob{good, bad}
	}
	tests := []struct {
		name string
		rows []plainJob
		want string
	}{
		{"out of order", with(func(j *plainJob) { j.ArrivalS = 0.5 }), "row 2 (job 2): arrival_s 0.5 is before the previous row's 1"},
		{"negative arrival", with(func(j *plainJob) { j.ArrivalS = -1 }), "row 2 (job 2): arrival_s must be a finite time at least 0, got -1"},
		{"infinite arrival", with(func(j *plainJob) { j.ArrivalS = math.Inf(1) }), "row 2 (job 2): arrival_s must be a finite time"},
		{"unknown model", with(func(j *plainJob) { j.Model = "gpt" }), `row 2 (job 2): model "gpt" is not one of [mlp resnet18 resnet50 vit]`},
		{"unknown class", with(func(j *plainJob) { j.Class = "bulk" }), `row 2 (job 2): class "bulk" is not one of [interactive batch]`},
		{"unknown precision", with(func(j *plainJob) { j.Precision = "int8" }), `row 2 (job 2): precision "int8" is not one of [fp32 fp16]`},
		{"empty batch", with(func(j *plainJob) { j.BatchSize = 0 }), "row 2 (job 2): batch_size must be at least 1, got 0"},
		{"negative slo", with(func(j *plainJob) { j.SLOS = -1 }), "row 2 (job 2): slo_s must be a finite number of seconds at least 0, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs-eval.parquet")
			if err := parquetio.WriteFile(path, tt.rows, nil); err != nil {
				t.Fatal(err)
			}
			_, err := readJobs(t, path, 1)
			if err == nil || !strings.Contains(err.Error(), "read jobs-eval.parquet: "+tt.want) {
				t.Errorf("read = %v, want an error containing %q", err, tt.want)
			}
		})
	}

	type noBatch struct {
		ID        int64   `parquet:"job_id"`
		ArrivalS  float64 `parquet:"arrival_s"`
		Class     string  `parquet:"class"`
		SLOS      float64 `parquet:"slo_s"`
		Model     string  `parquet:"model"`
		Precision string  `parquet:"precision"`
	}
	type floatBatch struct {
		ID        int64   `parquet:"job_id"`
		ArrivalS  float64 `parquet:"arrival_s"`
		Class     string  `parquet:"class"`
		SLOS      float64 `parquet:"slo_s"`
		Model     string  `parquet:"model"`
		BatchSize float64 `parquet:"batch_size"`
		Precision string  `parquet:"precision"`
	}
	dir := t.TempDir()
	missing, wrongType := filepath.Join(dir, "missing.parquet"), filepath.Join(dir, "wrong.parquet")
	if err := parquetio.WriteFile(missing, []noBatch{{ID: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(wrongType, []floatBatch{{ID: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		missing:   "read missing.parquet: no column batch_size",
		wrongType: "read wrong.parquet: column batch_size: want a required INT32 column",
	} {
		if _, err := OpenJobs(path, catalog.Zoo(), 1, 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenJobs(%s) = %v, want an error containing %q", filepath.Base(path), err, want)
		}
	}
}
