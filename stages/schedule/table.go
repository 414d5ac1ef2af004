package schedule

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/pipeline/parquetio/columnar"
)

// table streams rows of type T to a Parquet file: rows are filled in place
// in a buffer of rowBuffer rows that is handed to a columnar.Table when
// full, so memory is the buffer plus the writer's current row group,
// whatever the number of rows. The file's bytes are those a
// parquet.GenericWriter would write, in less CPU time (see package
// columnar).
type table[T any] struct {
	name string // the path below the policy directory, for errors
	f    *os.File
	w    *columnar.Table[T]
	buf  []T
	n    int
}

func createTable[T any](path string, meta map[string]string, opts []parquet.WriterOption) (*table[T], error) {
	name := filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	w, err := columnar.NewTable[T](f, parquetio.WriterOptions(meta, opts...)...)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return &table[T]{name: name, f: f, w: w, buf: make([]T, rowBuffer)}, nil
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
	if err := t.w.Write(t.buf[:t.n]); err != nil {
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

// traceWriterOptions skip min/max statistics where no reader would prune
// by them: the string columns (as generate does for its jobs), whose bounds
// are a few category names, the durations, whose pages all span nearly the
// same range, and the start and end times, which follow the arrival's.
// parquet-go computes them by comparing every value, which cost about a
// tenth of writing a trace. arrival_s (and devices.parquet's start_s) keep
// theirs, so a reader can skip to a window of the simulation.
var traceWriterOptions = skipBounds("policy", "device", "device_kind", "class", "reason", "start_s", "end_s", "wait_s", "service_s", "e2e_s")

var batchWriterOptions = skipBounds("device", "device_kind", "memory_mib", "end_s")

func skipBounds(cols ...string) []parquet.WriterOption {
	var opts []parquet.WriterOption
	for _, c := range cols {
		opts = append(opts, parquet.SkipPageBounds(c), parquet.SkipPageStatistics(c))
	}
	return opts
}
