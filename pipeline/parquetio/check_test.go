package parquetio

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestReadersRefuseWhatParquetGoMishandles: a few changed bytes made
// parquet-go allocate the 2 GB footer a file claimed, and a damaged LZ4
// page made it grow its buffer until the process ran out of memory. The
// readers refuse both before parquet-go reads a page, quickly and naming
// the file.
func TestReadersRefuseWhatParquetGoMishandles(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.parquet", sampleRows(100), nil)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	claim := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(claim[len(claim)-8:], 0x7fffffff)
	bigFooter := filepath.Join(dir, "footer.parquet")
	if err := os.WriteFile(bigFooter, claim, 0o644); err != nil {
		t.Fatal(err)
	}
	lz4 := filepath.Join(dir, "lz4.parquet")
	if err := WriteFile(lz4, sampleRows(100), nil, parquet.Compression(&parquet.Lz4Raw)); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.parquet")
	if err := os.WriteFile(short, []byte("PAR1PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{bigFooter, "its footer claims 2147483647 bytes of a"},
		{short, "8 bytes, too short for a Parquet file"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := ReadAll[sample](tt.path)
			runtime.ReadMemStats(&after)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("ReadAll = %v, want ErrCorrupt naming the file and %q", err, tt.want)
			}
			if _, err := OpenColumns(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenColumns = %v, want %q", err, tt.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
				t.Errorf("ReadAll allocated %d MiB to refuse it", a>>20)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("ReadAll took %v to refuse it", d)
			}
		})
	}
	// A sound LZ4 file reads (a damaged one is refused: TestPageGuards).
	for _, ok := range []string{good, lz4} {
		if _, err := ReadAll[sample](ok); err != nil {
			t.Errorf("%s: %v", filepath.Base(ok), err)
		}
	}
}
