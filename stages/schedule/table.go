package schedule

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// table streams rows of type T to a Parquet file: rows are filled in place
// in a buffer of rowBuffer rows that is handed to parquet-go when full, so
// memory is the buffer plus the writer's current row group, whatever the
// number of rows.
type table[T any] struct {
	name string // the path below the policy directory, for errors
	f    *os.File
	w    *parquet.GenericWriter[T]
	buf  []T
	n    int
}

func createTable[T any](path string, meta map[string]string, opts []parquet.WriterOption) (*table[T], error) {
	name := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return &table[T]{
		name: name,
		f:    f,
		w:    parquet.NewGenericWriter[T](f, parquetio.WriterOptions(meta, opts...)...),
		buf:  make([]T, rowBuffer),
	}, nil
}

// next returns the next row to fill; commit adds it.
func (t *table[T]) next() *T { return &t.buf[t.n] }

func (t *table[T]) commit() error {
	if t.n++; t.n == len(t.buf) {
		return t.flush()
	}
	return nil
}

func (t *table[T]) flush() error {
	if t.n == 0 {
		return nil
	}
	if _, err := t.w.Write(t.buf[:t.n]); err != nil {
		return fmt.Errorf("write %s: %w", t.name, err)
	}
	t.n = 0
	return nil
}

// close writes the buffered rows and the footer and closes the file.
func (t *table[T]) close() error {
	if t.f == nil {
		return nil
	}
	f := t.f
	t.f = nil
	if err := t.flush(); err != nil {
		f.Close()
		return err
	}
	if err := t.w.Close(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", t.name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", t.name, err)
	}
	return nil
}

// abort closes the file if close did not, leaving it without a footer:
// the run failed, and the runner discards its output.
func (t *table[T]) abort() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
