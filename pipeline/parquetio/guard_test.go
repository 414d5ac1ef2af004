package parquetio

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// rewritePage writes rows with codec, then rewrites the first page header
// of the first column with edit (and, when body is not nil, lets body edit
// the page's bytes), and returns the file's path.
func rewritePage(t *testing.T, codec compress.Codec, edit func(*format.PageHeader), body func([]byte)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.parquet")
	if err := WriteFile(path, typedRows(200), nil, parquet.Compression(codec)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, int64(len(b)))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[0].MetaData
	off := md.DataPageOffset
	if md.DictionaryPageOffset > 0 {
		off = min(off, md.DictionaryPageOffset)
	}
	proto := &thrift.CompactProtocol{}
	br := proto.NewReaderFromBytes(b[off:])
	var h format.PageHeader
	if err := thrift.NewDecoder(br).Decode(&h); err != nil {
		t.Fatal(err)
	}
	n := int64(br.BytesRead())
	edit(&h)
	keep := h.CompressedPageSize < 1<<20 // an honest body: keep the page's end where it was
	var hb []byte
	for range 3 {
		if hb, err = thrift.Marshal(proto, &h); err != nil {
			t.Fatal(err)
		}
		if !keep || int64(len(hb)) == n {
			break
		}
		h.CompressedPageSize -= int32(int64(len(hb)) - n)
	}
	// A header of another length shifts what follows it: the footer
	// stays at the end, and the first page is what the test is about.
	b = slices.Concat(b[:off], hb, b[off+n:])
	if body != nil {
		body(b[off+int64(len(hb)) : off+int64(len(hb))+int64(h.CompressedPageSize)])
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPageGuards gives the readers pages whose sizes lie: parquet-go
// allocated a page's claimed size (up to 2 GiB) before reading it, looped
// forever doubling its buffer on a damaged LZ4_RAW page, and decompresses
// ZSTD pages to whatever they expand to. Each is refused as corrupt, at
// once and without the memory; the ZSTD check is OpenForeign's.
func TestPageGuards(t *testing.T) {
	tests := []struct {
		name    string
		codec   compress.Codec
		edit    func(*format.PageHeader)
		body    func([]byte)
		foreign bool
		want    string
	}{
		{"page past its chunk", &parquet.Uncompressed, func(h *format.PageHeader) { h.CompressedPageSize = 0x7ffffff0 }, nil, false,
			"claims 2147483632 bytes, past its column chunk's end"},
		{"huge uncompressed size", &parquet.Zstd, func(h *format.PageHeader) { h.UncompressedPageSize = 0x7ffffff0 }, nil, false,
			"claims 2147483632 bytes uncompressed, more than 268435456"},
		{"damaged lz4", &parquet.Lz4Raw, func(*format.PageHeader) {}, func(b []byte) {
			for i := range b {
				b[i] = 0xf0
			}
		}, false, "lz4: does not decompress"},
		{"more values than its chunk", &parquet.Uncompressed, func(h *format.PageHeader) {
			switch {
			case h.DictionaryPageHeader.Valid:
				h.DictionaryPageHeader.V.NumValues = 1 << 30
			case h.DataPageHeaderV2.Valid:
				h.DataPageHeaderV2.V.NumValues = 1 << 30
			default:
				h.DataPageHeader.V.NumValues = 1 << 30
			}
		}, nil, false, "claims 1073741824 values, its column chunk 200"},
		{"snappy longer than said", &parquet.Snappy, func(h *format.PageHeader) { h.UncompressedPageSize -= 1 }, nil, false,
			"snappy: decompresses to"},
		{"zstd longer than said", &parquet.Zstd, func(h *format.PageHeader) { h.UncompressedPageSize = 100 }, nil, true,
			"decompresses to more than the 100 bytes its header says"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := rewritePage(t, tt.codec, tt.edit, tt.body)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			done := make(chan error, 1)
			go func() {
				open := OpenColumns
				if tt.foreign {
					open = OpenForeign
				}
				cf, err := open(path)
				if err == nil {
					cf.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("no answer after 20 s")
			}
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("open: %v, want ErrCorrupt saying %q", err, tt.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
				t.Errorf("opening it allocated %d MiB", a>>20)
			}
			if !tt.foreign {
				// (A header of another length moved the page index, which
				// parquet-go's OpenFile reads for ReadAll: it fails there.)
				if _, err := ReadAll[typed](path); err == nil {
					t.Errorf("ReadAll: nil error, want one saying %q", tt.want)
				}
			}
		})
	}
	// An honest file of every codec opens, and OpenForeign reads it whole.
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Brotli, &parquet.Zstd, &parquet.Lz4Raw} {
		path := rewritePage(t, codec, func(*format.PageHeader) {}, nil)
		cf, err := OpenForeign(path)
		if err != nil {
			t.Errorf("%v: OpenForeign = %v", codec, err)
			continue
		}
		ids := make([]int64, 200)
		c, err := cf.Column("id", parquet.Int64)
		if err == nil {
			err = c.Int64s(ids)
		}
		if err != nil || ids[199] != 199*3 {
			t.Errorf("%v: reading ids: %v, last %d", codec, err, ids[199])
		}
		cf.Close()
	}
}
