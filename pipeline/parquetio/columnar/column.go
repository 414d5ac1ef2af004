package columnar

import (
	"bytes"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// rowsPerWrite is how many rows parquet-go's GenericWriter hands its
// columns at a time; a page can end only between two such slices.
const rowsPerWrite = 64

// defLevels encodes an optional column's definition levels, as parquet-go
// does for a maximum level of 1.
var defLevels = rle.Encoding{BitWidth: 1}

// column is one leaf column: the page being filled, the row group's
// dictionary, and what the row group's chunk, page index and footer need.
type column struct {
	name     string
	path     []string
	kind     parquet.Kind
	typ      parquet.Type
	enc      encoding.Encoding // of the data pages
	dict     bool
	optional bool
	codec    compress.Codec // nil when uncompressed
	stats    bool           // statistics in each page's header
	bounds   bool           // min and max in the page index and chunk
	limit    int64          // a page ends once it holds this many bytes

	// The page being filled: values (or dictionary indexes) and, for an
	// optional column, one definition level per row; and scratch.
	*pageBuffers
	*encodeBuffers // the writer's, shared by its columns
	nbools         int
	rows           int // rows in the page
	given          int // values given since the last EndRows
	// The smallest and largest value of the page of an int32 dictionary
	// column, kept as they come: its bounds (math.MaxInt32 and MinInt32
	// while it has none).
	pageLo, pageHi int32

	// The row group's dictionary, in order of first use.
	dictI32  []int32
	mapI32   map[int32]int32
	smallI32 []int32 // by value from smallInt32Low: its index plus one
	dictF64  []float64
	mapF64   map[uint64]int32
	dictStr  []string
	mapStr   map[string]int32
	recent   [64]recentString // by the string's pointer and length

	// The row group's column chunk.
	pages    slabs // its data pages, written out after its dictionary page
	meta     format.ColumnMetaData
	indexer  parquet.ColumnIndexer
	offsets  []format.PageLocation
	numRows  int64
	defHist  []int64 // the chunk's definition level histogram
	pageHist []int64 // each page's, one after the other
	min, max parquet.Value

	// Scratch buffers.
	hdrEnc *thrift.Encoder // page headers, into hdrBuf
	hdrBuf bytes.Buffer
}

// recentString is a dictionary entry found by the pointer and length of a
// string the caller passed before, without hashing it: the caller's strings
// are mostly the same few strings over and over. An empty string (whose
// pointer may be nil or shared) is always looked up.
type recentString struct {
	ptr *byte
	n   int
	idx int32
}

// pageSize is what parquet-go's column buffer of the page reports as its
// size, which decides where the page ends.
func (c *column) pageSize() int64 {
	switch {
	case c.optional:
		// parquet-go's optional buffer: a 4-byte row index and a level per
		// row, and the values of the non-null rows.
		// (New allows only dictionary-encoded optional columns.)
		return int64(5*c.rows) + 4*int64(len(c.i32))
	case c.dict:
		return 4 * int64(len(c.i32))
	}
	switch c.kind {
	case parquet.Boolean:
		return int64(len(c.bools))
	case parquet.Int32:
		return 4 * int64(len(c.i32))
	}
	return 8 * int64(max(len(c.i64), len(c.f64)))
}

// endChunk ends one of parquet-go's 64-row writes: the page is written out
// if it has reached the limit.
func (c *column) endChunk() error {
	if c.pageSize() >= c.limit {
		return c.writePage()
	}
	return nil
}

// inChunks calls add with the bounds of each of parquet-go's 64-row
// slices of n rows, ending each slice as its writer does.
func (c *column) inChunks(n int, add func(i, j int)) error {
	for i := 0; i < n; i += rowsPerWrite {
		j := min(i+rowsPerWrite, n)
		add(i, j)
		c.rows += j - i
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
}

// values are n values of one type read where they lie: the first at p,
// each next size bytes on. A slice's values lie side by side; a Table's
// fields lie in its rows, which are read in place rather than gathered
// into a slice first.
type values struct {
	p    unsafe.Pointer
	size uintptr
}

// sliceValues are v's values.
func sliceValues[V any](v []V) values {
	var zero V
	return values{unsafe.Pointer(unsafe.SliceData(v)), unsafe.Sizeof(zero)}
}

// at points to value i.
func (v values) at(i int) unsafe.Pointer { return unsafe.Add(v.p, uintptr(i)*v.size) }

// copyValues copies len(dst) values starting at q.
//
// This loop and the others that read values one after another keep q
// where it is and step an offset: a pointer stepped past the last value
// would point beyond its allocation, which unsafe.Pointer's rules forbid
// (the garbage collector may take it for another object's; the race
// detector's checkptr stops on it).
func copyValues[V any](dst []V, q unsafe.Pointer, size uintptr) {
	var off uintptr
	for k := range dst {
		dst[k] = *(*V)(unsafe.Add(q, off))
		off += size
	}
}

// grow lengthens *s by n and returns the n new elements to fill: a loop
// that fills them keeps its slice in registers, where appending to a
// column's slice goes through memory each time.
func grow[V any](s *[]V, n int) []V {
	k := len(*s)
	*s = slices.Grow(*s, n)[:k+n]
	return (*s)[k:]
}

func (c *column) addInt64s(v values, n int) error {
	return c.inChunks(n, func(i, j int) { copyValues(grow(&c.i64, j-i), v.at(i), v.size) })
}

func (c *column) addFloat64s(v values, n int) error {
	return c.inChunks(n, func(i, j int) {
		if !c.dict {
			copyValues(grow(&c.f64, j-i), v.at(i), v.size)
			return
		}
		dst := grow(&c.i32, j-i)
		q, off := v.at(i), uintptr(0)
		// A value mostly repeats the one before: that one is checked
		// first, by its bits.
		lastBits, lastIdx := uint64(0), int32(-1)
		for k := range dst {
			x := *(*float64)(unsafe.Add(q, off))
			off += v.size
			b := math.Float64bits(x)
			if b == lastBits && lastIdx >= 0 {
				dst[k] = lastIdx
				continue
			}
			dst[k] = c.float64Index(x)
			lastBits, lastIdx = b, dst[k]
		}
	})
}

func (c *column) addInt32s(v values, n int) error {
	return c.inChunks(n, func(i, j int) {
		if !c.dict {
			copyValues(grow(&c.i32, j-i), v.at(i), v.size)
			return
		}
		dst := grow(&c.i32, j-i)
		small := c.smallInt32s()
		lo, hi := c.pageLo, c.pageHi
		q, off := v.at(i), uintptr(0)
		for k := range dst {
			x := *(*int32)(unsafe.Add(q, off))
			off += v.size
			lo, hi = min(lo, x), max(hi, x)
			// x-smallInt32Low wraps to a negative int32, and so to a
			// large uint32, only for x too large for the table.
			if u := uint32(x - smallInt32Low); u < uint32(len(small)) && small[u] != 0 {
				dst[k] = small[u] - 1
				continue
			}
			dst[k] = c.int32Index(x)
		}
		c.pageLo, c.pageHi = lo, hi
	})
}

func (c *column) addBools(v values, n int) error {
	return c.inChunks(n, func(i, j int) {
		var word uint64 // the slice's values, one bit each
		q, off := v.at(i), uintptr(0)
		for k := range j - i {
			// A bool is one byte, 0 or 1.
			word |= uint64(*(*uint8)(unsafe.Add(q, off))) << k
			off += v.size
		}
		c.bools, c.nbools = appendBits(c.bools, c.nbools, word, j-i)
	})
}

// appendBits appends the n low bits of word, n ≤ 64, to the m bits packed
// in bools, least significant bit first, and returns them.
func appendBits(bools []byte, m int, word uint64, n int) ([]byte, int) {
	for n > 0 {
		off := m % 8
		if off == 0 {
			bools = append(bools, 0)
		}
		take := min(8-off, n)
		// word holds no set bit from n on, and the byte drops those
		// shifted past 8.
		bools[len(bools)-1] |= byte(word << off)
		word >>= take
		n -= take
		m += take
	}
	return bools, m
}

// addStrings adds strings to a dictionary-encoded byte-array column.
// In an optional column the empty string is null, as it is in an optional
// string field of a struct parquet-go writes, and null rows are those
// parquet-go would write as null (see definedRows).
func (c *column) addStrings(v values, n int) error {
	return c.inChunks(n, func(i, j int) {
		if c.optional {
			c.addOptionalStrings(values{v.at(i), v.size}, j-i)
			return
		}
		dst := grow(&c.i32, j-i)
		q, off := v.at(i), uintptr(0)
		// A column's strings mostly repeat the one before: that one is
		// checked first, by its pointer and length.
		var last recentString
		for k := range dst {
			s := *(*string)(unsafe.Add(q, off))
			off += v.size
			if ptr := unsafe.StringData(s); ptr == last.ptr && len(s) == last.n && ptr != nil {
				dst[k] = last.idx
				continue
			}
			dst[k] = c.stringIndex(s)
			last = recentString{unsafe.StringData(s), len(s), dst[k]}
		}
	})
}

// addOptionalStrings adds n ≤ 64 strings of an optional column, one of
// parquet-go's slices of a write.
func (c *column) addOptionalStrings(v values, n int) {
	at := func(k int) string { return *(*string)(v.at(k)) }
	var nonEmpty uint64
	for k := range n {
		if at(k) != "" {
			nonEmpty |= 1 << k
		}
	}
	defined := definedRows(nonEmpty, n)
	for k := range n {
		if defined>>k&1 == 0 {
			c.levels = append(c.levels, 0)
			continue
		}
		c.levels = append(c.levels, 1)
		c.i32 = append(c.i32, c.stringIndex(at(k)))
	}
}

// definedRows returns which of n ≤ 64 rows parquet-go v0.32.0 writes as
// defined when nonEmpty marks those whose optional value is not the zero
// value. Its writeRowsFuncOfOptional splits the rows into runs of nulls
// and of values; where a run of nulls ends at bit y and the word shifted
// by y equals (1<<y)-1, it takes the rest of the word for values, so that
// some null rows are written as empty strings. The bytes follow from this
// and are kept; the loop below is its loop on one word.
func definedRows(nonEmpty uint64, n int) uint64 {
	var defined uint64
	mark := func(i, j int) {
		for k := i; k < j; k++ {
			defined |= 1 << k
		}
	}
	for i := 0; i < n; {
		x, y := 0, i
		if y != 0 {
			if b := nonEmpty >> y; b == 0 {
				x, y = 1, 0
			} else {
				y += bits.TrailingZeros64(b)
				goto nulls
			}
		}
		if x == 0 && nonEmpty == 0 {
			x = 1
		}
		if x == 0 {
			y = bits.TrailingZeros64(nonEmpty) % 64
		}
	nulls:
		if j := min(x*64+y, n); i < j {
			i = j
		}
		if y != 0 {
			if b := nonEmpty >> y; b == (1<<y)-1 {
				x, y = x+1, 0
			} else {
				y += bits.TrailingZeros64(^b)
				goto values
			}
		}
		if x == 0 && nonEmpty == ^uint64(0) {
			x = 1
		}
		if x == 0 {
			y = bits.TrailingZeros64(^nonEmpty) % 64
		}
	values:
		if j := min(x*64+y, n); i < j {
			mark(i, j)
			i = j
		}
	}
	return defined
}

// reset empties the chunk for the next row group.
func (c *column) reset() {
	c.dictI32, c.dictF64, c.dictStr = c.dictI32[:0], c.dictF64[:0], c.dictStr[:0]
	clear(c.mapI32)
	clear(c.smallI32)
	clear(c.mapF64)
	clear(c.mapStr)
	c.recent = [len(c.recent)]recentString{}
	c.pages.empty()
	c.indexer.Reset()
	c.offsets = c.offsets[:0]
	c.numRows = 0
	clear(c.defHist)
	c.pageHist = c.pageHist[:0]
	c.min, c.max = parquet.Value{}, parquet.Value{}
	c.meta.NumValues = 0
	c.meta.TotalUncompressedSize = 0
	c.meta.TotalCompressedSize = 0
	c.meta.DataPageOffset = 0
	c.meta.DictionaryPageOffset = 0
	c.meta.Statistics = format.Statistics{}
	c.meta.EncodingStats = nil
}
