// Package parquetio holds the conventions every mlsched artifact follows when
// it is a Parquet file: how it is written (WriterOptions, WriteFile), where
// its provenance lives (the footer keys KeyStage, KeyVersion, KeyUpstream),
// how the runner fingerprints it (the digest package), and how stages read it back
// (ReadAll for small tables, ColumnFile for large ones, a column at a time).
//
// Provenance in the footer says which stage and version produced a file and
// from which upstream outputs. It must not defeat the runner's early cutoff:
// when a stage reruns under a new version and writes the same data, the
// downstream stages should not rerun. digest.File therefore returns two
// digests, SHA256 over the raw bytes (what `mlsched verify` checks) and
// Content, which ignores exactly the provenance entries. Everything else in
// the file, data, schema, encodings and any other metadata, still changes
// Content.
//
// Readers do not trust a file's own sizes: parquet-go allocates a footer,
// a page and a decompressed page at the lengths the file states before
// reading them, so OpenColumns, OpenForeign and ReadAll check those
// lengths first (guard.go) and refuse, as ErrCorrupt, a file whose sizes it
// does not hold; OpenForeign, for files from outside the store, also
// decompresses every page within its stated size.
//
// Writers are deterministic: the same rows and metadata give the same bytes,
// since metadata keys are sorted and created_by is pinned rather than read
// from the binary's build information.
package parquetio
