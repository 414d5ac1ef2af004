package parquetio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// ColumnFile is a Parquet file opened to be read a column at a time, as
// typed values decoded straight from parquet-go's page buffers: no row is
// ever assembled as a Go struct, and strings are mapped to codes once per
// dictionary rather than once per row. parquet-go's row reader allocates
// for every string of every row; reading by column runs an order of
// magnitude faster (docs/benchmarks.md).
//
// Memory is bounded whatever the file's size: one decoded page per open
// column and parquet-go's read buffers.
type ColumnFile struct {
	f       *os.File
	pf      *parquet.File
	columns []*Column
}

// OpenColumns opens the Parquet file at path to be read by column. Its
// errors name the file; a file parquet-go cannot make sense of gives one
// wrapping ErrCorrupt, never a panic, nor sizes it states but does not
// hold (a footer, a page, a page's decompressed size). Close releases it.
func OpenColumns(path string) (cf *ColumnFile, err error) { return openColumns(path, false) }

// OpenForeign is OpenColumns for a file from outside the store (an
// import): it also decompresses every page once before any is read, so
// that a page whose few bytes decompress to more than its header says (a
// compression bomb) is refused as corrupt rather than decompressed.
func OpenForeign(path string) (*ColumnFile, error) { return openColumns(path, true) }

func openColumns(path string, deep bool) (cf *ColumnFile, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquetio: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquetio: read %s: %w: %v", path, ErrCorrupt, p)
		}
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("parquetio: %w", err)
	}
	if err := CheckFooter(f, st.Size()); err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	if err := checkPages(f, pf, st.Size(), deep); err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	return &ColumnFile{f: f, pf: pf}, nil
}

// NumRows is the row count the file's footer gives. A corrupt footer can
// claim any count; the columns then end early, with an error.
func (cf *ColumnFile) NumRows() int64 { return cf.pf.NumRows() }

// Column returns a cursor over the top-level leaf column name, which must
// be required (no nulls) and of physical type kind. Its errors name the
// column but not the file: the caller knows what to call the file. The
// column is closed with the file.
func (cf *ColumnFile) Column(name string, kind parquet.Kind) (*Column, error) {
	return cf.column(name, kind, false)
}

// NullableColumn is Column for a file written elsewhere (an import): the
// top-level leaf column name may be required or optional, as most writers
// mark every column, but a null is refused when a read reaches it, with a
// *NullError naming its row. A repeated column is refused.
func (cf *ColumnFile) NullableColumn(name string, kind parquet.Kind) (*Column, error) {
	return cf.column(name, kind, true)
}

// column opens the top-level leaf column name of physical type kind:
// required, or with nullable also optional (its nulls refused as read).
func (cf *ColumnFile) column(name string, kind parquet.Kind, nullable bool) (c *Column, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("column %s: %w: %v", name, ErrCorrupt, p)
		}
	}()
	pc := cf.pf.Root().Column(name)
	if pc == nil || !pc.Leaf() {
		return nil, fmt.Errorf("no column %s", name)
	}
	switch {
	case !nullable && (!pc.Required() || pc.Type().Kind() != kind):
		return nil, fmt.Errorf("column %s: want a required %s column, got %s", name, kind, pc)
	case nullable && (pc.Repeated() || pc.Type().Kind() != kind):
		return nil, fmt.Errorf("column %s: want a required or optional %s column, got %s", name, kind, pc)
	}
	c = &Column{name: name, kind: kind}
	for _, rg := range cf.pf.RowGroups() {
		c.chunks = append(c.chunks, rg.ColumnChunks()[pc.Index()])
	}
	if nullable {
		c.nullable, c.maxDef = true, byte(pc.MaxDefinitionLevel())
	}
	cf.columns = append(cf.columns, c)
	return c, nil
}

// Schema is the file's schema, for a caller that checks more of a
// column's type than its physical kind (its logical type, say).
func (cf *ColumnFile) Schema() *parquet.Schema { return cf.pf.Schema() }

// ErrNull is wrapped by the error of a read that meets a null in a
// NullableColumn.
var ErrNull = errors.New("null value")

// NullError is a null met in a NullableColumn: the column, and the row,
// counted from 1.
type NullError struct {
	Column string
	Row    int64
}

func (e *NullError) Error() string { return fmt.Sprintf("column %s: row %d is null", e.Column, e.Row) }

// Unwrap returns ErrNull.
func (e *NullError) Unwrap() error { return ErrNull }

// Close releases the columns' pages and closes the file.
func (cf *ColumnFile) Close() error {
	for _, c := range cf.columns {
		c.close()
	}
	cf.columns = nil
	return cf.f.Close()
}

// Column is a cursor over the values of one leaf column, from the
// first row on, across pages and row groups: a required column, or a
// NullableColumn that refuses its nulls. Every page is either
// dictionary-indexed (its data are int32 indexes into the column chunk's
// dictionary) or plain (its data are the values); parquet-go decodes both,
// whatever the encoding on disk, and each dictionary is decoded once.
//
// Each read method fills its whole destination or fails; its errors name
// the column, and a malformed page gives one wrapping ErrCorrupt rather
// than a panic. A read of the wrong type for the column is an error.
type Column struct {
	name string
	kind parquet.Kind
	// The column's chunk in each row group, read one at a time: pages
	// reads chunks[next-1], and is closed before the next one opens.
	// parquet-go's reader over a whole column (parquet.Column.Pages)
	// closes none of its row groups' readers until it is closed itself,
	// so each finished row group would keep its last page, its
	// dictionary and its read buffer until the file is closed: memory
	// that grows with the rows read (docs/benchmarks.md).
	chunks []parquet.ColumnChunk
	next   int
	pages  parquet.Pages
	page   parquet.Page
	data   encoding.Values
	dict   parquet.Dictionary
	off, n int
	// The current dictionary, decoded once per column chunk.
	decodedFor  parquet.Dictionary
	dictInt64   []int64
	dictFloat64 []float64
	dictInt32   []int32
	dictBool    []bool
	dictCodes   []int32
	badValue    string // the string behind the last negative code returned
	// nullable marks a NullableColumn, whose pages may hold nulls up to
	// definition level maxDef; before counts the rows of the pages before
	// the current one.
	nullable bool
	maxDef   byte
	before   int64
}

// errShort says a column has fewer values than the footer's row count.
var errShort = errors.New("column ends before the footer's row count")

// Name is the column's name.
func (c *Column) Name() string { return c.name }

// Int64s fills dst with the column's next values; the column must be INT64.
func (c *Column) Int64s(dst []int64) (err error) {
	defer c.recoverInto(&err)
	if err := c.want(parquet.Int64); err != nil {
		return err
	}
	return readValues(c, dst, &c.dictInt64, (*encoding.Values).Int64)
}

// Float64s fills dst with the column's next values; the column must be
// DOUBLE.
func (c *Column) Float64s(dst []float64) (err error) {
	defer c.recoverInto(&err)
	if err := c.want(parquet.Double); err != nil {
		return err
	}
	return readValues(c, dst, &c.dictFloat64, (*encoding.Values).Double)
}

// Int32s fills dst with the column's next values; the column must be INT32.
func (c *Column) Int32s(dst []int32) (err error) {
	defer c.recoverInto(&err)
	if err := c.want(parquet.Int32); err != nil {
		return err
	}
	return readValues(c, dst, &c.dictInt32, (*encoding.Values).Int32)
}

// Bools fills dst with the column's next values; the column must be
// BOOLEAN.
func (c *Column) Bools(dst []bool) (err error) {
	defer c.recoverInto(&err)
	if err := c.want(parquet.Boolean); err != nil {
		return err
	}
	for i := 0; i < len(dst); {
		k, err := c.span(len(dst) - i)
		if err != nil {
			return err
		}
		if c.dict != nil {
			if c.decodedFor != c.dict {
				v := c.dict.Page().Data()
				c.dictBool = unpackBools(v.Boolean(), int(c.dict.Len()))
				c.decodedFor = c.dict
			}
			idx, err := c.indexes(k, len(c.dictBool))
			if err != nil {
				return err
			}
			for j, x := range idx {
				dst[i+j] = c.dictBool[x]
			}
		} else {
			// Plain boolean pages are bit-packed, least significant bit first.
			bits := c.data.Boolean()
			if len(bits)*8 < c.off+k {
				return fmt.Errorf("column %s: %w: page holds %d bits for %d values", c.name, ErrCorrupt, len(bits)*8, c.n)
			}
			for j := range k {
				b := c.off + j
				dst[i+j] = bits[b>>3]>>(b&7)&1 != 0
			}
		}
		c.off += k
		i += k
	}
	return nil
}

func unpackBools(bits []byte, n int) []bool {
	out := make([]bool, min(n, len(bits)*8))
	for b := range out {
		out[b] = bits[b>>3]>>(b&7)&1 != 0
	}
	return out
}

// Codes maps the column's next len(dst) strings through lookup, called
// once per dictionary entry or, on plain pages, once per value; the column
// must be BYTE_ARRAY. lookup returns a negative code for a string it does
// not know. Codes returns the position in dst of the first such string
// (whose text BadValue then gives), or -1 when lookup knew every string.
func (c *Column) Codes(dst []int32, lookup func([]byte) int32) (bad int, err error) {
	defer c.recoverInto(&err)
	if err := c.want(parquet.ByteArray); err != nil {
		return -1, err
	}
	bad = -1
	for i := 0; i < len(dst); {
		k, err := c.span(len(dst) - i)
		if err != nil {
			return -1, err
		}
		if c.dict != nil {
			if c.decodedFor != c.dict {
				v := c.dict.Page().Data()
				data, offsets := v.ByteArray()
				c.dictCodes = make([]int32, max(len(offsets)-1, 0))
				for e := range c.dictCodes {
					c.dictCodes[e] = lookup(data[offsets[e]:offsets[e+1]])
				}
				c.decodedFor = c.dict
			}
			idx, err := c.indexes(k, len(c.dictCodes))
			if err != nil {
				return -1, err
			}
			for j, x := range idx {
				code := c.dictCodes[x]
				if code < 0 && bad < 0 {
					bad = i + j
					c.badValue = dictString(c.dict, x)
				}
				dst[i+j] = code
			}
		} else {
			data, offsets := c.data.ByteArray()
			for j := range k {
				s := data[offsets[c.off+j]:offsets[c.off+j+1]]
				code := lookup(s)
				if code < 0 && bad < 0 {
					bad = i + j
					c.badValue = string(s)
				}
				dst[i+j] = code
			}
		}
		c.off += k
		i += k
	}
	return bad, nil
}

// BadValue is the string behind the unknown code the last Codes call
// reported.
func (c *Column) BadValue() string { return c.badValue }

// want checks the column's physical type against the one a read decodes.
func (c *Column) want(kind parquet.Kind) error {
	if c.kind != kind {
		return fmt.Errorf("column %s: read as %s, but it holds %s", c.name, kind, c.kind)
	}
	return nil
}

// recoverInto turns a panic of parquet-go's on a malformed page into an
// error naming the column.
func (c *Column) recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("column %s: %w: %v", c.name, ErrCorrupt, p)
	}
}

// advance makes the next page current.
func (c *Column) advance() error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	var p parquet.Page
	for {
		if c.pages == nil {
			if c.next == len(c.chunks) {
				return fmt.Errorf("column %s: %w: %w", c.name, ErrCorrupt, errShort)
			}
			c.pages = c.chunks[c.next].Pages()
			c.next++
		}
		var err error
		p, err = c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			c.closePages()
			continue
		}
		if err != nil {
			return fmt.Errorf("column %s: %w", c.name, err)
		}
		break
	}
	c.before += int64(c.n)
	if p.NumNulls() > 0 {
		defer parquet.Release(p)
		if !c.nullable {
			return fmt.Errorf("column %s: %w: a required column holds nulls", c.name, ErrCorrupt)
		}
		first := int64(0)
		for i, l := range p.DefinitionLevels() {
			if l < c.maxDef {
				first = int64(i)
				break
			}
		}
		return &NullError{Column: c.name, Row: c.before + first + 1}
	}
	c.page, c.data, c.dict = p, p.Data(), p.Dictionary()
	c.off, c.n = 0, int(p.NumValues())
	return nil
}

func (c *Column) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.closePages()
	c.chunks = nil
}

// closePages closes the current row group's page reader, which hands its
// last page's buffers back to parquet-go's pools.
func (c *Column) closePages() {
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// span makes sure the current page has values left and returns how many
// of want it can give.
func (c *Column) span(want int) (int, error) {
	for c.off == c.n {
		if err := c.advance(); err != nil {
			return 0, err
		}
	}
	return min(want, c.n-c.off), nil
}

// indexes returns the next k dictionary indexes, checked against the
// dictionary's size.
func (c *Column) indexes(k, dictLen int) ([]int32, error) {
	idx := c.data.Int32()[c.off : c.off+k]
	for _, x := range idx {
		if uint32(x) >= uint32(dictLen) {
			return nil, fmt.Errorf("column %s: %w: dictionary index %d of %d", c.name, ErrCorrupt, x, dictLen)
		}
	}
	return idx, nil
}

// readValues fills dst with the column's next values, of the type that get
// extracts, page by page: through the dictionary (decoded once into *cache
// per dictionary) or straight from plain pages.
func readValues[T any](c *Column, dst []T, cache *[]T, get func(*encoding.Values) []T) error {
	for i := 0; i < len(dst); {
		k, err := c.span(len(dst) - i)
		if err != nil {
			return err
		}
		if c.dict != nil {
			if c.decodedFor != c.dict {
				v := c.dict.Page().Data()
				*cache, c.decodedFor = slices.Clone(get(&v)), c.dict
			}
			idx, err := c.indexes(k, len(*cache))
			if err != nil {
				return err
			}
			for j, x := range idx {
				dst[i+j] = (*cache)[x]
			}
		} else {
			vals := get(&c.data)
			if len(vals) < c.off+k {
				return fmt.Errorf("column %s: %w: page holds %d values, not %d", c.name, ErrCorrupt, len(vals), c.n)
			}
			copy(dst[i:i+k], vals[c.off:])
		}
		c.off += k
		i += k
	}
	return nil
}

func dictString(d parquet.Dictionary, i int32) string {
	v := d.Page().Data()
	data, offsets := v.ByteArray()
	return string(data[offsets[i]:offsets[i+1]])
}
