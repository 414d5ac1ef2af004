package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// readBatch is how many rows ReadAll asks the reader for at a time.
const readBatch = 4096

// ReadAll reads every row of the Parquet file at path into a []T, mapping
// columns to fields by the parquet struct tags of T. It is meant for small
// tables and tests. Unlike parquet.ReadFile it never panics: parquet-go's
// reader panics on some malformed input and on schema mismatches, and those
// panics come back as errors naming the file.
func ReadAll[T any](path string) (rows []T, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquetio: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("parquetio: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("parquetio: read %s: %v", path, r)
		}
	}()
	if err := CheckFooter(f, st.Size()); err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	if err := CheckCodecs(pf); err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()

	want := pf.NumRows()
	// A corrupt footer can claim any row count; cap the up-front allocation
	// and let append grow past it for a genuinely large file.
	rows = make([]T, 0, min(want, 1<<16))
	batch := make([]T, readBatch)
	for {
		// Read may return rows together with io.EOF, so keep them first.
		n, err := r.Read(batch)
		rows = append(rows, batch[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parquetio: read %s: row %d: %w", path, len(rows), err)
		}
		if n == 0 {
			return nil, fmt.Errorf("parquetio: read %s: reader made no progress at row %d", path, len(rows))
		}
	}
	if int64(len(rows)) != want {
		return nil, fmt.Errorf("parquetio: read %s: %w: read %d rows, footer says %d", path, ErrCorrupt, len(rows), want)
	}
	return rows, nil
}

// CheckFooter checks the eight bytes that end a Parquet file of size bytes:
// the footer's length and the magic "PAR1". The footer must fit in the
// file: parquet-go allocates a buffer of whatever length the file claims
// before it reads the footer, so a few changed bytes in a small file made
// it allocate 2 GB. Every reader here calls it before parquet.OpenFile.
func CheckFooter(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 2*int64(len(magic))+4 {
		return fmt.Errorf("%w: %d bytes, too short for a Parquet file", ErrCorrupt, size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-int64(len(tail))); err != nil {
		return err
	}
	if string(tail[4:]) != magic {
		return fmt.Errorf("%w: it does not end with %q", ErrCorrupt, magic)
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-2*int64(len(magic))-4 {
		return fmt.Errorf("%w: its footer claims %d bytes, and the file holds %d", ErrCorrupt, n, size)
	}
	return nil
}

// CheckCodecs refuses a file whose column chunks are compressed with a
// codec parquet-go cannot decode safely, before any page is read: its LZ4
// decoder takes every error for a short buffer and doubles the buffer
// forever, so one damaged LZ4 page (or a codec field changed to LZ4) grew
// the process until it ran out of memory. mlsched writes zstd; other
// tools write snappy, gzip or zstd, or nothing.
func CheckCodecs(pf *parquet.File) error {
	md := pf.Metadata()
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			switch codec := c.MetaData.Codec; codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd:
			default:
				return fmt.Errorf("%w: column %s is compressed with %s; want zstd, snappy, gzip or none",
					ErrCorrupt, strings.Join(c.MetaData.PathInSchema, "."), codec)
			}
		}
	}
	return nil
}
