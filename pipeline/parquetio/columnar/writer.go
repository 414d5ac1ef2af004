package columnar

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Writer writes one Parquet file. Give every column the same number of
// rows with its typed method (Int64s, Float64s, Int32s, Bools, Strings),
// then call EndRows with that number; Close writes the footer. The row
// counts of the EndRows calls are the slices of rows a GenericWriter's
// Write calls would be given: pages end where its would.
//
// A Writer is not safe for concurrent use. After an error every method
// returns it again.
type Writer struct {
	out       *bufio.Writer
	offset    int64
	cols      []*column
	groupRows int64 // rows in the current row group
	maxRows   int64
	footer    format.FileMetaData // schema, metadata, created-by and column orders
	colIdx    [][]format.ColumnIndex
	offIdx    [][]format.OffsetIndex
	encoding  *encodeBuffers // shared by the columns
	err       error
}

// New returns a Writer of schema's rows to out, with parquet-go's writer
// options. It refuses a schema or option this package does not write as
// parquet-go would.
func New(out io.Writer, schema *parquet.Schema, options ...parquet.WriterOption) (*Writer, error) {
	cfg, err := parquet.NewWriterConfig(options...)
	if err != nil {
		return nil, fmt.Errorf("columnar: %w", err)
	}
	switch {
	case cfg.DataPageVersion != 2:
		return nil, errors.New("columnar: only data pages of version 2 are written")
	case len(cfg.BloomFilters) > 0:
		return nil, errors.New("columnar: bloom filters are not written")
	case len(cfg.Sorting.SortingColumns) > 0:
		return nil, errors.New("columnar: sorting columns are not written")
	case cfg.Encryption != nil:
		return nil, errors.New("columnar: encryption is not written")
	case len(cfg.Encodings) > 0:
		return nil, errors.New("columnar: default encodings by kind are not supported; tag the columns")
	case cfg.DeprecatedDataPageStatistics:
		return nil, errors.New("columnar: deprecated chunk statistics are not written")
	case cfg.DictionaryMaxBytes > 0:
		return nil, errors.New("columnar: a dictionary size limit is not supported")
	}
	footer, err := emptyFooter(schema, options)
	if err != nil {
		return nil, err
	}
	w := &Writer{out: bufio.NewWriterSize(out, max(cfg.WriteBufferSize, 4096)), maxRows: cfg.MaxRowsPerRowGroup, footer: footer}
	limit := int64(int32(float64(cfg.PageBufferSize) * 0.98))
	for _, path := range schema.Columns() {
		leaf, _ := schema.Lookup(path...)
		c, err := newColumn(path, leaf, cfg, limit)
		if err != nil {
			return nil, err
		}
		w.cols = append(w.cols, c)
	}
	w.encoding = newEncodeBuffers()
	for _, c := range w.cols {
		c.pageBuffers, c.encodeBuffers = newPageBuffers(), w.encoding
	}
	return w, nil
}

// newColumn describes the leaf at path (Lookup's LeafColumn.Path holds only
// its last name).
func newColumn(path []string, leaf parquet.LeafColumn, cfg *parquet.WriterConfig, limit int64) (*column, error) {
	name := strings.Join(path, ".")
	node := leaf.Node
	c := &column{name: name, path: path, typ: node.Type(), kind: node.Type().Kind(), limit: limit}
	switch {
	case leaf.MaxRepetitionLevel > 0 || len(path) > 1:
		return nil, fmt.Errorf("columnar: column %s: only a flat schema is written", name)
	case leaf.MaxDefinitionLevel > 1:
		return nil, fmt.Errorf("columnar: column %s: only one definition level is written", name)
	}
	c.optional = leaf.MaxDefinitionLevel == 1
	switch c.kind {
	case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Double, parquet.ByteArray:
	default:
		return nil, fmt.Errorf("columnar: column %s: %s values are not written", name, c.kind)
	}
	c.enc = node.Encoding()
	if c.enc == nil {
		c.enc = &parquet.Plain
	}
	switch c.enc.Encoding() {
	case format.RLEDictionary, format.PlainDictionary:
		c.dict, c.enc = true, &parquet.RLEDictionary
	case format.Plain, format.DeltaBinaryPacked, format.ByteStreamSplit:
	default:
		return nil, fmt.Errorf("columnar: column %s: encoding %s is not written", name, c.enc)
	}
	switch {
	case c.kind == parquet.ByteArray && !c.dict:
		return nil, fmt.Errorf("columnar: column %s: only dictionary-encoded strings are written", name)
	case c.optional && !(c.dict && c.kind == parquet.ByteArray):
		return nil, fmt.Errorf("columnar: column %s: only optional dictionary-encoded strings are written", name)
	case c.dict && c.kind != parquet.Int32 && c.kind != parquet.Double && c.kind != parquet.ByteArray:
		return nil, fmt.Errorf("columnar: column %s: dictionaries of %s values are not written", name, c.kind)
	}
	codec := node.Compression()
	if codec == nil {
		codec = cfg.Compression
	}
	if codec != nil && codec.CompressionCodec() != format.Uncompressed {
		c.codec = codec
	}
	skipped := func(list [][]string) bool {
		return slices.ContainsFunc(list, func(p []string) bool { return slices.Equal(p, path) })
	}
	c.stats = cfg.DataPageStatistics && !skipped(cfg.SkipPageStatistics)
	c.bounds = !skipped(cfg.SkipPageBounds)
	c.indexer = c.typ.NewColumnIndexer(cfg.ColumnIndexSizeLimit(path))
	c.mapI32, c.mapF64, c.mapStr = map[int32]int32{}, map[uint64]int32{}, map[string]int32{}
	if c.optional {
		c.defHist = make([]int64, 2)
	}
	// parquet-go's ColumnWriter lists the chunk's encodings once, sorted.
	var encs []format.Encoding
	if c.optional {
		encs = append(encs, format.RLE)
	}
	if c.dict {
		encs = append(encs, format.Plain)
	}
	if !slices.Contains(encs, c.enc.Encoding()) {
		encs = append(encs, c.enc.Encoding())
	}
	slices.Sort(encs)
	codecID := format.Uncompressed
	if c.codec != nil {
		codecID = c.codec.CompressionCodec()
	}
	c.meta = format.ColumnMetaData{
		Type:         format.Type(c.kind),
		Encoding:     encs,
		PathInSchema: path,
		Codec:        codecID,
	}
	c.hdrEnc = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&c.hdrBuf))
	c.pageLo, c.pageHi = math.MaxInt32, math.MinInt32 // no values yet
	return c, nil
}

// emptyFooter has parquet-go write a file of schema with no rows and
// returns its footer: the schema elements, key-value metadata, created-by
// and column orders it would write.
func emptyFooter(schema *parquet.Schema, options []parquet.WriterOption) (format.FileMetaData, error) {
	var md format.FileMetaData
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, append([]parquet.WriterOption{schema}, options...)...)
	if err := w.Close(); err != nil {
		return md, fmt.Errorf("columnar: %w", err)
	}
	b := buf.Bytes()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], &md); err != nil {
		return md, fmt.Errorf("columnar: %w", err)
	}
	return md, nil
}

// column returns column i, if it holds kind.
func (w *Writer) column(i int, kind parquet.Kind) (*column, error) {
	if w.err != nil {
		return nil, w.err
	}
	if i < 0 || i >= len(w.cols) {
		w.err = fmt.Errorf("columnar: no column %d of %d", i, len(w.cols))
		return nil, w.err
	}
	c := w.cols[i]
	if c.kind != kind {
		w.err = fmt.Errorf("columnar: column %s holds %s values, not %s", c.name, c.kind, kind)
		return nil, w.err
	}
	return c, nil
}

func (w *Writer) check(c *column, n int, err error) error {
	if err != nil {
		w.err = fmt.Errorf("columnar: column %s: %w", c.name, err)
		return w.err
	}
	c.given += n
	return nil
}

// add gives column i, if it holds kind, the values v.
func add[V any](w *Writer, i int, kind parquet.Kind, v []V, addTo func(*column, values, int) error) error {
	c, err := w.column(i, kind)
	if err != nil {
		return err
	}
	return w.check(c, len(v), addTo(c, sliceValues(v), len(v)))
}

// Int64s adds values to int64 column i.
func (w *Writer) Int64s(i int, v []int64) error {
	return add(w, i, parquet.Int64, v, (*column).addInt64s)
}

// Float64s adds values to double column i.
func (w *Writer) Float64s(i int, v []float64) error {
	return add(w, i, parquet.Double, v, (*column).addFloat64s)
}

// Int32s adds values to int32 column i.
func (w *Writer) Int32s(i int, v []int32) error {
	return add(w, i, parquet.Int32, v, (*column).addInt32s)
}

// Bools adds values to boolean column i.
func (w *Writer) Bools(i int, v []bool) error {
	return add(w, i, parquet.Boolean, v, (*column).addBools)
}

// Strings adds values to dictionary-encoded byte-array column i. In an
// optional column the empty string is null, as in a struct's optional
// string field.
func (w *Writer) Strings(i int, v []string) error {
	return add(w, i, parquet.ByteArray, v, (*column).addStrings)
}

// EndRows ends n rows, which every column must have been given since the
// last EndRows. A row group ends once it holds the writer's most rows per
// row group; n rows must fit in the current one.
func (w *Writer) EndRows(n int) error {
	if w.err != nil {
		return w.err
	}
	for _, c := range w.cols {
		if c.given != n {
			w.err = fmt.Errorf("columnar: column %s was given %d values for %d rows", c.name, c.given, n)
			return w.err
		}
		c.given = 0
	}
	if w.groupRows += int64(n); w.groupRows > w.maxRows {
		w.err = fmt.Errorf("columnar: %d rows overflow a row group of at most %d", w.groupRows, w.maxRows)
		return w.err
	}
	if w.groupRows == w.maxRows {
		if err := w.writeRowGroup(); err != nil {
			w.err = err
		}
	}
	return w.err
}

func (w *Writer) write(b []byte) error {
	n, err := w.out.Write(b)
	w.offset += int64(n)
	return err
}

// writeRowGroup writes the row group's chunks, as parquet-go's
// writer.writeRowGroup does, and starts the next.
func (w *Writer) writeRowGroup() error {
	if w.groupRows == 0 {
		return nil
	}
	for _, c := range w.cols {
		if err := c.writePage(); err != nil {
			return fmt.Errorf("columnar: column %s: %w", c.name, err)
		}
	}
	if err := w.writeMagic(); err != nil {
		return err
	}
	fileOffset := w.offset
	// parquet-go writes an empty list of sorting columns, not none.
	group := format.RowGroup{NumRows: w.groupRows, SortingColumns: []format.SortingColumn{}, FileOffset: fileOffset, Ordinal: int16(len(w.footer.RowGroups))}
	colIdx := make([]format.ColumnIndex, len(w.cols))
	offIdx := make([]format.OffsetIndex, len(w.cols))
	for i, c := range w.cols {
		colIdx[i] = c.indexer.ColumnIndex()
		colIdx[i].DefinitionLevelHistogram = slices.Clone(c.pageHist)
		c.meta.SizeStatistics = format.SizeStatistics{DefinitionLevelHistogram: slices.Clone(c.defHist)}
		if !c.min.IsNull() {
			// An empty string's bound is an empty slice, not nil, as
			// parquet-go keeps it.
			c.meta.Statistics.MinValue = c.min.AppendBytes(make([]byte, 0))
			c.meta.Statistics.MaxValue = c.max.AppendBytes(make([]byte, 0))
		}
		if c.dict {
			c.meta.DictionaryPageOffset = w.offset
			hdr, data, err := c.dictionaryPage()
			if err != nil {
				return fmt.Errorf("columnar: column %s: dictionary page: %w", c.name, err)
			}
			if err := w.write(hdr); err != nil {
				return err
			}
			if err := w.write(data); err != nil {
				return err
			}
		}
		c.meta.DataPageOffset = w.offset
		locs := slices.Clone(c.offsets)
		for j := range locs {
			locs[j].Offset += w.offset
		}
		offIdx[i] = format.OffsetIndex{PageLocations: locs}
		if err := c.pages.writeTo(w.write); err != nil {
			return err
		}
		slices.SortFunc(c.meta.EncodingStats, func(a, b format.PageEncodingStats) int {
			if a.PageType != b.PageType {
				return int(a.PageType) - int(b.PageType)
			}
			return int(a.Encoding) - int(b.Encoding)
		})
		group.TotalByteSize += c.meta.TotalUncompressedSize
		group.TotalCompressedSize += c.meta.TotalCompressedSize
		meta := c.meta
		meta.Encoding = slices.Clone(c.meta.Encoding)
		group.Columns = append(group.Columns, format.ColumnChunk{MetaData: meta})
		c.reset()
	}
	w.footer.RowGroups = append(w.footer.RowGroups, group)
	w.footer.NumRows += w.groupRows
	w.colIdx = append(w.colIdx, colIdx)
	w.offIdx = append(w.offIdx, offIdx)
	w.groupRows = 0
	return nil
}

func (w *Writer) writeMagic() error {
	if w.offset == 0 {
		return w.write([]byte("PAR1"))
	}
	return nil
}

// Close writes the last row group, the page index and the footer, and
// flushes the output; it does not close out.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	for _, c := range w.cols {
		if c.given != 0 {
			w.err = fmt.Errorf("columnar: column %s was given %d values after the last EndRows", c.name, c.given)
			return w.err
		}
	}
	w.err = w.close()
	for _, c := range w.cols {
		c.pages.release()
		keepPageBuffers(c.pageBuffers)
		c.pageBuffers, c.encodeBuffers = nil, nil
	}
	keepEncodeBuffers(w.encoding)
	w.encoding = nil
	if w.err == nil {
		w.err = errors.New("columnar: writer closed")
		return nil
	}
	return w.err
}

func (w *Writer) close() error {
	if err := w.writeRowGroup(); err != nil {
		return err
	}
	if err := w.writeMagic(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf))
	encode := func(v any) (int64, int32, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return 0, 0, err
		}
		at := w.offset
		return at, int32(buf.Len()), w.write(buf.Bytes())
	}
	var err error
	for i, idx := range w.colIdx {
		for j := range idx {
			c := &w.footer.RowGroups[i].Columns[j]
			if c.ColumnIndexOffset, c.ColumnIndexLength, err = encode(&idx[j]); err != nil {
				return err
			}
		}
	}
	for i, idx := range w.offIdx {
		for j := range idx {
			c := &w.footer.RowGroups[i].Columns[j]
			if c.OffsetIndexOffset, c.OffsetIndexLength, err = encode(&idx[j]); err != nil {
				return err
			}
		}
	}
	_, n, err := encode(&w.footer)
	if err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(n))
	copy(tail[4:], "PAR1")
	if err := w.write(tail[:]); err != nil {
		return err
	}
	return w.out.Flush()
}
