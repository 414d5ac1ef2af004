package columnar

import (
	"hash/crc32"
	"math"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

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
	// The page's body goes where the chunk keeps it: compressed straight
	// there, or copied.
	var body []byte
	if c.codec != nil {
		body = append(c.pages.reserve(len(c.defs)+compressBound(len(c.data))), c.defs...)
		packed, err := c.codec.Encode(body[len(body):], c.data)
		if err != nil {
			return err
		}
		if len(packed) > 0 && cap(body) > len(body) && &packed[0] == &body[:len(body)+1][len(body)] {
			body = body[:len(body)+len(packed)] // compressed in place
		} else {
			body = append(body, packed...)
		}
	} else {
		body = append(append(c.pages.reserve(uncompressed), c.defs...), c.data...)
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
	header := format.PageHeader{
		Type:                 format.DataPageV2,
		UncompressedPageSize: int32(uncompressed),
		CompressedPageSize:   int32(len(body)),
		CRC:                  int32(crc32.ChecksumIEEE(body)),
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
	c.pages.add(hdr, body)

	// parquet-go's recordPageStats.
	if !c.bounds {
		lo, hi, ok = parquet.Value{}, parquet.Value{}, false
	}
	c.indexer.IndexPage(numValues, numNulls, lo, hi)
	c.meta.NumValues += numValues
	c.meta.Statistics.NullCount += numNulls
	if ok {
		// A bound never set is null; a set one never is.
		if c.max.IsNull() || c.typ.Compare(hi, c.max) > 0 {
			c.max = hi
		}
		if c.min.IsNull() || c.typ.Compare(lo, c.min) < 0 {
			c.min = lo
		}
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
	c.pageLo, c.pageHi = math.MaxInt32, math.MinInt32
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
	if err := c.hdrEnc.Encode(h); err != nil {
		return nil, err
	}
	return c.hdrBuf.Bytes(), nil
}

// compressBound is room enough for n bytes compressed by zstd, which adds
// a frame header and three bytes per block of 128 KiB to what it cannot
// shrink. A page that needs more is copied (slabs.add), not lost.
func compressBound(n int) int { return n + n>>10 + 64 }
