package columnar

import (
	"bytes"
	"hash/crc32"
	"math"
	"math/bits"
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
	// optional column, one definition level per row.
	i64    []int64
	f64    []float64
	i32    []int32
	bools  []byte // one bit per value, as parquet-go packs them
	nbools int
	levels []byte
	rows   int // rows in the page
	given  int // values given since the last EndRows

	// The row group's dictionary, in order of first use.
	dictI32  []int32
	mapI32   map[int32]int32
	smallI32 []int32 // by value from smallInt32Low: its index plus one
	dictF64  []float64
	mapF64   map[uint64]int32
	dictStr  []string
	mapStr   map[string]int32
	recent   [64]recentString // by the string's pointer and length
	used     []uint64         // scratch for usedIndexes
	usedIdx  []int32
	dictSize int64

	// The row group's column chunk.
	pages     slabs // its data pages, written out after its dictionary page
	meta      format.ColumnMetaData
	indexer   parquet.ColumnIndexer
	offsets   []format.PageLocation
	numRows   int64
	defHist   []int64 // the chunk's definition level histogram
	pageHist  []int64 // each page's, one after the other
	min, max  parquet.Value
	hasMinMax bool

	// Scratch buffers.
	defs, data, packed, hdr []byte
	enc2                    *thrift.Encoder
	hdrBuf                  bytes.Buffer
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
		return int64(5*c.rows) + c.valueBytes(len(c.i32))
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

func (c *column) valueBytes(n int) int64 {
	if c.dict {
		return 4 * int64(n)
	}
	panic("columnar: optional columns are dictionary-encoded")
}

// endChunk ends one of parquet-go's 64-row writes: the page is written out
// if it has reached the limit.
func (c *column) endChunk() error {
	if c.pageSize() >= c.limit {
		return c.writePage()
	}
	return nil
}

func (c *column) appendInt64s(v []int64) error {
	for len(v) > 0 {
		n := min(len(v), rowsPerWrite)
		c.i64 = append(c.i64, v[:n]...)
		c.rows += n
		v = v[n:]
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
}

func (c *column) appendFloat64s(v []float64) error {
	for len(v) > 0 {
		n := min(len(v), rowsPerWrite)
		if c.dict {
			for _, x := range v[:n] {
				c.i32 = append(c.i32, c.float64Index(x))
			}
		} else {
			c.f64 = append(c.f64, v[:n]...)
		}
		c.rows += n
		v = v[n:]
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
}

func (c *column) appendInt32s(v []int32) error {
	for len(v) > 0 {
		n := min(len(v), rowsPerWrite)
		if c.dict {
			for _, x := range v[:n] {
				c.i32 = append(c.i32, c.int32Index(x))
			}
		} else {
			c.i32 = append(c.i32, v[:n]...)
		}
		c.rows += n
		v = v[n:]
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
}

func (c *column) appendBools(v []bool) error {
	for len(v) > 0 {
		n := min(len(v), rowsPerWrite)
		for _, b := range v[:n] {
			if c.nbools%8 == 0 {
				c.bools = append(c.bools, 0)
			}
			if b {
				c.bools[c.nbools/8] |= 1 << (c.nbools % 8)
			}
			c.nbools++
		}
		c.rows += n
		v = v[n:]
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
}

// appendStrings adds strings to a dictionary-encoded byte-array column.
// In an optional column the empty string is null, as it is in an optional
// string field of a struct parquet-go writes, and null rows are those
// parquet-go would write as null (see definedRows).
func (c *column) appendStrings(v []string) error {
	for len(v) > 0 {
		n := min(len(v), rowsPerWrite)
		if c.optional {
			var nonEmpty uint64
			for k, s := range v[:n] {
				if s != "" {
					nonEmpty |= 1 << k
				}
			}
			defined := definedRows(nonEmpty, n)
			for k, s := range v[:n] {
				if defined>>k&1 == 0 {
					c.levels = append(c.levels, 0)
					continue
				}
				c.levels = append(c.levels, 1)
				c.i32 = append(c.i32, c.stringIndex(s))
			}
		} else {
			for _, s := range v[:n] {
				c.i32 = append(c.i32, c.stringIndex(s))
			}
		}
		c.rows += n
		v = v[n:]
		if err := c.endChunk(); err != nil {
			return err
		}
	}
	return nil
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

func (c *column) stringIndex(s string) int32 {
	p := unsafe.StringData(s)
	slot := &c.recent[(uintptr(unsafe.Pointer(p))>>3^uintptr(len(s)))%uintptr(len(c.recent))]
	if slot.ptr == p && slot.n == len(s) && p != nil {
		return slot.idx
	}
	idx, ok := c.mapStr[s]
	if !ok {
		idx = int32(len(c.dictStr))
		c.dictStr = append(c.dictStr, s)
		c.mapStr[s] = idx
		c.dictSize += int64(len(s))
	}
	*slot = recentString{p, len(s), idx}
	return idx
}

// smallInt32s are the values an int32 dictionary finds in a slice, not a
// map: lanes, batch sizes and counts of parts are small.
const smallInt32Low, smallInt32High = -8, 1024

func (c *column) int32Index(x int32) int32 {
	if x >= smallInt32Low && x < smallInt32High {
		if c.smallI32 == nil {
			c.smallI32 = make([]int32, smallInt32High-smallInt32Low)
		}
		slot := &c.smallI32[x-smallInt32Low]
		if *slot == 0 {
			c.dictI32 = append(c.dictI32, x)
			*slot = int32(len(c.dictI32)) // the index plus one
		}
		return *slot - 1
	}
	idx, ok := c.mapI32[x]
	if !ok {
		idx = int32(len(c.dictI32))
		c.dictI32 = append(c.dictI32, x)
		c.mapI32[x] = idx
	}
	return idx
}

func (c *column) float64Index(x float64) int32 {
	key := math.Float64bits(x)
	idx, ok := c.mapF64[key]
	if !ok {
		idx = int32(len(c.dictF64))
		c.dictF64 = append(c.dictF64, x)
		c.mapF64[key] = idx
	}
	return idx
}

// pageBounds returns the page's smallest and largest values as parquet-go
// finds them, and false for a page without values.
func (c *column) pageBounds() (lo, hi parquet.Value, ok bool) {
	if c.dict {
		if len(c.i32) == 0 {
			return lo, hi, false
		}
		switch c.kind {
		case parquet.Int32:
			first := true
			var a, b int32
			for _, i := range c.usedIndexes() {
				x := c.dictI32[i]
				if first || x < a {
					a = x
				}
				if first || x > b {
					b = x
				}
				first = false
			}
			return parquet.Int32Value(a), parquet.Int32Value(b), true
		case parquet.Double:
			// In page order: which of two equal values (0 and -0) is
			// kept depends on it.
			return doubleBounds(c.i32, func(i int32) float64 { return c.dictF64[i] })
		default:
			first := true
			var a, b string
			for _, i := range c.usedIndexes() {
				s := c.dictStr[i]
				if first || s < a {
					a = s
				}
				if first || s > b {
					b = s
				}
				first = false
			}
			return parquet.ByteArrayValue([]byte(a)), parquet.ByteArrayValue([]byte(b)), true
		}
	}
	switch c.kind {
	case parquet.Boolean:
		if c.nbools == 0 {
			return lo, hi, false
		}
		full, rest := c.nbools/8, c.nbools%8
		hasTrue, allTrue := false, true
		for _, x := range c.bools[:full] {
			hasTrue = hasTrue || x != 0
			allTrue = allTrue && x == 0xff
		}
		if rest > 0 {
			mask := byte(1)<<rest - 1
			x := c.bools[full] & mask
			hasTrue = hasTrue || x != 0
			allTrue = allTrue && x == mask
		}
		return parquet.BooleanValue(allTrue), parquet.BooleanValue(hasTrue), true
	case parquet.Int32:
		if len(c.i32) == 0 {
			return lo, hi, false
		}
		a, b := minMax(c.i32)
		return parquet.Int32Value(a), parquet.Int32Value(b), true
	case parquet.Int64:
		if len(c.i64) == 0 {
			return lo, hi, false
		}
		a, b := minMax(c.i64)
		return parquet.Int64Value(a), parquet.Int64Value(b), true
	default:
		if len(c.f64) == 0 {
			return lo, hi, false
		}
		return doubleBoundsOf(c.f64)
	}
}

// usedIndexes returns the dictionary indexes the page holds, each once.
func (c *column) usedIndexes() []int32 {
	words := (c.dictLen() + 63) / 64
	if cap(c.used) < words {
		c.used = make([]uint64, words)
	}
	used := c.used[:words]
	clear(used)
	for _, i := range c.i32 {
		used[i/64] |= 1 << (i % 64)
	}
	c.usedIdx = c.usedIdx[:0]
	for w, bitsSet := range used {
		for bitsSet != 0 {
			b := bits.TrailingZeros64(bitsSet)
			c.usedIdx = append(c.usedIdx, int32(w*64+b))
			bitsSet &= bitsSet - 1
		}
	}
	return c.usedIdx
}

func (c *column) dictLen() int {
	return max(len(c.dictI32), len(c.dictF64), len(c.dictStr))
}

func minMax[V int32 | int64](v []V) (lo, hi V) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// doubleBoundsOf is parquet-go's doublePage.Bounds: NaNs are skipped unless
// every value is one, and of equal values (0 and -0) the first is kept.
func doubleBoundsOf(data []float64) (lo, hi parquet.Value, ok bool) {
	i := 0
	for i < len(data) && math.IsNaN(data[i]) {
		i++
	}
	if i == len(data) {
		return parquet.DoubleValue(data[0]), parquet.DoubleValue(data[0]), true
	}
	a, b := data[i], data[i]
	for _, v := range data[i+1:] {
		if math.IsNaN(v) {
			continue
		}
		if v < a {
			a = v
		}
		if v > b {
			b = v
		}
	}
	return parquet.DoubleValue(a), parquet.DoubleValue(b), true
}

func doubleBounds(idx []int32, at func(int32) float64) (lo, hi parquet.Value, ok bool) {
	vs := make([]float64, len(idx))
	for k, i := range idx {
		vs[k] = at(i)
	}
	return doubleBoundsOf(vs)
}

// slabs holds a chunk's pages in buffers that double in size, from
// 64 KiB to 1 MiB, so that a chunk of many megabytes is not copied as it
// grows, and a column of few bytes holds little memory. A row group's
// buffers are kept for the next.
type slabs struct {
	bufs [][]byte // bufs[:used+1] hold pages, the last being filled
	used int
}

const firstSlab, largestSlab = 64 << 10, 1 << 20

// append copies the concatenation of parts to the end.
func (s *slabs) append(parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if len(s.bufs) == 0 {
		s.bufs = append(s.bufs, make([]byte, 0, max(firstSlab, n)))
	}
	if cur := s.bufs[s.used]; len(cur)+n > cap(cur) {
		s.used++
		if s.used == len(s.bufs) || cap(s.bufs[s.used]) < n {
			size := max(n, min(2*cap(cur), largestSlab))
			if s.used == len(s.bufs) {
				s.bufs = append(s.bufs, nil)
			}
			s.bufs[s.used] = make([]byte, 0, size)
		}
	}
	cur := s.bufs[s.used]
	for _, p := range parts {
		cur = append(cur, p...)
	}
	s.bufs[s.used] = cur
}

// writeTo writes the pages in order.
func (s *slabs) writeTo(write func([]byte) error) error {
	for _, b := range s.bufs[:min(s.used+1, len(s.bufs))] {
		if err := write(b); err != nil {
			return err
		}
	}
	return nil
}

// release empties s, keeping its buffers.
func (s *slabs) release() {
	for i := range s.bufs {
		s.bufs[i] = s.bufs[i][:0]
	}
	s.used = 0
}

// encodeData encodes the page's values (or indexes) into c.data.
func (c *column) encodeData() (err error) {
	data := c.data[:0]
	switch {
	case c.dict:
		data, err = c.enc.EncodeInt32(data, c.i32)
	case c.kind == parquet.Boolean:
		data, err = c.enc.EncodeBoolean(data, c.bools)
	case c.kind == parquet.Int32:
		data, err = c.enc.EncodeInt32(data, c.i32)
	case c.kind == parquet.Int64:
		data, err = c.enc.EncodeInt64(data, c.i64)
	default:
		data, err = c.enc.EncodeDouble(data, c.f64)
	}
	c.data = data
	return err
}

// writePage writes the page being filled to the chunk's pages, as
// parquet-go's ColumnWriter.writeDataPage does, and empties it.
func (c *column) writePage() error {
	numValues := int64(c.rows)
	if numValues == 0 {
		return nil
	}
	numNulls := int64(0)
	c.defs = c.defs[:0]
	if c.optional {
		numNulls = numValues - int64(len(c.i32))
		var err error
		if c.defs, err = defLevels.EncodeLevels(c.defs, c.levels); err != nil {
			return err
		}
	}
	if err := c.encodeData(); err != nil {
		return err
	}
	uncompressed := len(c.defs) + len(c.data)
	if c.codec != nil {
		var err error
		if c.packed, err = c.codec.Encode(c.packed[:0], c.data); err != nil {
			return err
		}
		c.data, c.packed = c.packed, c.data
	}
	var lo, hi parquet.Value
	var ok bool
	if c.stats || c.bounds {
		lo, hi, ok = c.pageBounds()
	}
	var stats format.Statistics
	if c.stats {
		stats = format.Statistics{Min: lo.Bytes(), Max: hi.Bytes(), NullCount: numNulls, MinValue: lo.Bytes(), MaxValue: hi.Bytes()}
	}
	crc := crc32.Update(crc32.Update(0, crc32.IEEETable, c.defs), crc32.IEEETable, c.data)
	header := format.PageHeader{
		Type:                 format.DataPageV2,
		UncompressedPageSize: int32(uncompressed),
		CompressedPageSize:   int32(len(c.defs) + len(c.data)),
		CRC:                  int32(crc),
		DataPageHeaderV2: thrift.New(format.DataPageHeaderV2{
			NumValues:                  int32(numValues),
			NumNulls:                   int32(numNulls),
			NumRows:                    int32(numValues),
			Encoding:                   c.enc.Encoding(),
			DefinitionLevelsByteLength: int32(len(c.defs)),
			IsCompressed:               thrift.New(c.codec != nil),
			Statistics:                 stats,
		}),
	}
	hdr, err := c.encodeHeader(&header)
	if err != nil {
		return err
	}
	c.pages.append(hdr, c.defs, c.data)

	// parquet-go's recordPageStats.
	if !c.bounds {
		lo, hi, ok = parquet.Value{}, parquet.Value{}, false
	}
	c.indexer.IndexPage(numValues, numNulls, lo, hi)
	c.meta.NumValues += numValues
	c.meta.Statistics.NullCount += numNulls
	if ok {
		if !c.hasMinMax || c.typ.Compare(hi, c.max) > 0 {
			c.max = hi
		}
		if !c.hasMinMax || c.typ.Compare(lo, c.min) < 0 {
			c.min = lo
		}
		c.hasMinMax = true
	}
	c.offsets = append(c.offsets, format.PageLocation{
		Offset:             c.meta.TotalCompressedSize,
		CompressedPageSize: int32(len(hdr)) + header.CompressedPageSize,
		FirstRowIndex:      c.numRows,
	})
	c.numRows += numValues
	if c.optional {
		c.pageHist = append(c.pageHist, 0, 0)
		p := c.pageHist[len(c.pageHist)-2:]
		for _, l := range c.levels {
			c.defHist[l]++
			p[l]++
		}
	}
	c.recordSizes(&header, len(hdr), format.DataPageV2, c.enc.Encoding())

	c.i64, c.f64, c.i32, c.bools, c.levels = c.i64[:0], c.f64[:0], c.i32[:0], c.bools[:0], c.levels[:0]
	c.nbools, c.rows = 0, 0
	return nil
}

// recordSizes adds a page's sizes and encoding to the chunk's metadata.
func (c *column) recordSizes(h *format.PageHeader, hdrLen int, typ format.PageType, enc format.Encoding) {
	c.meta.TotalUncompressedSize += int64(hdrLen) + int64(h.UncompressedPageSize)
	c.meta.TotalCompressedSize += int64(hdrLen) + int64(h.CompressedPageSize)
	for i := range c.meta.EncodingStats {
		if s := &c.meta.EncodingStats[i]; s.PageType == typ && s.Encoding == enc {
			s.Count++
			return
		}
	}
	c.meta.EncodingStats = append(c.meta.EncodingStats, format.PageEncodingStats{PageType: typ, Encoding: enc, Count: 1})
}

func (c *column) encodeHeader(h *format.PageHeader) ([]byte, error) {
	c.hdrBuf.Reset()
	if err := c.enc2.Encode(h); err != nil {
		return nil, err
	}
	return c.hdrBuf.Bytes(), nil
}

// dictionaryPage encodes the row group's dictionary, plain, as
// parquet-go's writeDictionaryPage does, and records it in the chunk.
func (c *column) dictionaryPage() ([]byte, []byte, error) {
	var data []byte
	var err error
	var n int
	switch c.kind {
	case parquet.Int32:
		data, err = parquet.Plain.EncodeInt32(c.data[:0], c.dictI32)
		n = len(c.dictI32)
	case parquet.Double:
		data, err = parquet.Plain.EncodeDouble(c.data[:0], c.dictF64)
		n = len(c.dictF64)
	default:
		var values []byte
		offsets := make([]uint32, 1, len(c.dictStr)+1)
		for _, s := range c.dictStr {
			values = append(values, s...)
			offsets = append(offsets, uint32(len(values)))
		}
		data, err = parquet.Plain.EncodeByteArray(c.data[:0], values, offsets)
		n = len(c.dictStr)
	}
	if err != nil {
		return nil, nil, err
	}
	c.data = data
	uncompressed := len(data)
	if c.codec != nil {
		if c.packed, err = c.codec.Encode(c.packed[:0], c.data); err != nil {
			return nil, nil, err
		}
		c.data, c.packed = c.packed, c.data
	}
	header := format.PageHeader{
		Type:                 format.DictionaryPage,
		UncompressedPageSize: int32(uncompressed),
		CompressedPageSize:   int32(len(c.data)),
		CRC:                  int32(crc32.ChecksumIEEE(c.data)),
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{
			NumValues: int32(n),
			Encoding:  format.Plain,
		}),
	}
	hdr, err := c.encodeHeader(&header)
	if err != nil {
		return nil, nil, err
	}
	c.recordSizes(&header, len(hdr), format.DictionaryPage, format.Plain)
	return hdr, c.data, nil
}

// reset empties the chunk for the next row group.
func (c *column) reset() {
	c.dictI32, c.dictF64, c.dictStr = c.dictI32[:0], c.dictF64[:0], c.dictStr[:0]
	clear(c.mapI32)
	clear(c.smallI32)
	clear(c.mapF64)
	clear(c.mapStr)
	c.recent, c.dictSize = [len(c.recent)]recentString{}, 0
	c.pages.release()
	c.indexer.Reset()
	c.offsets = c.offsets[:0]
	c.numRows = 0
	clear(c.defHist)
	c.pageHist = c.pageHist[:0]
	c.hasMinMax = false
	c.min, c.max = parquet.Value{}, parquet.Value{}
	c.meta.NumValues = 0
	c.meta.TotalUncompressedSize = 0
	c.meta.TotalCompressedSize = 0
	c.meta.DataPageOffset = 0
	c.meta.DictionaryPageOffset = 0
	c.meta.Statistics = format.Statistics{}
	c.meta.EncodingStats = nil
}
