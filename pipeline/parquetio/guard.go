package parquetio

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// parquet-go trusts the sizes a file states: it allocates a footer, a page
// and a page header's strings at the lengths they claim before reading
// them, so a few flipped bytes of a damaged or hostile file cost gigabytes
// of memory before any error. CheckFooter and checkPages read those sizes
// first, cheaply, and refuse a file whose sizes do not fit in it.

// MaxPageBytes bounds a page's uncompressed size: parquet-go allocates it
// whole to decompress the page. Writers cut pages at a megabyte or so
// (this package's at PageBufferSize).
const MaxPageBytes = 256 << 20

// MaxPageValues bounds the values of one page: parquet-go decodes a page
// whole, and a run-length encoded page can state any count in a few
// bytes. Writers cut pages at thousands to a million values.
const MaxPageValues = 1 << 27

// CheckFooter checks a Parquet file's trailer: the magic number, and a
// footer length that fits in the file. Every reader here calls it before
// parquet.OpenFile, which allocates whatever footer length the file claims.
func CheckFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%w: %d bytes, too short for a Parquet file", ErrCorrupt, size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return fmt.Errorf("%w: no Parquet magic number at its end", ErrCorrupt)
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("%w: its footer claims %d bytes of a %d-byte file", ErrCorrupt, n, size)
	}
	return nil
}

// CheckForeignPages is checkPages with deep on, for a reader of a file
// from outside the store (an import) that opens it with parquet.OpenFile
// itself; call it after CheckFooter and before reading a page.
func CheckForeignPages(r io.ReaderAt, pf *parquet.File, size int64) error {
	return checkPages(r, pf, size, true)
}

// checkPages walks the page headers of every column chunk of pf, read from
// r (size bytes), before parquet-go reads a page: each chunk must lie in
// the file before its footer, each header must decode from the bytes of
// its chunk, and each page must fit in the rest of its chunk, with an
// uncompressed size of at most MaxPageBytes. A page must also decompress
// to no more than that size (checkCompressed): for SNAPPY the size its
// header states is checked, and an LZ4_RAW page is decompressed, since
// parquet-go's decoder doubles its buffer forever on a damaged one; with
// deep, ZSTD, GZIP and BROTLI pages are decompressed too, within the size,
// for a file from outside the store, whose few bytes could claim
// gigabytes. Otherwise it reads the headers only, a few hundred bytes each.
func checkPages(r io.ReaderAt, pf *parquet.File, size int64, deep bool) error {
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	dataEnd := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4]))
	proto := &thrift.CompactProtocol{}
	for g, rg := range pf.Metadata().RowGroups {
		for c, cc := range rg.Columns {
			md := &cc.MetaData
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			end := start + md.TotalCompressedSize
			if start < 4 || md.TotalCompressedSize < 0 || end > dataEnd || end < start {
				return fmt.Errorf("%w: row group %d, column %d claims bytes %d to %d of a file whose data end at %d",
					ErrCorrupt, g, c, start, end, dataEnd)
			}
			for pos := start; pos < end; {
				n, h, err := readPageHeader(r, proto, pos, end)
				if err != nil {
					return fmt.Errorf("%w: row group %d, column %d: page header at byte %d: %v", ErrCorrupt, g, c, pos, err)
				}
				body := int64(h.CompressedPageSize)
				switch {
				case body < 0 || pos+n+body > end:
					return fmt.Errorf("%w: row group %d, column %d: the page at byte %d claims %d bytes, past its column chunk's end at %d",
						ErrCorrupt, g, c, pos, body, end)
				case h.UncompressedPageSize < 0 || h.UncompressedPageSize > MaxPageBytes:
					return fmt.Errorf("%w: row group %d, column %d: the page at byte %d claims %d bytes uncompressed, more than %d",
						ErrCorrupt, g, c, pos, h.UncompressedPageSize, MaxPageBytes)
				}
				if v := pageValues(h); v < 0 || v > min(md.NumValues, MaxPageValues) && v > 0 {
					return fmt.Errorf("%w: row group %d, column %d: the page at byte %d claims %d values, its column chunk %d (at most %d a page)",
						ErrCorrupt, g, c, pos, v, md.NumValues, MaxPageValues)
				}
				if err := checkCompressed(r, md.Codec, h, pos+n, deep); err != nil {
					return fmt.Errorf("%w: row group %d, column %d: the page at byte %d: %v", ErrCorrupt, g, c, pos, err)
				}
				pos += n + body
			}
		}
	}
	return nil
}

// readPageHeader decodes the page header at pos, which must lie before
// end: first from a few hundred bytes, then from more when it needs them
// (statistics of long strings), never from past end. It returns the
// header's length.
func readPageHeader(r io.ReaderAt, proto thrift.Protocol, pos, end int64) (int64, *format.PageHeader, error) {
	for want := int64(256); ; want *= 16 {
		buf := make([]byte, min(want, end-pos))
		if _, err := r.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		h := new(format.PageHeader)
		br := proto.NewReaderFromBytes(buf)
		err := thrift.NewDecoder(br).Decode(h)
		if err == nil {
			return int64(br.BytesRead()), h, nil
		}
		more := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
		if !more || int64(len(buf)) == end-pos || want >= MaxPageBytes {
			return 0, nil, err
		}
	}
}

// checkCompressed checks that the page h, whose body starts at off,
// decompresses with codec to no more than its stated uncompressed size
// (see checkPages for which codecs it decompresses).
func checkCompressed(r io.ReaderAt, codec format.CompressionCodec, h *format.PageHeader, off int64, deep bool) error {
	body, want := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if v2 := h.DataPageHeaderV2; v2.Valid {
		// The levels come first, never compressed.
		levels := int64(v2.V.RepetitionLevelsByteLength) + int64(v2.V.DefinitionLevelsByteLength)
		if levels < 0 || levels > body || levels > want {
			return fmt.Errorf("its levels claim %d of its %d bytes", levels, body)
		}
		if v2.V.IsCompressed.Valid && !v2.V.IsCompressed.V {
			return nil
		}
		off, body, want = off+levels, body-levels, want-levels
	}
	read := func(n int64) ([]byte, error) {
		b := make([]byte, n)
		if _, err := r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return b, nil
	}
	switch codec {
	case format.Uncompressed:
		return nil
	case format.Snappy:
		src, err := read(min(body, binary.MaxVarintLen64))
		if err != nil {
			return err
		}
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return fmt.Errorf("snappy: %v", err)
		}
		if int64(n) > want {
			return fmt.Errorf("snappy: decompresses to %d bytes, its header says %d", n, want)
		}
		return nil
	case format.Lz4Raw:
		src, err := read(body)
		if err != nil {
			return err
		}
		if _, err := lz4.UncompressBlock(src, make([]byte, want)); err != nil {
			return fmt.Errorf("lz4: does not decompress to its %d bytes: %v", want, err)
		}
		return nil
	}
	if !deep {
		return nil
	}
	src, err := read(body)
	if err != nil {
		return err
	}
	var dec io.Reader
	switch codec {
	case format.Zstd:
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(want, 1<<20))))
		if err != nil {
			return fmt.Errorf("zstd: %v", err)
		}
		defer d.Close()
		dec = d
	case format.Gzip:
		z, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		dec = z
	case format.Brotli:
		dec = brotli.NewReader(bytes.NewReader(src))
	default:
		return nil // parquet-go refuses the codec itself
	}
	n, err := io.Copy(io.Discard, io.LimitReader(dec, want+1))
	switch {
	case err != nil:
		return fmt.Errorf("%v: %v", codec, err)
	case n > want:
		return fmt.Errorf("%v: decompresses to more than the %d bytes its header says", codec, want)
	}
	return nil
}

// pageValues is the count of values a page header states (for a
// dictionary page, the dictionary's entries).
func pageValues(h *format.PageHeader) int64 {
	switch {
	case h.DataPageHeader.Valid:
		return int64(h.DataPageHeader.V.NumValues)
	case h.DataPageHeaderV2.Valid:
		return int64(h.DataPageHeaderV2.V.NumValues)
	case h.DictionaryPageHeader.Valid:
		return int64(h.DictionaryPageHeader.V.NumValues)
	}
	return 0
}
