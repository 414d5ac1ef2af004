// Package columnar writes a flat Parquet file from columns of typed values,
// byte for byte as parquet-go's GenericWriter writes the same rows with the
// same schema and writer options, in 0.48 to 0.58 of its time
// (BenchmarkTable, at 20,000 and a million rows).
//
// It exists for the schedule stage's traces, where writing through
// parquet-go cost about half the stage: a GenericWriter deconstructs each
// row struct by reflection-built functions, and looks every value of a
// dictionary-encoded string column up in a Go map. Here each column of a
// Table reads its field in the slice of rows where it lies, by field
// offset (or a caller hands a Writer each column's values as a slice); a
// string column recognizes a repeated string by its pointer and length
// before it hashes it; an int32 dictionary column keeps its page's bounds
// as the values come; and a page is compressed straight into the buffer
// that holds its row group's chunk. Page buffers are kept from one file to
// the next, as parquet-go pools its own.
//
// What is not reimplemented is reused, so that the bytes agree by
// construction rather than by imitation: parquet-go's encodings (RLE
// dictionary indexes and levels, delta binary packing, byte stream split,
// plain), its compression codecs, its thrift structures and encoder, its
// column indexers, and its own schema, key-value metadata and column orders,
// read off the footer of a file with no rows that parquet-go writes at New.
// What this package does itself is parquet-go's bookkeeping: where pages
// end (after every 64 rows of a write, when the buffered page holds at
// least 98% of the page buffer size), the dictionary of each row group in
// order of first use, page and chunk statistics, the page index, and the
// footer.
//
// Only what parquet-go would write for a flat schema of required or
// optional boolean, int32, int64, double and byte-array columns is
// supported, with data pages of version 2, no bloom filters, no sorting
// and no encryption; New refuses anything else with an error that names
// the column or option. TestMatchesParquetGo holds every supported shape to
// parquet-go's bytes, over many pages and row groups; a parquet-go upgrade
// that changes its layout fails it.
package columnar
