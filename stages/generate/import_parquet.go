package generate

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// parquetSource reads an imported workload from Parquet, a column at a
// time (parquetio.OpenForeign, which refuses sizes the file states but
// does not hold, compression bombs included): memory is one page per
// column and a chunk of rows, whatever the file's size. Each column's type is checked
// against the format before any row is read, physical and logical, with
// no conversion: seconds are DOUBLE, batch sizes INT32 or INT64 (plain or
// an integer annotation), names BYTE_ARRAY annotated STRING or ENUM. A
// column may be optional, as most writers mark it, but a null is refused.
type parquetSource struct {
	ns        nameSets
	cf        *parquetio.ColumnFile
	total     int64
	done      int64
	arrival   *parquetio.Column
	slo       *parquetio.Column // nil without the column
	batch     *parquetio.Column
	batchKind parquet.Kind
	unsigned  bool // the batch column's integers are unsigned
	names     []*parquetio.Column
	// The chunk's columns, decoded.
	arrivals, slos []float64
	batch32        []int32
	batch64        []int64
	codes          [3][]int32 // model, class, precision
}

// nameColumns are the named columns, in the order of parquetSource.names
// and codes.
var nameColumns = [3]string{colModel, colClass, colPrecision}

func openParquet(path string, ns nameSets) (src *parquetSource, err error) {
	cf, err := parquetio.OpenForeign(path)
	if err != nil {
		return nil, notParquet(err)
	}
	defer func() {
		if err != nil {
			cf.Close()
		}
	}()
	s := &parquetSource{ns: ns, cf: cf, total: cf.NumRows()}
	if s.total < 0 || s.total > MaxJobs {
		return nil, fmt.Errorf("not a readable Parquet file: its footer claims %d rows", s.total)
	}
	fields := cf.Schema().Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name()
	}
	if err := checkColumns(names); err != nil {
		return nil, err
	}
	for _, f := range fields {
		if err := checkParquetType(f); err != nil {
			return nil, err
		}
	}
	open := func(name string, kind parquet.Kind) (*parquetio.Column, error) {
		c, err := cf.NullableColumn(name, kind)
		if err != nil {
			return nil, notParquet(err)
		}
		return c, nil
	}
	if s.arrival, err = open(colArrival, parquet.Double); err != nil {
		return nil, err
	}
	if node := lookup(fields, colSLO); node != nil {
		if s.slo, err = open(colSLO, parquet.Double); err != nil {
			return nil, err
		}
	}
	bt := lookup(fields, colBatch).Type()
	s.batchKind = bt.Kind()
	s.unsigned = unsignedInt(bt)
	if s.batch, err = open(colBatch, s.batchKind); err != nil {
		return nil, err
	}
	for _, name := range nameColumns {
		var c *parquetio.Column
		if lookup(fields, name) != nil {
			if c, err = open(name, parquet.ByteArray); err != nil {
				return nil, err
			}
		}
		s.names = append(s.names, c)
	}
	return s, nil
}

func (s *parquetSource) rows() int64  { return s.total }
func (s *parquetSource) close() error { return s.cf.Close() }

func lookup(fields []parquet.Field, name string) parquet.Field {
	for _, f := range fields {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// notParquet words a parquetio error on a file that is not one, or a
// damaged one.
func notParquet(err error) error {
	if errors.Is(err, parquetio.ErrCorrupt) {
		return fmt.Errorf("not a readable Parquet file: %w", err)
	}
	return err
}

// typeName writes a Parquet type as a reader of its schema knows it: the
// physical type, then its logical (or legacy converted) annotation.
func typeName(t parquet.Type) string {
	name := t.Kind().String()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		return name + " " + lt.String()
	}
	if ct := t.ConvertedType(); ct != nil {
		return name + " " + convertedNames[*ct]
	}
	return name
}

// convertedNames are the legacy converted types' names, as the format's
// specification writes them.
var convertedNames = map[deprecated.ConvertedType]string{
	deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.MapKeyValue: "MAP_KEY_VALUE", deprecated.List: "LIST",
	deprecated.Enum: "ENUM", deprecated.Decimal: "DECIMAL", deprecated.Date: "DATE", deprecated.TimeMillis: "TIME_MILLIS",
	deprecated.TimeMicros: "TIME_MICROS", deprecated.TimestampMillis: "TIMESTAMP_MILLIS", deprecated.TimestampMicros: "TIMESTAMP_MICROS",
	deprecated.Uint8: "UINT_8", deprecated.Uint16: "UINT_16", deprecated.Uint32: "UINT_32", deprecated.Uint64: "UINT_64",
	deprecated.Int8: "INT_8", deprecated.Int16: "INT_16", deprecated.Int32: "INT_32", deprecated.Int64: "INT_64",
	deprecated.Json: "JSON", deprecated.Bson: "BSON", deprecated.Interval: "INTERVAL",
}

// checkParquetType checks an import column's Parquet type: a top-level
// leaf, required or optional, of the physical and logical type its kind
// wants. Its error names the column, the type found and the type wanted.
func checkParquetType(f parquet.Field) (err error) {
	// parquet-go panics when asked the physical type of a leaf annotated
	// as a group type (a LIST or MAP on a primitive, which a damaged
	// schema can hold).
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("column %s: a type that is not a plain column's (%v)", f.Name(), p)
		}
	}()
	var col importColumn
	for _, c := range importColumns {
		if c.name == f.Name() {
			col = c
		}
	}
	var want string
	ok := false
	switch col.kind {
	case kindSeconds:
		want = "DOUBLE, with no annotation (seconds)"
	case kindInteger:
		want = "INT32 or INT64, plain or with an integer annotation"
	case kindName:
		want = "BYTE_ARRAY annotated STRING or ENUM"
	}
	switch {
	case !f.Leaf():
		return fmt.Errorf("column %s: a group of columns, want one column of %s", f.Name(), want)
	case f.Repeated():
		return fmt.Errorf("column %s: repeated (a list), want one value a row, of %s", f.Name(), want)
	}
	t := f.Type()
	lt := t.LogicalType()
	annotated := lt != nil && lt.Value != nil
	ct := t.ConvertedType()
	switch col.kind {
	case kindSeconds:
		ok = t.Kind() == parquet.Double && !annotated && ct == nil
	case kindInteger:
		switch t.Kind() {
		case parquet.Int32, parquet.Int64:
			if annotated {
				_, ok = lt.Value.(*format.IntType)
			} else {
				ok = ct == nil || integerConverted(*ct)
			}
		}
	case kindName:
		if t.Kind() == parquet.ByteArray {
			if annotated {
				switch lt.Value.(type) {
				case *format.StringType, *format.EnumType:
					ok = true
				}
			} else {
				ok = ct != nil && (*ct == deprecated.UTF8 || *ct == deprecated.Enum)
			}
		}
	}
	if !ok {
		return fmt.Errorf("column %s: type %s, want %s", f.Name(), typeName(t), want)
	}
	return nil
}

func integerConverted(ct deprecated.ConvertedType) bool {
	switch ct {
	case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64,
		deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
		return true
	}
	return false
}

// unsignedInt reports whether an integer column's values are unsigned.
func unsignedInt(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		it, ok := lt.Value.(*format.IntType)
		return ok && !it.IsSigned
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			return true
		}
	}
	return false
}

func (s *parquetSource) read(rows []importRow) (int, error) {
	n := int(min(int64(len(rows)), s.total-s.done))
	if n == 0 {
		return 0, nil
	}
	grow := func(b []float64) []float64 {
		if cap(b) < n {
			return make([]float64, n)
		}
		return b[:n]
	}
	s.arrivals = grow(s.arrivals)
	if err := s.arrival.Float64s(s.arrivals); err != nil {
		return 0, s.columnError(colArrival, err)
	}
	if s.slo != nil {
		s.slos = grow(s.slos)
		if err := s.slo.Float64s(s.slos); err != nil {
			return 0, s.columnError(colSLO, err)
		}
	}
	var batch func(i int) (int64, error)
	if s.batchKind == parquet.Int32 {
		if cap(s.batch32) < n {
			s.batch32 = make([]int32, n)
		}
		s.batch32 = s.batch32[:n]
		if err := s.batch.Int32s(s.batch32); err != nil {
			return 0, s.columnError(colBatch, err)
		}
		batch = func(i int) (int64, error) {
			if s.unsigned {
				return int64(uint32(s.batch32[i])), nil
			}
			return int64(s.batch32[i]), nil
		}
	} else {
		if cap(s.batch64) < n {
			s.batch64 = make([]int64, n)
		}
		s.batch64 = s.batch64[:n]
		if err := s.batch.Int64s(s.batch64); err != nil {
			return 0, s.columnError(colBatch, err)
		}
		batch = func(i int) (int64, error) {
			v := s.batch64[i]
			if s.unsigned && v < 0 {
				return 0, fmt.Errorf("row %d, column %s: want a whole number of samples in [1, %d], got %d",
					s.done+int64(i)+1, colBatch, MaxBatchSize, uint64(v))
			}
			return v, nil
		}
	}
	for k, c := range s.names {
		if cap(s.codes[k]) < n {
			s.codes[k] = make([]int32, n)
		}
		s.codes[k] = s.codes[k][:n]
		if c == nil {
			clear(s.codes[k]) // fp32, the default
			continue
		}
		col := nameColumns[k]
		bad, err := c.Codes(s.codes[k], func(b []byte) int32 { return s.ns.code(col, b) })
		if err != nil {
			return 0, s.columnError(col, err)
		}
		if bad >= 0 {
			return 0, fmt.Errorf("row %d, %w", s.done+int64(bad)+1, s.ns.bad(col, c.BadValue()))
		}
	}
	for i := range n {
		b, err := batch(i)
		if err != nil {
			return 0, err
		}
		rows[i] = importRow{
			arrival:   s.arrivals[i],
			model:     s.codes[0][i],
			batch:     b,
			class:     s.codes[1][i],
			precision: s.codes[2][i],
		}
		if s.slo != nil {
			rows[i].slo, rows[i].hasSLO = s.slos[i], true
		}
	}
	s.done += int64(n)
	return n, nil
}

// columnError words a column's read error: a null by its row, damage as
// such.
func (s *parquetSource) columnError(col string, err error) error {
	var ne *parquetio.NullError
	if errors.As(err, &ne) {
		return fmt.Errorf("row %d, column %s: null; every row needs a value (leave an optional column out to take its default)", ne.Row, col)
	}
	if errors.Is(err, parquetio.ErrCorrupt) {
		return fmt.Errorf("after row %d: not a readable Parquet file: %w", s.done, err)
	}
	return fmt.Errorf("after row %d: %w", s.done, err)
}

var _ jobSource = (*parquetSource)(nil)
var _ jobSource = (*csvSource)(nil)
