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
}

// field is one struct field and the column it fills.
type field struct {
	column int
	offset uintptr
	kind   reflect.Kind
	// physical is the column's type that kind maps to.
	physical parquet.Kind
}

// physicalKinds are the field kinds a Table writes and their columns'
// physical types.
var physicalKinds = map[reflect.Kind]parquet.Kind{
	reflect.Int64:   parquet.Int64,
	reflect.Int32:   parquet.Int32,
	reflect.Float64: parquet.Double,
	reflect.Bool:    parquet.Boolean,
	reflect.String:  parquet.ByteArray,
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
		physical, ok := physicalKinds[f.Type.Kind()]
		if !ok {
			return nil, fmt.Errorf("columnar: field %s of %s: %s fields are not written", f.Name, typ, f.Type)
		}
		if f.Type.PkgPath() != "" {
			return nil, fmt.Errorf("columnar: field %s of %s: named type %s is not written", f.Name, typ, f.Type)
		}
		t.fields = append(t.fields, field{column: leaf.ColumnIndex, offset: f.Offset, kind: f.Type.Kind(), physical: physical})
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

// write writes rows that fit in the current row group. Each column reads
// its field in the rows where it lies.
func (t *Table[T]) write(rows []T) error {
	n := len(rows)
	base := unsafe.Pointer(unsafe.SliceData(rows))
	size := unsafe.Sizeof(rows[0])
	for _, f := range t.fields {
		c, err := t.w.column(f.column, f.physical)
		if err != nil {
			return err
		}
		v := values{unsafe.Add(base, f.offset), size}
		switch f.kind {
		case reflect.Int64:
			err = c.addInt64s(v, n)
		case reflect.Int32:
			err = c.addInt32s(v, n)
		case reflect.Float64:
			err = c.addFloat64s(v, n)
		case reflect.Bool:
			err = c.addBools(v, n)
		default:
			err = c.addStrings(v, n)
		}
		if err := t.w.check(c, n, err); err != nil {
			return err
		}
	}
	return t.w.EndRows(n)
}

// Close writes the footer; it does not close the output.
func (t *Table[T]) Close() error { return t.w.Close() }
