package columnar

import (
	"hash/crc32"
	"math"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// stringIndex, int32Index and float64Index return a value's index in the
// row group's dictionary, adding the value if it is new: indexes are in
// order of first use, as parquet-go's dictionaries give them.
func (c *column) stringIndex(s string) int32 {
	p := unsafe.StringData(s)
	slot := &c.recent[(uintptr(unsafe.Pointer(p))>>3^uintptr(len(s)))%uintptr(len(c.recent))]
	if slot.ptr == p && slot.n == len(s) && p != nil {
		return slot.idx
	}
	return c.lookupString(slot, s)
}

// lookupString is stringIndex for a string not in its recent slot, which
// it then holds. It is kept out of line so that stringIndex's fast path is
// inlined into the loops that call it.
//
//go:noinline
func (c *column) lookupString(slot *recentString, s string) int32 {
	idx := lookup(c.mapStr, &c.dictStr, s, s)
	*slot = recentString{unsafe.StringData(s), len(s), idx}
	return idx
}

// smallInt32s are the values an int32 dictionary finds in a slice, not a
// map: lanes, batch sizes and counts of parts are small.
const smallInt32Low, smallInt32High = -8, 1024

// smallInt32s is the table of small values: by value from
// smallInt32Low, its index plus one, 0 for a value not yet seen.
func (c *column) smallInt32s() []int32 {
	if c.smallI32 == nil {
		c.smallI32 = make([]int32, smallInt32High-smallInt32Low)
	}
	return c.smallI32
}

func (c *column) int32Index(x int32) int32 {
	if x >= smallInt32Low && x < smallInt32High {
		slot := &c.smallInt32s()[x-smallInt32Low]
		if *slot == 0 {
			c.dictI32 = append(c.dictI32, x)
			*slot = int32(len(c.dictI32)) // the index plus one
		}
		return *slot - 1
	}
	return lookup(c.mapI32, &c.dictI32, x, x)
}

func (c *column) float64Index(x float64) int32 {
	return lookup(c.mapF64, &c.dictF64, math.Float64bits(x), x)
}

// lookup returns the index m holds for key, first appending v to dict
// under the next index if m holds none.
func lookup[K comparable, V any](m map[K]int32, dict *[]V, key K, v V) int32 {
	idx, ok := m[key]
	if !ok {
		idx = int32(len(*dict))
		*dict = append(*dict, v)
		m[key] = idx
	}
	return idx
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
