package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

const importHeader = "kind,backend,provider,device,model,precision,batch,threads,concurrency,latency_s\n"

// TestImportCSVHostile: a byte-order mark is accepted; a file whose first
// line never ends fails on its header at once, without reading the file
// into memory; a number too large for its column says so.
func TestImportCSVHostile(t *testing.T) {
	good := "inference,tensorrt,TensorrtExecutionProvider,gpu:a100,resnet50,fp16,8,1,1,0.004\n"
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"byte-order mark", append([]byte("\xEF\xBB\xBF"), importHeader+good...), ""},
		{"header without end", bytes.Repeat([]byte{0}, 8<<20), "the header line runs past 65536 bytes without a newline (is this a CSV file?)"},
		{"row without end", append([]byte(importHeader+good), bytes.Repeat([]byte("x"), MaxImportLine+1)...), "row 2: line too long: line 3 runs past 65536 bytes"},
		{"column twice", []byte("kind,batch," + strings.TrimPrefix(importHeader, "kind,") + good), `header names column "batch" twice`},
		{"batch beyond int32", []byte(importHeader + strings.Replace(good, ",8,", ",10000000000,", 1)), "row 1, column batch: want an integer in [-2147483648, 2147483647], got 10000000000"},
		{"threads fractional", []byte(importHeader + strings.Replace(good, ",8,1,", ",8,1.5,", 1)), `row 1, column threads: want an integer, got "1.5"`},
		{"invalid UTF-8", []byte(importHeader + strings.Replace(good, "gpu:a100", "gpu\xff", 1)), "row 1: \"gpu\\xff\" is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpu.csv")
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rows, err := readImport(path)
			if tt.want == "" {
				if err != nil || len(rows) != 1 || rows[0].Kind != "inference" || rows[0].Device != "gpu:a100" {
					t.Fatalf("readImport = %+v, %v", rows, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("readImport = %v, want an error naming %s and containing %q", err, path, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("readImport took %v to fail", d)
			}
		})
	}
}

// Rows with the import's columns in other types, as another tool might
// write them.
type (
	boolLatency struct {
		sampleText
		sampleCounts
		LatencyS bool `parquet:"latency_s"`
	}
	doubleThreads struct {
		sampleText
		Batch       int32   `parquet:"batch"`
		Threads     float64 `parquet:"threads"`
		Concurrency int32   `parquet:"concurrency"`
		LatencyS    float64 `parquet:"latency_s"`
	}
	int64Batch struct {
		sampleText
		Batch       int64   `parquet:"batch"`
		Threads     int64   `parquet:"threads"`
		Concurrency int64   `parquet:"concurrency"`
		LatencyS    float32 `parquet:"latency_s"`
	}
	nullableLatency struct {
		sampleText
		sampleCounts
		LatencyS *float64 `parquet:"latency_s,optional"`
	}
	dateBatch struct {
		sampleText
		Batch       int32   `parquet:"batch,date"`
		Threads     int32   `parquet:"threads"`
		Concurrency int32   `parquet:"concurrency"`
		LatencyS    float64 `parquet:"latency_s"`
	}
	intKind struct {
		Kind      int64  `parquet:"kind"`
		Backend   string `parquet:"backend"`
		Provider  string `parquet:"provider"`
		Device    string `parquet:"device"`
		Model     string `parquet:"model"`
		Precision string `parquet:"precision"`
		sampleCounts
		LatencyS float64 `parquet:"latency_s"`
	}
	sampleCounts struct {
		Batch       int32 `parquet:"batch"`
		Threads     int32 `parquet:"threads"`
		Concurrency int32 `parquet:"concurrency"`
	}
	sampleText struct {
		Kind      string `parquet:"kind"`
		Backend   string `parquet:"backend"`
		Provider  string `parquet:"provider"`
		Device    string `parquet:"device"`
		Model     string `parquet:"model"`
		Precision string `parquet:"precision"`
	}
)

var text = sampleText{"inference", "tensorrt", "TensorrtExecutionProvider", "gpu:a100", "resnet50", "fp16"}

// TestImportParquetTypes: a Parquet import's columns must have the
// schema's types. A boolean latency was stored as 1 s, threads 1.5 as 1,
// batch 1e10 reported as -2147483648 and a null latency as 0.
func TestImportParquetTypes(t *testing.T) {
	lat := 0.004
	tests := []struct {
		name  string
		write func(path string) error
		want  string
	}{
		{"boolean latency", func(p string) error {
			return parquetio.WriteFile(p, []boolLatency{{text, sampleCounts{8, 1, 1}, true}}, nil)
		}, "column latency_s: type BOOLEAN, want DOUBLE or FLOAT"},
		{"double threads", func(p string) error {
			return parquetio.WriteFile(p, []doubleThreads{{text, 8, 1.5, 1, lat}}, nil)
		}, "column threads: type DOUBLE, want INT32 or INT64 (an integer)"},
		{"int64 beyond int32", func(p string) error {
			return parquetio.WriteFile(p, []int64Batch{{text, 1e10, 1, 1, 0.004}}, nil)
		}, "row 1, column batch: 10000000000 does not fit an int32 (want an integer in [-2147483648, 2147483647])"},
		{"null latency", func(p string) error {
			return parquetio.WriteFile(p, []nullableLatency{{text, sampleCounts{8, 1, 1}, &lat}, {text, sampleCounts{8, 1, 1}, nil}}, nil)
		}, "row 2, column latency_s: null, want DOUBLE or FLOAT"},
		{"date batch", func(p string) error {
			return parquetio.WriteFile(p, []dateBatch{{text, 8, 1, 1, lat}}, nil)
		}, "column batch: type INT32 (DATE), want INT32 or INT64 (an integer)"},
		{"integer kind", func(p string) error {
			return parquetio.WriteFile(p, []intKind{{Kind: 1, Backend: "b", Provider: "p", Device: "d", Model: "m", Precision: "fp32", sampleCounts: sampleCounts{1, 1, 1}, LatencyS: lat}}, nil)
		}, "column kind: type INT64 (INT(64,true)), want BYTE_ARRAY (STRING)"},
		// LZ4 pages are read once their sizes are checked (a damaged one:
		// parquetio's TestPageGuards).
		{"lz4 pages", func(p string) error {
			return parquetio.WriteFile(p, []int64Batch{{text, 8, 1, 1, 0.004}}, nil, parquet.Compression(&parquet.Lz4Raw))
		}, ""},
		// Integers as INT64 and a FLOAT latency, as pandas may write them,
		// are fine when they fit.
		{"int64 and float", func(p string) error {
			return parquetio.WriteFile(p, []int64Batch{{text, 8, 1, 1, 0.004}}, nil)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpu.parquet")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			rows, err := readImport(path)
			if tt.want == "" {
				if err != nil || len(rows) != 1 || rows[0].Batch != 8 || rows[0].Device != "gpu:a100" || float32(rows[0].LatencyS) != float32(0.004) {
					t.Fatalf("readImport = %+v, %v", rows, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("readImport = %v, want an error naming %s and containing %q", err, path, tt.want)
			}
		})
	}
}
