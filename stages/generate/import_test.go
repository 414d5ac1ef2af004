package generate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	parquetgo "github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// importedRow is an import with every column, as a Parquet writer of the
// user's might lay it out: required columns, strings annotated.
type importedRow struct {
	ArrivalS  float64 `parquet:"arrival_s"`
	Model     string  `parquet:"model,dict"`
	BatchSize int32   `parquet:"batch_size"`
	Class     string  `parquet:"class,dict"`
	Precision string  `parquet:"precision,dict"`
	SLOS      float64 `parquet:"slo_s"`
}

// importRows keeps the import's columns of jobs.
func importRows(jobs []Job) []importedRow {
	out := make([]importedRow, len(jobs))
	for i, j := range jobs {
		out[i] = importedRow{j.ArrivalS, j.Model, j.BatchSize, j.Class, j.Precision, j.SLOS}
	}
	return out
}

// importCSV writes jobs' import columns as CSV, numbers written so that
// they read back exactly.
func importCSV(t *testing.T, path string, jobs []Job) {
	t.Helper()
	var b strings.Builder
	b.WriteString("arrival_s,model,batch_size,class,precision,slo_s\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s\n", strconv.FormatFloat(j.ArrivalS, 'g', -1, 64), j.Model, j.BatchSize, j.Class, j.Precision,
			strconv.FormatFloat(j.SLOS, 'g', -1, 64))
	}
	writeFile(t, path, b.String())
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportMatchesSynthetic exports a synthetic eval workload's import
// columns as CSV and as Parquet, imports each, and checks that the jobs
// file is byte for byte the synthetic one: the catalog's figures, the
// deadlines and the ids are joined in exactly as generation computes them,
// so everything downstream sees the same input.
func TestImportMatchesSynthetic(t *testing.T) {
	cfg := smallConfig(2_000, 30_000)
	synth := run(t, cfg, 5)
	jobs := readJobs(t, synth, WorkloadEval)
	want := digests(t, synth)[JobsFile(WorkloadEval)]

	dir := t.TempDir()
	csvPath, pqPath := filepath.Join(dir, "jobs.CSV"), filepath.Join(dir, "jobs.parquet")
	importCSV(t, csvPath, jobs)
	if err := parquetio.WriteFile(pqPath, importRows(jobs), nil); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{csvPath, pqPath} {
		c := cfg
		c.Eval.Import = path
		c.Eval.Jobs = 1 // ignored with an import
		got := run(t, c, 5)
		if d := digests(t, got); d[JobsFile(WorkloadEval)] != want {
			t.Errorf("importing %s: jobs-eval.parquet differs from the synthetic file it was exported from", filepath.Base(path))
		}
		if d := digests(t, got); d[JobsFile(WorkloadTrain)] != digests(t, synth)[JobsFile(WorkloadTrain)] {
			t.Errorf("importing %s: the synthetic train workload changed", filepath.Base(path))
		}
	}
}

// TestImportDefaults reads a CSV with only the required columns, a
// byte-order mark, spaces and capitals in its header: precision defaults
// to fp32 and the SLO to the class's.
func TestImportDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.csv")
	writeFile(t, path, "\uFEFF Arrival_S , model,BATCH_SIZE,class\n0,mlp,1,interactive\n0.5, resnet50 ,32,batch\n0.5,vit,8,interactive\n")
	cfg := smallConfig(10, 10)
	cfg.Train.Import = path
	dir := run(t, cfg, 1)
	jobs := readJobs(t, dir, WorkloadTrain)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(jobs))
	}
	for i, want := range []struct {
		arrival float64
		model   string
		batch   int32
		class   string
		slo     float64
	}{{0, "mlp", 1, ClassInteractive, 0.1}, {0.5, "resnet50", 32, ClassBatch, 1}, {0.5, "vit", 8, ClassInteractive, 0.1}} {
		j := jobs[i]
		if j.ID != int64(i) || j.ArrivalS != want.arrival || j.Model != want.model || j.BatchSize != want.batch ||
			j.Class != want.class || j.SLOS != want.slo || j.Precision != PrecisionFP32 || j.DeadlineS != want.arrival+want.slo {
			t.Errorf("job %d = %+v, want %+v in fp32", i, j, want)
		}
		checkDerived(t, cfg, j)
	}
	if e := readJobs(t, dir, WorkloadEval); len(e) != 10 || e[0].ID != MaxJobs {
		t.Errorf("the synthetic eval workload: %d jobs from id %d", len(e), e[0].ID)
	}
}

// importError runs generate with path imported as the eval workload and
// returns the error, which must name the key and the file.
func importError(t *testing.T, path string) error {
	t.Helper()
	cfg := smallConfig(10, 10)
	cfg.Eval.Import = path
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), cfg, 1, catalog.Zoo(), Output{Dir: t.TempDir()}) }()
	select {
	case err := <-done:
		if err != nil && !strings.Contains(err.Error(), "generate.eval.import") {
			t.Errorf("error %q does not name the key", err)
		}
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("importing %s: no answer after 30 s", path)
		return nil
	}
}

func TestImportCSVErrors(t *testing.T) {
	const header = "arrival_s,model,batch_size,class\n"
	tests := []struct{ name, csv, want string }{
		{"empty", "", "empty file, want a header row"},
		{"no rows", header, "no rows"},
		{"missing column", "arrival_s,model,batch_size\n0,mlp,1\n", `header row: lacks column "class"; the columns are arrival_s, model, batch_size, class (required); precision, slo_s (optional)`},
		{"misspelt optional column", "arrival_s,model,batch_size,class,slo\n0,mlp,1,batch,1\n", `header row: unknown column "slo"`},
		{"derived column", "arrival_s,model,batch_size,class,memory_mib\n0,mlp,1,batch,1\n", `header row: column "memory_mib" is derived`},
		{"column twice", "arrival_s,model,batch_size,class,model\n0,mlp,1,batch,mlp\n", `header row: column "model" appears twice`},
		{"unnamed column", "arrival_s,,model,batch_size,class\n", "header row: column 2 has no name"},
		{"unknown model", header + "0,mlp,1,batch\n1,gpt-4,1,batch\n", `row 2, column model: unknown model "gpt-4"; the catalog has mlp, resnet18, resnet50, vit`},
		{"unknown class", header + "0,mlp,1,urgent\n", `row 1, column class: want interactive or batch, got "urgent"`},
		{"unknown precision", "arrival_s,model,batch_size,class,precision\n0,mlp,1,batch,int8\n", `row 1, column precision: want fp32 or fp16, got "int8"`},
		{"fractional batch", header + "0,mlp,4.7,batch\n", `row 1, column batch_size: want a whole number of samples, got "4.7"`},
		{"batch 0", header + "0,mlp,0,batch\n", "row 1, column batch_size: want a whole number of samples in [1, 65536], got 0"},
		{"huge batch", header + "0,mlp,10000000000,batch\n", "row 1, column batch_size: want a whole number of samples in [1, 65536], got 10000000000"},
		{"negative arrival", header + "-1,mlp,1,batch\n", "row 1, column arrival_s: want a number of seconds since the workload's start, in [0, 1e+09], got -1"},
		{"NaN arrival", header + "NaN,mlp,1,batch\n", "row 1, column arrival_s: want a number of seconds since the workload's start, in [0, 1e+09], got NaN"},
		{"Unix time", header + "1.7e9,mlp,1,batch\n", "row 1, column arrival_s: want a number of seconds since the workload's start, in [0, 1e+09], got 1.7e+09"},
		{"arrival not a number", header + "soon,mlp,1,batch\n", `row 1, column arrival_s: want a number of seconds, got "soon"`},
		{"out of order", header + "0,mlp,1,batch\n2,mlp,1,batch\n1,mlp,1,batch\n", "row 3, column arrival_s: 1 is before the previous row's 2; the rows must be in arrival order (sort the file by arrival_s)"},
		{"zero SLO", "arrival_s,model,batch_size,class,slo_s\n0,mlp,1,batch,0\n", "row 1, column slo_s: want a number of seconds in [1e-06, 604800], got 0"},
		{"SLO 1e300", "arrival_s,model,batch_size,class,slo_s\n0,mlp,1,batch,1e300\n", "row 1, column slo_s: want a number of seconds in [1e-06, 604800], got 1e+300"},
		{"empty cell", "arrival_s,model,batch_size,class,precision\n0,mlp,1,batch,\n", "row 1, column precision: empty; leave the column out to take its default"},
		{"short row", header + "0,mlp,1,batch\n1,mlp,1\n", "row 2 (line 3): has 3 fields, the header 4"},
		{"bad quote", header + "0,\"mlp,1,batch\n", "row 1 (line 2): extraneous or missing \" in quoted-field"},
		{"no line break", strings.Repeat("x", 1<<20), "the header row is longer than 64 KiB; is this a CSV file?"},
		{"long row", header + "0,mlp,1," + strings.Repeat("b", 1<<20) + "\n", "row 1 is longer than 64 KiB"},
		{"binary", "\x00\x01\x02PAR1\xff\xfe", `header row: unknown column "\x00\x01\x02par1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.csv")
			writeFile(t, path, tt.csv)
			err := importError(t, path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want it to name %s and say %q", err, path, tt.want)
			}
		})
	}
}

// TestImportParquetTypes imports Parquet files whose columns have the
// wrong physical or logical type, or nulls: each is refused naming the
// column, the type found and the type wanted, or the row of the null;
// nothing is converted.
func TestImportParquetTypes(t *testing.T) {
	type base struct {
		ArrivalS  float64 `parquet:"arrival_s"`
		Model     string  `parquet:"model"`
		BatchSize int32   `parquet:"batch_size"`
		Class     string  `parquet:"class"`
	}
	b := base{0, "mlp", 4, "batch"}
	tests := []struct {
		name string
		rows any
		want string // "" accepts
	}{
		{"plain", []base{b}, ""},
		{"int64 batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize int64   `parquet:"batch_size"`
			Class     string  `parquet:"class,enum"`
		}{{0, "mlp", 4, "batch"}}, ""},
		{"unsigned batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize uint16  `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", 4, "batch"}}, ""},
		{"optional without nulls", []struct {
			ArrivalS  *float64 `parquet:"arrival_s,optional"`
			Model     *string  `parquet:"model,optional"`
			BatchSize *int64   `parquet:"batch_size,optional"`
			Class     *string  `parquet:"class,optional"`
		}{{ptr(0.0), ptr("mlp"), ptr(int64(4)), ptr("batch")}}, ""},
		{"boolean latency-like batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize bool    `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", true, "batch"}}, "column batch_size: type BOOLEAN, want INT32 or INT64, plain or with an integer annotation"},
		{"fractional batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize float64 `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", 4.7, "batch"}}, "column batch_size: type DOUBLE, want INT32 or INT64"},
		{"huge batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize int64   `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", 1e10, "batch"}}, "row 1, column batch_size: want a whole number of samples in [1, 65536], got 10000000000"},
		{"huge unsigned batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize uint64  `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", 1 << 63, "batch"}}, "row 1, column batch_size: want a whole number of samples in [1, 65536], got 9223372036854775808"},
		{"float32 arrival", []struct {
			ArrivalS  float32 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize int32   `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", 4, "batch"}}, "column arrival_s: type FLOAT, want DOUBLE, with no annotation (seconds)"},
		{"timestamp arrival", []struct {
			ArrivalS  time.Time `parquet:"arrival_s,timestamp(microsecond)"`
			Model     string    `parquet:"model"`
			BatchSize int32     `parquet:"batch_size"`
			Class     string    `parquet:"class"`
		}{{time.Unix(1, 0), "mlp", 4, "batch"}}, "column arrival_s: type INT64 TIMESTAMP"},
		{"unannotated bytes", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     []byte  `parquet:"model"`
			BatchSize int32   `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, []byte("mlp"), 4, "batch"}}, "column model: type BYTE_ARRAY, want BYTE_ARRAY annotated STRING or ENUM"},
		{"list", []struct {
			ArrivalS  []float64 `parquet:"arrival_s,list"`
			Model     string    `parquet:"model"`
			BatchSize int32     `parquet:"batch_size"`
			Class     string    `parquet:"class"`
		}{{[]float64{0}, "mlp", 4, "batch"}}, "column arrival_s: a group of columns"},
		{"repeated", []struct {
			ArrivalS  float64  `parquet:"arrival_s"`
			Model     []string `parquet:"model"`
			BatchSize int32    `parquet:"batch_size"`
			Class     string   `parquet:"class"`
		}{{0, []string{"mlp"}, 4, "batch"}}, "column model: repeated (a list)"},
		{"group", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize int32   `parquet:"batch_size"`
			Class     struct {
				Name string `parquet:"name"`
			} `parquet:"class"`
		}{{ArrivalS: 0, Model: "mlp", BatchSize: 4}}, "column class: a group of columns"},
		{"null batch", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize *int32  `parquet:"batch_size,optional"`
			Class     string  `parquet:"class"`
		}{{0, "mlp", ptr(int32(1)), "batch"}, {1, "mlp", nil, "batch"}}, "row 2, column batch_size: null; every row needs a value"},
		{"null model", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     *string `parquet:"model,optional"`
			BatchSize int32   `parquet:"batch_size"`
			Class     string  `parquet:"class"`
		}{{0, nil, 1, "batch"}}, "row 1, column model: null"},
		{"unknown model", []base{b, {1, "bert", 1, "batch"}}, `row 2, column model: unknown model "bert"; the catalog has mlp, resnet18, resnet50, vit`},
		{"out of order", []base{{2, "mlp", 1, "batch"}, {1, "mlp", 1, "batch"}}, "row 2, column arrival_s: 1 is before the previous row's 2"},
		{"no rows", []base{}, "no rows"},
		{"unknown column", []struct {
			ArrivalS  float64 `parquet:"arrival_s"`
			Model     string  `parquet:"model"`
			BatchSize int32   `parquet:"batch_size"`
			Class     string  `parquet:"class"`
			User      string  `parquet:"user"`
		}{{0, "mlp", 4, "batch", "me"}}, `unknown column "user"`},
		{"missing column", []struct {
			ArrivalS float64 `parquet:"arrival_s"`
			Model    string  `parquet:"model"`
			Class    string  `parquet:"class"`
		}{{0, "mlp", "batch"}}, `lacks column "batch_size"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.parquet")
			if err := writeAny(path, tt.rows); err != nil {
				t.Fatal(err)
			}
			err := importError(t, path)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("import: %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path)):
				t.Errorf("import: %v, want an error naming %s and saying %q", err, path, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// writeAny writes a slice of rows of any struct type, as parquet-go maps
// its fields.
func writeAny(path string, rows any) error {
	v := reflect.ValueOf(rows)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := parquetgo.NewWriter(f, parquetgo.SchemaOf(reflect.New(v.Type().Elem()).Elem().Interface()))
	for i := range v.Len() {
		if err := w.Write(v.Index(i).Interface()); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// TestImportArrow imports a file as Arrow (and pyarrow, pandas and
// polars) writes one: every column nullable, names dictionary-encoded,
// integers int64; then the same with a null.
func TestImportArrow(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "arrival_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "model", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "batch_size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "class", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "precision", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "slo_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	write := func(path string, nullAt int) {
		const n = 3000
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer bld.Release()
		for i := range n {
			bld.Field(0).(*array.Float64Builder).Append(float64(i) / 100)
			if err := bld.Field(1).(*array.BinaryDictionaryBuilder).AppendString([]string{"mlp", "resnet18"}[i%2]); err != nil {
				t.Fatal(err)
			}
			if i == nullAt {
				bld.Field(2).AppendNull()
			} else {
				bld.Field(2).(*array.Int64Builder).Append(int64(1 + i%8))
			}
			bld.Field(3).(*array.LargeStringBuilder).Append(ClassInteractive)
			bld.Field(4).(*array.StringBuilder).Append(PrecisionFP16)
			bld.Field(5).(*array.Float64Builder).Append(0.25)
		}
		rec := bld.NewRecord()
		defer rec.Release()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithDataPageSize(4096))
		w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "arrow.parquet")
	write(good, -1)
	cfg := smallConfig(10, 10)
	cfg.Eval.Import = good
	jobs := readJobs(t, run(t, cfg, 1), WorkloadEval)
	if len(jobs) != 3000 || jobs[2999].ArrivalS != 29.99 || jobs[1].Model != "resnet18" || jobs[7].BatchSize != 8 ||
		jobs[0].Precision != PrecisionFP16 || jobs[0].SLOS != 0.25 || jobs[0].Class != ClassInteractive {
		t.Errorf("an Arrow file imports as %d jobs: %+v, %+v", len(jobs), jobs[0], jobs[len(jobs)-1])
	}
	bad := filepath.Join(dir, "null.parquet")
	write(bad, 2345)
	if err := importError(t, bad); err == nil || !strings.Contains(err.Error(), "row 2346, column batch_size: null") {
		t.Errorf("an Arrow file with a null batch size: %v", err)
	}
}

// TestImportSpecialFiles gives paths that are not regular files: each is
// refused at once, before anything opens it (a named pipe blocked the
// reader forever, /dev/zero never ends).
func TestImportSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "d.parquet")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{zero, "a symlink to /dev/zero, a character device, not a regular file"},
		{sub, "a directory, not a regular file"},
		{filepath.Join(dir, "absent.csv"), "no such file"},
		{filepath.Join(dir, "trace.json"), `want a .csv or .parquet file, got`},
	} {
		err := importError(t, tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("import %s: %v, want %q", tt.path, err, tt.want)
		}
	}
}
