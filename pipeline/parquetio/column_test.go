package parquetio

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// typed has a column of every type Column reads, dictionary-encoded and
// plain.
type typed struct {
	ID       int64   `parquet:"id,delta"`
	Size     int32   `parquet:"size,dict"`
	Plain32  int32   `parquet:"plain32"`
	Value    float64 `parquet:"value"`
	Level    float64 `parquet:"level,dict"`
	Flag     bool    `parquet:"flag"`
	DictFlag bool    `parquet:"dict_flag,dict"`
	Kind     string  `parquet:"kind,dict"`
	Name     string  `parquet:"name"`
	Optional *int64  `parquet:"optional,optional"`
}

func typedRows(n int) []typed {
	kinds := []string{"cpu", "gpu", "tpu"}
	rows := make([]typed, n)
	for i := range rows {
		rows[i] = typed{
			ID: int64(i) * 3, Size: int32(i % 5), Plain32: int32(i), Value: float64(i) / 7, Level: float64(i%4) / 2,
			Flag: i%3 == 0, DictFlag: i%5 == 1, Kind: kinds[i%len(kinds)], Name: kinds[(i/2)%len(kinds)],
		}
	}
	return rows
}

// TestColumnRead reads every column back in chunks that straddle pages,
// dictionaries and row groups, and checks it against the rows written.
func TestColumnRead(t *testing.T) {
	const n = 20_000
	rows := typedRows(n)
	path := filepath.Join(t.TempDir(), "typed.parquet")
	if err := WriteFile(path, rows, nil, parquet.PageBufferSize(1500), parquet.MaxRowsPerRowGroup(7000)); err != nil {
		t.Fatal(err)
	}
	cf, err := OpenColumns(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	if cf.NumRows() != n {
		t.Fatalf("NumRows = %d, want %d", cf.NumRows(), n)
	}
	col := func(name string, kind parquet.Kind) *Column {
		c, err := cf.Column(name, kind)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	id, size, plain32 := col("id", parquet.Int64), col("size", parquet.Int32), col("plain32", parquet.Int32)
	value, level, flag := col("value", parquet.Double), col("level", parquet.Double), col("flag", parquet.Boolean)
	dictFlag := col("dict_flag", parquet.Boolean)
	kind, name := col("kind", parquet.ByteArray), col("name", parquet.ByteArray)
	lookup := func(b []byte) int32 { return int32(slices.Index([]string{"cpu", "gpu", "tpu"}, string(b))) }

	var got []typed
	for done := 0; done < n; {
		k := min(777, n-done) // not a divisor of any page or group size
		ids, sizes, p32 := make([]int64, k), make([]int32, k), make([]int32, k)
		values, levels, flags, dictFlags := make([]float64, k), make([]float64, k), make([]bool, k), make([]bool, k)
		kinds, names := make([]int32, k), make([]int32, k)
		for _, err := range []error{
			id.Int64s(ids), size.Int32s(sizes), plain32.Int32s(p32), value.Float64s(values),
			level.Float64s(levels), flag.Bools(flags), dictFlag.Bools(dictFlags),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			col *Column
			dst []int32
		}{{kind, kinds}, {name, names}} {
			bad, err := c.col.Codes(c.dst, lookup)
			if err != nil || bad >= 0 {
				t.Fatalf("%s: Codes = %d, %v", c.col.Name(), bad, err)
			}
		}
		for i := range k {
			got = append(got, typed{ids[i], sizes[i], p32[i], values[i], levels[i], flags[i], dictFlags[i],
				[]string{"cpu", "gpu", "tpu"}[kinds[i]], []string{"cpu", "gpu", "tpu"}[names[i]], nil})
		}
		done += k
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Fatalf("row %d: read %+v, want %+v", i, got[i], rows[i])
		}
	}
	if err := id.Int64s(make([]int64, 1)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "column id: ") {
		t.Errorf("reading past the end: %v, want a corrupt-file error naming column id", err)
	}
}

// TestColumnRowGroupsReleased reads a file of many row groups through
// and checks that the live heap does not grow with the row groups read:
// a row group's page reader, with its last page, its dictionary and its
// read buffer, is closed once the column leaves it. Read through
// parquet-go's reader over the whole column, each row group's stayed
// live until the file was closed: the heap grew by 7 MiB here.
func TestColumnRowGroupsReleased(t *testing.T) {
	const groups, perGroup = 300, 2000
	type row struct {
		Value float64 `parquet:"value"`
		Kind  string  `parquet:"kind,dict"`
	}
	rows := make([]row, groups*perGroup)
	for i := range rows {
		rows[i] = row{Value: float64(i) / 3, Kind: []string{"a", "b", "c"}[i%3]}
	}
	path := filepath.Join(t.TempDir(), "groups.parquet")
	if err := WriteFile(path, rows, nil, parquet.MaxRowsPerRowGroup(perGroup)); err != nil {
		t.Fatal(err)
	}
	rows = nil
	cf, err := OpenColumns(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	value, err := cf.Column("value", parquet.Double)
	if err != nil {
		t.Fatal(err)
	}
	kind, err := cf.Column("kind", parquet.ByteArray)
	if err != nil {
		t.Fatal(err)
	}
	values, kinds := make([]float64, perGroup), make([]int32, perGroup)
	lookup := func(b []byte) int32 { return int32(b[0] - 'a') }
	// live is the heap after two collections, which empty sync.Pool (and
	// so parquet-go's buffer pools): what the readers hold, not what they
	// handed back.
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var early uint64
	for g := range groups {
		if err := value.Float64s(values); err != nil {
			t.Fatal(err)
		}
		if bad, err := kind.Codes(kinds, lookup); err != nil || bad >= 0 {
			t.Fatalf("row group %d: Codes = %d, %v", g, bad, err)
		}
		if values[0] != float64(g*perGroup)/3 || kinds[1] != int32((g*perGroup+1)%3) {
			t.Fatalf("row group %d: read %v, %d first", g, values[0], kinds[1])
		}
		if g == 10 {
			early = live()
		}
	}
	if late := live(); late > early+1<<20 {
		t.Errorf("live heap grew by %d KiB from row group 10 to %d: finished row groups are kept", (late-early)>>10, groups)
	}
}

func TestColumnErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typed.parquet")
	if err := WriteFile(path, typedRows(10), nil); err != nil {
		t.Fatal(err)
	}
	cf, err := OpenColumns(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	for _, tt := range []struct {
		name string
		kind parquet.Kind
		want string
	}{
		{"missing", parquet.Int64, "no column missing"},
		{"id", parquet.Int32, "column id: want a required INT32 column, got"},
		{"optional", parquet.Int64, "column optional: want a required INT64 column, got"},
	} {
		if _, err := cf.Column(tt.name, tt.kind); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Column(%s, %s) = %v, want an error containing %q", tt.name, tt.kind, err, tt.want)
		}
	}

	kind, err := cf.Column("kind", parquet.ByteArray)
	if err != nil {
		t.Fatal(err)
	}
	if err := kind.Float64s(make([]float64, 1)); err == nil || !strings.Contains(err.Error(), "column kind: read as DOUBLE, but it holds BYTE_ARRAY") {
		t.Errorf("Float64s on a string column = %v", err)
	}
	codes := make([]int32, 10)
	bad, err := kind.Codes(codes, func(b []byte) int32 {
		if string(b) == "tpu" {
			return -1
		}
		return int32(len(b))
	})
	if err != nil || bad != 2 || kind.BadValue() != "tpu" || codes[0] != 3 {
		t.Errorf("Codes with tpu unknown = %d, %v (value %q, codes %v); want 2, nil, tpu", bad, err, kind.BadValue(), codes)
	}

	if _, err := OpenColumns(filepath.Join(t.TempDir(), "none.parquet")); err == nil || !strings.Contains(err.Error(), "none.parquet") {
		t.Errorf("OpenColumns on no file = %v, want an error naming it", err)
	}
}

// TestNullableColumn reads optional columns as another writer marks them:
// without nulls they read as required ones do; a null is refused with its
// row, counted from 1 across pages and row groups; and Column still refuses
// an optional column.
func TestNullableColumn(t *testing.T) {
	type row struct {
		X *int64   `parquet:"x,optional"`
		S *string  `parquet:"s,optional,dict"`
		L []string `parquet:"l,list"`
	}
	const n = 5000
	write := func(nullAt int) string {
		rows := make([]row, n)
		for i := range rows {
			if i != nullAt {
				x, s := int64(i), []string{"a", "b"}[i%2]
				rows[i] = row{X: &x, S: &s}
			}
		}
		path := filepath.Join(t.TempDir(), "opt.parquet")
		if err := WriteFile(path, rows, nil, parquet.PageBufferSize(1000), parquet.MaxRowsPerRowGroup(1700)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string) (xs []int64, codes []int32, xerr, serr error) {
		cf, err := OpenColumns(path)
		if err != nil {
			t.Fatal(err)
		}
		defer cf.Close()
		if _, err := cf.Column("x", parquet.Int64); err == nil || !strings.Contains(err.Error(), "want a required INT64 column") {
			t.Errorf("Column(optional x) = %v, want a refusal", err)
		}
		if _, err := cf.NullableColumn("l", parquet.ByteArray); err == nil {
			t.Error("NullableColumn(a list) = nil error, want a refusal")
		}
		x, err := cf.NullableColumn("x", parquet.Int64)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cf.NullableColumn("s", parquet.ByteArray)
		if err != nil {
			t.Fatal(err)
		}
		xs, codes = make([]int64, n), make([]int32, n)
		xerr = x.Int64s(xs)
		_, serr = s.Codes(codes, func(b []byte) int32 { return int32(b[0] - 'a') })
		return xs, codes, xerr, serr
	}

	xs, codes, xerr, serr := read(write(-1))
	if xerr != nil || serr != nil {
		t.Fatalf("reading optional columns without nulls: %v, %v", xerr, serr)
	}
	for i := range xs {
		if xs[i] != int64(i) || codes[i] != int32(i%2) {
			t.Fatalf("row %d: x %d, s code %d", i+1, xs[i], codes[i])
		}
	}
	for _, at := range []int{0, 1, 1699, 1700, 4321, n - 1} {
		_, _, xerr, serr := read(write(at))
		for _, err := range []error{xerr, serr} {
			var ne *NullError
			if !errors.As(err, &ne) || !errors.Is(err, ErrNull) || ne.Row != int64(at+1) {
				t.Errorf("null at row %d: read error %v, want a NullError for row %d", at+1, err, at+1)
			}
		}
	}
}

// TestFooterBomb opens files whose trailer claims a footer longer than the
// file: parquet-go allocated the claimed length (4 GiB for 0xffffffff)
// before reading it. OpenColumns and ReadAll refuse them as corrupt, having
// allocated nothing of the sort; so they do a file without the magic
// number or too short to be one.
func TestFooterBomb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typed.parquet")
	if err := WriteFile(path, typedRows(10), nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bomb := slices.Clone(good)
	binary.LittleEndian.PutUint32(bomb[len(bomb)-8:], 0xffffffff)
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"footer bomb", bomb, "its footer claims 4294967295 bytes"},
		{"no magic", append(slices.Clone(good[:len(good)-4]), "PAR2"...), "no Parquet magic number"},
		{"short", []byte("PAR1PAR1"), "too short"},
	} {
		p := filepath.Join(t.TempDir(), "bad.parquet")
		if err := os.WriteFile(p, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err1 := OpenColumns(p)
		_, err2 := ReadAll[typed](p)
		runtime.ReadMemStats(&after)
		for _, err := range []error{err1, err2} {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %v, want ErrCorrupt naming the file and saying %q", tt.name, err, tt.want)
			}
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
			t.Errorf("%s: opening it allocated %d MiB", tt.name, a>>20)
		}
	}
}
