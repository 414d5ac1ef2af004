package columnar

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// Table writes rows of a flat struct type T, as a parquet.GenericWriter[T]
// given the same Write calls writes them. T's fields may be int64, int32,
// float64, bool and string; each names its column as parquet-go reads the
// struct (the parquet tag's name, else the field's name).
type Table[T any] struct {
	w      *Writer
	fields []field
	max    int64

	// Scratch columns, reused from one Write to the next.
	i64   []int64
	i32   []int32
	f64   []float64
	bools []bool
	strs  []string
}

// field is one struct field and the column it fills.
type field struct {
	column int
	offset uintptr
	kind   reflect.Kind
}

// NewTable returns a Table of T's rows written to out with parquet-go's
// writer options, refusing what New refuses and any field of another type.
func NewTable[T any](out io.Writer, options ...parquet.WriterOption) (*Table[T], error) {
	var zero T
	schema := parquet.SchemaOf(zero)
	w, err := New(out, schema, options...)
	if err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]()
	t := &Table[T]{w: w, max: w.maxRows}
	seen := make(map[int]bool)
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		leaf, ok := schema.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("columnar: field %s of %s: no column %q in its schema", f.Name, typ, name)
		}
		switch f.Type.Kind() {
		case reflect.Int64, reflect.Int32, reflect.Float64, reflect.Bool, reflect.String:
		default:
			return nil, fmt.Errorf("columnar: field %s of %s: %s fields are not written", f.Name, typ, f.Type)
		}
		if f.Type.PkgPath() != "" {
			return nil, fmt.Errorf("columnar: field %s of %s: named type %s is not written", f.Name, typ, f.Type)
		}
		t.fields = append(t.fields, field{column: leaf.ColumnIndex, offset: f.Offset, kind: f.Type.Kind()})
		seen[leaf.ColumnIndex] = true
	}
	if len(seen) != len(w.cols) {
		return nil, fmt.Errorf("columnar: %s fills %d of its schema's %d columns", typ, len(seen), len(w.cols))
	}
	return t, nil
}

// Write writes rows, ending a row group wherever parquet-go's writer would.
func (t *Table[T]) Write(rows []T) error {
	for len(rows) > 0 {
		if t.w.err != nil {
			return t.w.err
		}
		n := min(int64(len(rows)), t.max-t.w.groupRows)
		if err := t.write(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// write writes rows that fit in the current row group.
func (t *Table[T]) write(rows []T) error {
	n := len(rows)
	base := unsafe.Pointer(unsafe.SliceData(rows))
	size := unsafe.Sizeof(rows[0])
	for _, f := range t.fields {
		var err error
		switch f.kind {
		case reflect.Int64:
			t.i64 = gather[int64](t.i64, base, size, f.offset, n)
			err = t.w.Int64s(f.column, t.i64)
		case reflect.Int32:
			t.i32 = gather[int32](t.i32, base, size, f.offset, n)
			err = t.w.Int32s(f.column, t.i32)
		case reflect.Float64:
			t.f64 = gather[float64](t.f64, base, size, f.offset, n)
			err = t.w.Float64s(f.column, t.f64)
		case reflect.Bool:
			t.bools = gather[bool](t.bools, base, size, f.offset, n)
			err = t.w.Bools(f.column, t.bools)
		default:
			t.strs = gather[string](t.strs, base, size, f.offset, n)
			err = t.w.Strings(f.column, t.strs)
		}
		if err != nil {
			return err
		}
	}
	clear(t.strs) // hold no caller's strings past the call
	return t.w.EndRows(n)
}

// gather copies the field at offset of n rows of size bytes from base
// into dst.
func gather[V any](dst []V, base unsafe.Pointer, size, offset uintptr, n int) []V {
	dst = dst[:0]
	p := unsafe.Add(base, offset)
	for range n {
		dst = append(dst, *(*V)(p))
		p = unsafe.Add(p, size)
	}
	return dst
}

// Close writes the footer; it does not close the output.
func (t *Table[T]) Close() error { return t.w.Close() }
