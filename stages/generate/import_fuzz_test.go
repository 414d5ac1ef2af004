package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// fuzzRows is how many rows of a fuzzed file are checked: a file of a few
// bytes may well hold millions of rows (a run-length encoded page), and
// reading them all checks nothing more.
const fuzzRows = 20_000

// checkImport opens path as an imported workload and reads it to the end
// or to its first error, checking what the readers promise whatever the
// file holds: no panic, an error that names the key and the file, and
// rows whose codes index their sets, each passing checkRow or refused by
// it with the row and column.
func checkImport(t *testing.T, path string) {
	const key = "generate.eval.import"
	named := func(err error) {
		if msg := err.Error(); !strings.HasPrefix(msg, key) || !strings.Contains(msg, path) && !strings.HasPrefix(msg, key+": ") {
			t.Fatalf("error %q does not start with the key and name the file", msg)
		}
	}
	src, err := openImport(path, key, catalog.Zoo())
	if err != nil {
		named(err)
		return
	}
	defer src.close()
	rows := make([]importRow, 997) // not a divisor of anything
	var done int64
	prev := 0.0
	for {
		n, err := src.read(rows)
		if err != nil {
			named(err)
			return
		}
		if n == 0 {
			if total := src.rows(); total >= 0 && total != done {
				t.Fatalf("read %d rows, the file claims %d", done, total)
			}
			return
		}
		if n > len(rows) {
			t.Fatalf("read %d rows into %d", n, len(rows))
		}
		for _, r := range rows[:n] {
			done++
			if r.model < 0 || int(r.model) >= catalog.Zoo().Len() || r.class < 0 || r.class > 1 || r.precision < 0 || r.precision > 1 {
				t.Fatalf("row %d: codes out of range: %+v", done, r)
			}
			if err := checkRow(&r, done, prev); err != nil {
				if !strings.HasPrefix(err.Error(), "row ") || !strings.Contains(err.Error(), "column ") {
					t.Fatalf("row %d refused without its row and column: %v", done, err)
				}
				return
			}
			prev = r.arrival
		}
		if done > fuzzRows {
			return
		}
	}
}

// FuzzImportCSV feeds the CSV reader of generate.<workload>.import any
// bytes: the example of docs/workloads.md, the edge cases the tests name, and what the
// fuzzer makes of them (and the files in testdata/fuzz/FuzzImportCSV).
func FuzzImportCSV(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "workload.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	const header = "arrival_s,model,batch_size,class"
	for _, s := range []string{
		header + "\n0,mlp,1,batch\n",
		"\uFEFF" + strings.ToUpper(header) + ",precision,slo_s\n0, vit ,64,interactive,fp16,0.05\n1e-3,resnet50,1,batch,fp32,1e-6\n",
		header + "\n\"0\",\"mlp\",\"1\",\"batch\"\n",
		header + "\n0,mlp,1,batch\n0,mlp,1\n",
		header + "\n2,mlp,1,batch\n1,mlp,1,batch\n",
		header + "\nNaN,mlp,-1,batch\n",
		header + ",memory_mib\n0,mlp,1,batch,3\n",
		header + "\n0,\"ml\np\",1,batch\n",
		"", "\n", ",,,\n", "\"", "arrival_s\r\n0\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "w.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkImport(t, path)
	})
}

// FuzzImportParquet feeds the Parquet reader of generate.<workload>.import
// any bytes, from valid files as parquet-go and Arrow write them: every
// column, optional columns with a null, unsigned batch sizes (and the
// files in testdata/fuzz/FuzzImportParquet).
func FuzzImportParquet(f *testing.F) {
	dir := f.TempDir()
	add := func(name string, write func(path string) error) {
		path := filepath.Join(dir, name)
		if err := write(path); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	add("full.parquet", func(path string) error {
		return parquetio.WriteFile(path, []importedRow{
			{0, "mlp", 1, ClassInteractive, PrecisionFP32, 0.1},
			{0.5, "vit", 64, ClassBatch, PrecisionFP16, 2},
			{0.25, "resnet18", 8, ClassBatch, PrecisionFP32, 1}, // out of order
		}, nil)
	})
	add("optional.parquet", func(path string) error {
		type row struct {
			ArrivalS  *float64 `parquet:"arrival_s,optional"`
			Model     *string  `parquet:"model,optional,dict"`
			BatchSize *uint16  `parquet:"batch_size,optional"`
			Class     *string  `parquet:"class,optional"`
		}
		return writeAny(path, []row{{ptr(0.0), ptr("mlp"), ptr(uint16(3)), ptr(ClassBatch)}, {ptr(1.0), nil, ptr(uint16(1)), ptr(ClassBatch)}})
	})
	add("arrow.parquet", func(path string) error {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "arrival_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "model", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "batch_size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "class", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer bld.Release()
		for i := range 4 {
			bld.Field(0).(*array.Float64Builder).Append(float64(i))
			bld.Field(1).(*array.StringBuilder).Append("resnet50")
			bld.Field(2).(*array.Int64Builder).Append(int64(i + 1))
			bld.Field(3).(*array.StringBuilder).Append(ClassInteractive)
		}
		rec := bld.NewRecord()
		defer rec.Release()
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	})
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "w.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkImport(t, path)
	})
}
