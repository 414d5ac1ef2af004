// Package digest fingerprints artifact files for the runner: the SHA-256 of
// their bytes, which verify checks, and the content digest that feeds a
// version's output digest, which for a Parquet file leaves out the footer's
// provenance entries (KeyStage, KeyVersion, KeyUpstream), so that a stage
// rerun under a new version that writes the same data leaves its downstream
// cached (early cutoff).
//
// It reads a Parquet footer with parquet-go's format and thrift packages
// alone, not the whole of parquet-go, so that the runner, which digests
// every output, stays a small program that starts at once.
package digest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Provenance keys in the key-value metadata of every artifact's footer.
const (
	// KeyStage names the stage that wrote the file.
	KeyStage = "mlsched.stage"
	// KeyVersion is the version (cache key) of the stage run that wrote it.
	KeyVersion = "mlsched.version"
	// KeyUpstream lists the upstream artifacts the run read.
	KeyUpstream = "mlsched.upstream"
)

// magic opens and closes every unencrypted Parquet file.
const magic = "PAR1"

// tailSize is the footer length (4 bytes, little endian) plus the magic.
const tailSize = 8

// ErrCorrupt is wrapped by every error about a file that looks like Parquet
// but cannot be, such as a truncated artifact.
var ErrCorrupt = errors.New("corrupt parquet file")

// Digest fingerprints one artifact file.
type Digest struct {
	// Size is the file size in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the raw bytes.
	SHA256 string
	// Content is the hex digest the runner compares for early cutoff. For a
	// Parquet file it is the SHA-256 of the file as it would read with the
	// provenance entries (KeyStage, KeyVersion, KeyUpstream) removed from its
	// footer: the bytes before the footer, then the footer re-encoded, then
	// its length and the closing magic. For any other file it equals SHA256.
	Content string
	// Rows is the row count recorded in a Parquet footer, or -1 for a file
	// that is not Parquet.
	Rows int64
}

// provenanceKeys are the footer entries that Content ignores.
var provenanceKeys = map[string]bool{KeyStage: true, KeyVersion: true, KeyUpstream: true}

// File reads the file at path once and returns its digests. A file is
// Parquet when it starts and ends with the PAR1 magic, whatever its name; one
// that has the magic at only one end, or whose footer does not decode, is
// reported as corrupt (wrapping ErrCorrupt) with the path in the message.
func File(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, fmt.Errorf("digest: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Digest{}, fmt.Errorf("digest: %w", err)
	}
	size := st.Size()
	footerLen, isParquet, err := probe(f, size, path)
	if err != nil {
		return Digest{}, err
	}

	raw := sha256.New()
	buf := make([]byte, 1<<20)
	d := Digest{Size: size, Rows: -1}
	if !isParquet {
		n, err := io.CopyBuffer(raw, f, buf)
		if err != nil {
			return Digest{}, fmt.Errorf("digest %s: %w", path, err)
		}
		d.Size = n
		d.SHA256 = hex.EncodeToString(raw.Sum(nil))
		d.Content = d.SHA256
		return d, nil
	}

	// One sequential pass: the body feeds both hashes, the footer only the
	// raw one and is kept to be decoded.
	content := sha256.New()
	body := size - tailSize - footerLen
	if _, err := io.CopyBuffer(io.MultiWriter(raw, content), io.LimitReader(f, body), buf); err != nil {
		return Digest{}, fmt.Errorf("digest %s: %w", path, err)
	}
	tail := make([]byte, footerLen+tailSize)
	if _, err := io.ReadFull(f, tail); err != nil {
		// The body was shorter than Stat said: the file shrank under us.
		return Digest{}, fmt.Errorf("digest %s: %w: file changed while reading: %w", path, ErrCorrupt, err)
	}
	raw.Write(tail)

	meta, err := decodeFooter(tail[:footerLen], body, path)
	if err != nil {
		return Digest{}, err
	}
	kept := meta.KeyValueMetadata[:0]
	for _, kv := range meta.KeyValueMetadata {
		if !provenanceKeys[kv.Key] {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		kept = nil // an absent list, as a writer without metadata leaves it
	}
	meta.KeyValueMetadata = kept
	stripped, err := thrift.Marshal(new(thrift.CompactProtocol), meta)
	if err != nil {
		return Digest{}, fmt.Errorf("digest %s: re-encode footer: %w", path, err)
	}
	content.Write(stripped)
	content.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(stripped))))
	content.Write([]byte(magic))

	d.SHA256 = hex.EncodeToString(raw.Sum(nil))
	d.Content = hex.EncodeToString(content.Sum(nil))
	d.Rows = meta.NumRows
	return d, nil
}

// Footer returns the key-value metadata and row count of the Parquet file
// at path, reading only its ends. It is what `mlsched show` needs to describe
// an artifact without scanning it.
func Footer(path string) (meta map[string]string, rows int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("read footer: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("read footer: %w", err)
	}
	size := st.Size()
	footerLen, isParquet, err := probe(f, size, path)
	if err != nil {
		return nil, 0, err
	}
	if !isParquet {
		return nil, 0, fmt.Errorf("read footer %s: not a parquet file (no PAR1 magic)", path)
	}
	body := size - tailSize - footerLen
	footer := make([]byte, footerLen)
	if _, err := f.ReadAt(footer, body); err != nil {
		return nil, 0, fmt.Errorf("read footer %s: %w", path, err)
	}
	fm, err := decodeFooter(footer, body, path)
	if err != nil {
		return nil, 0, err
	}
	meta = make(map[string]string, len(fm.KeyValueMetadata))
	for _, kv := range fm.KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	return meta, fm.NumRows, nil
}

// probe reads the magic at both ends of f and the footer length. It returns
// isParquet false, without error, for a file with the magic at neither end.
func probe(f io.ReaderAt, size int64, path string) (footerLen int64, isParquet bool, err error) {
	var head [4]byte
	var tail [tailSize]byte
	hasHead := size >= 4
	if hasHead {
		if _, err := f.ReadAt(head[:], 0); err != nil {
			return 0, false, fmt.Errorf("%s: %w", path, err)
		}
		hasHead = string(head[:]) == magic
	}
	hasTail := size >= tailSize
	if hasTail {
		if _, err := f.ReadAt(tail[:], size-tailSize); err != nil {
			return 0, false, fmt.Errorf("%s: %w", path, err)
		}
		hasTail = string(tail[4:]) == magic
	}
	switch {
	case !hasHead && !hasTail:
		return 0, false, nil
	case !hasTail:
		return 0, false, fmt.Errorf("%s: %w: starts with PAR1 but does not end with it (truncated?)", path, ErrCorrupt)
	case !hasHead:
		return 0, false, fmt.Errorf("%s: %w: ends with PAR1 but does not start with it", path, ErrCorrupt)
	}
	footerLen = int64(binary.LittleEndian.Uint32(tail[:4]))
	if footerLen == 0 || int64(len(magic))+footerLen+tailSize > size {
		return 0, false, fmt.Errorf("%s: %w: footer length %d does not fit in %d bytes", path, ErrCorrupt, footerLen, size)
	}
	return footerLen, true, nil
}

// decodeFooter decodes a thrift compact FileMetaData and checks that it
// describes a file whose body is bodyLen bytes long. Fields newer than
// parquet-go's format package are skipped by the decoder and so do not reach
// Content; every field parquet-go itself writes does. The thrift decoder is
// not guaranteed to reject every malformed input without panicking, so a
// panic becomes an error naming the file.
func decodeFooter(footer []byte, bodyLen int64, path string) (meta *format.FileMetaData, err error) {
	defer func() {
		if r := recover(); r != nil {
			meta, err = nil, fmt.Errorf("%s: %w: decode footer: %v", path, ErrCorrupt, r)
		}
	}()
	meta = new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, meta); err != nil {
		return nil, fmt.Errorf("%s: %w: decode footer: %w", path, ErrCorrupt, err)
	}
	var rows int64
	for i, rg := range meta.RowGroups {
		rows += rg.NumRows
		for _, cc := range rg.Columns {
			if cc.FilePath != "" {
				continue // the chunk lives in another file
			}
			md := cc.MetaData
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			if start < int64(len(magic)) || start+md.TotalCompressedSize > bodyLen {
				return nil, fmt.Errorf("%s: %w: row group %d column %v lies outside the file body",
					path, ErrCorrupt, i, md.PathInSchema)
			}
		}
	}
	if meta.NumRows < 0 || rows != meta.NumRows {
		return nil, fmt.Errorf("%s: %w: footer says %d rows but its row groups hold %d",
			path, ErrCorrupt, meta.NumRows, rows)
	}
	return meta, nil
}
