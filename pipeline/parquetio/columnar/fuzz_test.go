package columnar

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// FuzzMatchesParquetGo writes rows of every column shape through
// parquet-go and through a Table, with the same options and Write calls,
// and wants the same bytes: for any number of rows, size of the writes,
// page buffer, row group and share of null strings.
func FuzzMatchesParquetGo(f *testing.F) {
	f.Add(uint64(1), uint16(1000), uint16(256), uint16(4096), uint16(1000), uint8(50))
	f.Add(uint64(2), uint16(4000), uint16(100), uint16(512), uint16(700), uint8(2))
	f.Add(uint64(3), uint16(64), uint16(64), uint16(0), uint16(63), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, n, batch, page, group uint16, rejectOneIn uint8) {
		rs := rowsRejecting(int(n%6000), seed, 1+int(rejectOneIn))
		opts := []parquet.WriterOption{
			parquet.PageBufferSize(128 + int(page)),
			parquet.MaxRowsPerRowGroup(1 + int64(group)),
			parquet.SkipPageBounds("device"), parquet.SkipPageStatistics("device"),
		}
		b := 1 + int(batch%2000)
		want := writeParquetGo(t, rs, b, opts)
		got := writeColumnar(t, rs, b, opts)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d rows in writes of %d: columnar wrote %d bytes, parquet-go %d; they differ first at byte %d",
				len(rs), b, len(got), len(want), firstDiff(got, want))
		}
	})
}
