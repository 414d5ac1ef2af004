package profile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// checkImport runs readImport on content written to a file named name and
// checks what any input must give: no panic, and either an error naming
// the file or rows that every later stage accepts.
func checkImport(t *testing.T, name string, content []byte) {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readImport(path)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	if len(rows) == 0 || len(rows) > MaxImportRows {
		t.Fatalf("readImport gave %d rows", len(rows))
	}
	for i, r := range rows {
		if err := r.Validate(); err != nil {
			t.Fatalf("row %d passed the import but not Validate: %v", i+1, err)
		}
		if r.Source != "import:"+name {
			t.Fatalf("row %d has source %q", i+1, r.Source)
		}
	}
}

// FuzzReadImportCSV feeds profile.import random CSV files.
func FuzzReadImportCSV(f *testing.F) {
	good := importHeader + "inference,tensorrt,TensorrtExecutionProvider,gpu:a100,resnet50,fp16,8,1,1,0.004\n"
	for _, s := range []string{
		good, "\xEF\xBB\xBF" + good, "", importHeader, "kind,backend\ninference,x\n",
		strings.ReplaceAll(good, ",", ";"), strings.ReplaceAll(good, "\n", "\r\n"),
		importHeader + "inference,x,p,d,m,fp32,1,1,1,NaN\n", importHeader + "inference,x,p,d,m,fp32,99999999999,1,1,1\n",
		importHeader + `"inference","x, y",p,d,m,fp32,1,1,1,1e-3` + "\n", importHeader + "inference,x,p,d,m,fp32,1,1,1\n",
		"kind,backend,provider,device,model,precision,batch,threads,concurrency,latency_s,repeat\n" + "matmul,gonum,go,cpu,matmul,fp32,128,1,1,0.01,3\n",
		"\x00\x00\x00", "\"", importHeader + "\"unterminated\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkImport(t, "gpu.csv", b) })
}

// FuzzReadImportParquet feeds profile.import random Parquet files, seeded
// with valid ones and ones of the wrong types.
func FuzzReadImportParquet(f *testing.F) {
	dir := f.TempDir()
	lat := 0.004
	seed := func(write func(path string) error) {
		path := filepath.Join(dir, "seed.parquet")
		if err := write(path); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	s := Sample{Kind: KindInference, Backend: "tensorrt", Provider: "TensorrtExecutionProvider", Device: "gpu:a100", Model: "resnet50", Precision: FP16, Batch: 8, Threads: 1, Concurrency: 1, LatencyS: lat}
	seed(func(p string) error { return parquetio.WriteFile(p, []Sample{s, s}, nil) })
	seed(func(p string) error {
		return parquetio.WriteFile(p, []boolLatency{{text, sampleCounts{8, 1, 1}, true}}, nil)
	})
	seed(func(p string) error { return parquetio.WriteFile(p, []doubleThreads{{text, 8, 1.5, 1, lat}}, nil) })
	seed(func(p string) error { return parquetio.WriteFile(p, []int64Batch{{text, 1e10, 1, 1, 0.004}}, nil) })
	seed(func(p string) error {
		return parquetio.WriteFile(p, []nullableLatency{{text, sampleCounts{8, 1, 1}, &lat}, {text, sampleCounts{8, 1, 1}, nil}}, nil)
	})
	// What the fuzzer found: a footer claiming 2 GB (parquet-go allocated
	// it), and LZ4 pages (its decoder grows its buffer without end on a
	// damaged one).
	seed(func(p string) error {
		if err := parquetio.WriteFile(p, []Sample{s}, nil); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(b[len(b)-8:], 0x7fffffff)
		return os.WriteFile(p, b, 0o644)
	})
	seed(func(p string) error {
		return parquetio.WriteFile(p, []Sample{s}, nil, parquet.Compression(&parquet.Lz4Raw))
	})
	f.Add([]byte("PAR1 this is not parquet PAR1"))
	f.Add([]byte("PAR1"))
	f.Fuzz(func(t *testing.T, b []byte) { checkImport(t, "gpu.parquet", b) })
}
