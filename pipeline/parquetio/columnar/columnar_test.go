package columnar

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// traceLike has a column of every shape the schedule stage's trace and
// devices files have.
type traceLike struct {
	ID        int64   `parquet:"id,delta"`
	Policy    string  `parquet:"policy,dict"`
	Device    string  `parquet:"device,dict"`
	Lane      int32   `parquet:"lane,dict"`
	Size      int32   `parquet:"size,dict"`
	Arrival   float64 `parquet:"arrival,split"`
	Wait      float64 `parquet:"wait,uncompressed"`
	Start     float64 `parquet:"start"`
	Memory    float64 `parquet:"memory,dict"`
	Count     int32   `parquet:"count"`
	Met       bool    `parquet:"met"`
	Rejected  bool    `parquet:"rejected"`
	Reason    string  `parquet:"reason,optional,dict"`
	Label     string  `parquet:"label,dict"`
	Sparse    string  `parquet:"sparse,optional,dict"`
	Sequence  int64   `parquet:"sequence"`
	Fractions float64 `parquet:"fractions,split,uncompressed"`
}

// labels are many strings of one length, as a simulation's device names
// are; a few are built again for every row that holds them, so that a
// string is not always known by its pointer.
var labels = func() []string {
	l := make([]string, 30)
	for i := range l {
		l[i] = fmt.Sprintf("label-%02d", i)
	}
	return l
}()

var devices = []string{"cpu-0", "cpu-1", "gpu-0", "a-much-longer-device-name-than-the-index-keeps", ""}

// rows draws n rows whose values repeat as a simulation's do, with zeros,
// negative zeros and the occasional NaN where they can occur.
func rows(n int, seed uint64) []traceLike { return rowsRejecting(n, seed, 50) }

// rowsRejecting is rows with one row in about oneIn rejected: it alone has
// a reason, the optional string.
func rowsRejecting(n int, seed uint64, oneIn int) []traceLike {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]traceLike, n)
	arrival := 0.0
	for i := range out {
		arrival += r.ExpFloat64()
		rejected := r.IntN(oneIn) == 0
		w := r.ExpFloat64() * float64(r.IntN(2))
		if r.IntN(1000) == 0 {
			w = math.Copysign(0, -1)
		}
		row := traceLike{
			ID:        int64(i)*3 + int64(r.IntN(3)),
			Policy:    "edf+batch",
			Device:    devices[r.IntN(len(devices))],
			Lane:      int32(r.IntN(4)) - 1,
			Size:      int32(1 << r.IntN(7)),
			Arrival:   arrival,
			Wait:      w,
			Start:     arrival + w,
			Memory:    float64(r.IntN(20)) * 97.5,
			Count:     int32(r.IntN(100000)),
			Met:       r.IntN(10) > 0,
			Rejected:  rejected,
			Label:     labels[r.IntN(len(labels))],
			Sequence:  r.Int64(),
			Fractions: r.Float64() - 0.5,
		}
		if rejected {
			row.Reason = []string{"no device fits", "queue full"}[r.IntN(2)]
		}
		if r.IntN(5000) == 0 {
			row.Sparse = "rare"
		}
		if r.IntN(100) == 0 {
			row.Label = strings.Clone(row.Label)
		}
		if r.IntN(20000) == 0 {
			row.Fractions = math.NaN()
		}
		out[i] = row
	}
	return out
}

// writeParquetGo writes rows through parquet-go, in Write calls of batch
// rows.
func writeParquetGo(t *testing.T, rs []traceLike, batch int, opts []parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[traceLike](&buf, opts...)
	for len(rs) > 0 {
		n := min(batch, len(rs))
		if _, err := w.Write(rs[:n]); err != nil {
			t.Fatal(err)
		}
		rs = rs[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeColumnar writes the same rows through a Table, in Write calls of
// batch rows.
func writeColumnar(t *testing.T, rs []traceLike, batch int, opts []parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewTable[traceLike](&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for len(rs) > 0 {
		n := min(batch, len(rs))
		if err := w.Write(rs[:n]); err != nil {
			t.Fatal(err)
		}
		rs = rs[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMatchesParquetGo(t *testing.T) {
	codec := &zstd.Codec{Level: zstd.SpeedFastest, Concurrency: 1}
	base := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.CreatedBy("parquet-go", "0.32.0", "mlsched"),
		parquet.KeyValueMetadata("stage", "schedule"),
		parquet.KeyValueMetadata("version", "abc"),
	}
	skip := []parquet.WriterOption{
		parquet.SkipPageBounds("device"), parquet.SkipPageStatistics("device"),
		parquet.SkipPageBounds("reason"), parquet.SkipPageStatistics("reason"),
		parquet.SkipPageBounds("wait"), parquet.SkipPageStatistics("wait"),
		parquet.SkipPageBounds("memory"), parquet.SkipPageStatistics("memory"),
	}
	for _, tc := range []struct {
		name         string
		rows, batch  int
		page, groups int
		extra        []parquet.WriterOption
	}{
		{name: "empty", rows: 0, batch: 64, page: 256 << 10, groups: 1 << 20},
		{name: "one row", rows: 1, batch: 64, page: 256 << 10, groups: 1 << 20},
		{name: "one page", rows: 1000, batch: 1024, page: 256 << 10, groups: 1 << 20},
		{name: "many pages", rows: 20000, batch: 1024, page: 4 << 10, groups: 1 << 20},
		{name: "many row groups", rows: 20000, batch: 512, page: 4 << 10, groups: 4096},
		{name: "odd batches", rows: 7001, batch: 100, page: 2 << 10, groups: 1 << 20},
		{name: "batches across row groups", rows: 9000, batch: 1000, page: 2 << 10, groups: 2500},
		{name: "bounds skipped", rows: 20000, batch: 1024, page: 4 << 10, groups: 8192, extra: skip},
		{name: "default page size", rows: 150000, batch: 4096, page: 256 << 10, groups: 1 << 17, extra: skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append(append([]parquet.WriterOption{}, base...),
				parquet.PageBufferSize(tc.page), parquet.MaxRowsPerRowGroup(int64(tc.groups)))
			opts = append(opts, tc.extra...)
			rs := rows(tc.rows, uint64(tc.rows))
			want := writeParquetGo(t, rs, tc.batch, opts)
			got := writeColumnar(t, rs, tc.batch, opts)
			if !bytes.Equal(got, want) {
				explain(t, got, want)
				t.Fatalf("columnar wrote %d bytes, parquet-go %d; they differ first at byte %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// explain says where two files' metadata differ, for a failing test.
func explain(t *testing.T, got, want []byte) {
	t.Helper()
	open := func(b []byte) *parquet.File {
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	g, w := open(got), open(want)
	gm, wm := g.Metadata(), w.Metadata()
	for i := range min(len(gm.RowGroups), len(wm.RowGroups)) {
		for j := range gm.RowGroups[i].Columns {
			a, b := gm.RowGroups[i].Columns[j], wm.RowGroups[i].Columns[j]
			if !reflect.DeepEqual(a, b) {
				t.Errorf("row group %d column %d:\n got %#v\nwant %#v", i, j, a, b)
			}
		}
	}
	for i := range min(len(gm.RowGroups), len(wm.RowGroups)) {
		a, b := gm.RowGroups[i], wm.RowGroups[i]
		a.Columns, b.Columns = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row group %d:\n got %#v\nwant %#v", i, a, b)
		}
	}
	gm.RowGroups, wm.RowGroups = nil, nil
	if !reflect.DeepEqual(gm, wm) {
		t.Errorf("file:\n got %+v\nwant %+v", gm, wm)
	}
	for i, gi := range g.ColumnIndexes() {
		if wi := w.ColumnIndexes()[i]; !reflect.DeepEqual(gi, wi) {
			t.Errorf("column index %d:\n got %+v\nwant %+v", i, gi, wi)
		}
	}
	for i, gi := range g.OffsetIndexes() {
		if wi := w.OffsetIndexes()[i]; !reflect.DeepEqual(gi, wi) {
			t.Errorf("offset index %d:\n got %+v\nwant %+v", i, gi, wi)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	type nested struct {
		Inner struct {
			X int64 `parquet:"x"`
		} `parquet:"inner"`
	}
	type plainString struct {
		S string `parquet:"s"`
	}
	type optionalInt struct {
		N int64 `parquet:"n,optional"`
	}
	type floats struct {
		F float32 `parquet:"f"`
	}
	type list struct {
		L []int64 `parquet:"l"`
	}
	for _, tc := range []struct {
		name   string
		schema *parquet.Schema
		opts   []parquet.WriterOption
		want   string
	}{
		{"nested", parquet.SchemaOf(nested{}), nil, "column inner.x: only a flat schema"},
		{"plain string", parquet.SchemaOf(plainString{}), nil, "column s: only dictionary-encoded strings"},
		{"optional int", parquet.SchemaOf(optionalInt{}), nil, "column n: only optional dictionary-encoded strings"},
		{"float32", parquet.SchemaOf(floats{}), nil, "column f: FLOAT values are not written"},
		{"repeated", parquet.SchemaOf(list{}), nil, "column l: only a flat schema"},
		{"page v1", parquet.SchemaOf(traceLike{}), []parquet.WriterOption{parquet.DataPageVersion(1)}, "only data pages of version 2"},
		{"bloom filter", parquet.SchemaOf(traceLike{}), []parquet.WriterOption{parquet.BloomFilters(parquet.SplitBlockFilter(10, "id"))}, "bloom filters"},
		{"dictionary limit", parquet.SchemaOf(traceLike{}), []parquet.WriterOption{parquet.DictionaryMaxBytes(100)}, "dictionary size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(io.Discard, tc.schema, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestWriterRefusesMisuse(t *testing.T) {
	schema := parquet.SchemaOf(traceLike{})
	for _, tc := range []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"wrong type", func(w *Writer) error { return w.Float64s(0, []float64{1}) }, "column id holds INT64 values, not DOUBLE"},
		{"no such column", func(w *Writer) error { return w.Int64s(99, []int64{1}) }, "no column 99 of 17"},
		{"missing values", func(w *Writer) error {
			if err := w.Int64s(0, []int64{1}); err != nil {
				return err
			}
			return w.EndRows(1)
		}, "column policy was given 0 values for 1 rows"},
		{"rows left at close", func(w *Writer) error {
			if err := w.Int64s(0, []int64{1}); err != nil {
				return err
			}
			return w.Close()
		}, "column id was given 1 values after the last EndRows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(io.Discard, schema)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.do(w); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			// An error sticks.
			if err := w.Close(); err == nil {
				t.Fatal("Close after an error = nil")
			}
		})
	}
}

func TestNewTableRefuses(t *testing.T) {
	type uints struct {
		U uint16 `parquet:"u"`
	}
	if _, err := NewTable[uints](io.Discard); err == nil || !strings.Contains(err.Error(), "field U of columnar.uints: uint16 fields are not written") {
		t.Fatalf("NewTable[uints] = %v", err)
	}
}

// BenchmarkTable writes trace-like rows, in Write calls of 256 as the
// schedule stage makes them, through parquet-go's GenericWriter and
// through a Table, side by side: 20,000 rows, a default replication's
// trace, and a million.
func BenchmarkTable(b *testing.B) {
	opts := []parquet.WriterOption{parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest, Concurrency: 1})}
	for _, n := range []int{20_000, 1_000_000} {
		rs := rows(n, 7)
		write := map[string]func(w io.Writer) error{
			"parquet-go": func(out io.Writer) error {
				w := parquet.NewGenericWriter[traceLike](out, opts...)
				for i := 0; i < len(rs); i += 256 {
					if _, err := w.Write(rs[i:min(i+256, len(rs))]); err != nil {
						return err
					}
				}
				return w.Close()
			},
			"columnar": func(out io.Writer) error {
				w, err := NewTable[traceLike](out, opts...)
				if err != nil {
					return err
				}
				for i := 0; i < len(rs); i += 256 {
					if err := w.Write(rs[i:min(i+256, len(rs))]); err != nil {
						return err
					}
				}
				return w.Close()
			},
		}
		for _, name := range []string{"parquet-go", "columnar"} {
			b.Run(fmt.Sprintf("rows=%d/%s", n, name), func(b *testing.B) {
				for b.Loop() {
					if err := write[name](io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rs)), "ns/row")
			})
		}
	}
}
