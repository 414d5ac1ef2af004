package parquetio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
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
	if err := checkPages(f, pf, st.Size(), false); err != nil {
		return nil, fmt.Errorf("parquetio: read %s: %w", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()

	want := pf.NumRows()
	// A corrupt footer can claim any row count; cap the up-front allocation
	// and let append grow past it for a genuinely large file.
	rows = make([]T, 0, min(want, 1<<16))
	// Ask for no more rows than the footer says are left: asked for more,
	// parquet-go (v0.32.0) decodes an empty page header tens of thousands
	// of times before it says io.EOF (TestReadAllOfOneRow).
	batch := make([]T, max(1, min(want, readBatch)))
	for int64(len(rows)) < want {
		// Read may return rows together with io.EOF, so keep them first.
		n, err := r.Read(batch[:min(int64(len(batch)), want-int64(len(rows)))])
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
