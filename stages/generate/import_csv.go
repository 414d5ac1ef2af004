package generate

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// maxCSVRecord bounds one CSV record (a row, or the header) in bytes: a
// workload's row is a few dozen. A file with no line break (a sparse file,
// a binary one) fails after this much, not after reading it whole.
const maxCSVRecord = 64 << 10

// errLongRecord is the budget reader's error.
var errLongRecord = fmt.Errorf("longer than %d KiB; is this a CSV file?", maxCSVRecord>>10)

// budget fails a read once more than its budget has been read since its
// last reset: the CSV reader resets it after each record, so no record
// (with the reader's read-ahead) grows past the budget in memory.
type budget struct {
	r    io.Reader
	left int
}

func (b *budget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errLongRecord
	}
	n, err := b.r.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

func (b *budget) reset() { b.left = maxCSVRecord }

// csvSource reads an imported workload from CSV: a header row of column
// names (a UTF-8 byte-order mark, spaces and case ignored), then one row
// per job.
type csvSource struct {
	ns  nameSets
	f   *os.File
	b   *budget
	r   *csv.Reader
	col map[string]int // column name → field index
	row int64          // data rows read
}

func openCSV(path string, ns nameSets) (*csvSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s := &csvSource{ns: ns, f: f, b: &budget{r: bufio.NewReaderSize(f, 64<<10)}, col: map[string]int{}}
	s.b.reset()
	s.r = csv.NewReader(s.b)
	s.r.ReuseRecord = true
	s.r.TrimLeadingSpace = true
	header, err := s.r.Read()
	switch {
	case err == io.EOF:
		err = errors.New("empty file, want a header row naming the columns")
	case errors.Is(err, errLongRecord):
		err = fmt.Errorf("the header row is %w", err)
	case err != nil:
		err = fmt.Errorf("header row: %w", err)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	names := make([]string, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		names[i] = strings.ToLower(strings.TrimSpace(h))
		if names[i] == "" {
			f.Close()
			return nil, fmt.Errorf("header row: column %d has no name", i+1)
		}
		s.col[names[i]] = i
	}
	if err := checkColumns(names); err != nil {
		f.Close()
		return nil, fmt.Errorf("header row: %w", err)
	}
	return s, nil
}

func (s *csvSource) rows() int64  { return -1 }
func (s *csvSource) close() error { return s.f.Close() }

func (s *csvSource) read(rows []importRow) (int, error) {
	for i := range rows {
		s.b.reset()
		rec, err := s.r.Read()
		if err == io.EOF {
			return i, nil
		}
		row := s.row + 1
		if err != nil {
			var pe *csv.ParseError
			switch {
			case errors.Is(err, errLongRecord):
				return i, fmt.Errorf("row %d is %w", row, err)
			case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount):
				return i, fmt.Errorf("row %d (line %d): has %d fields, the header %d", row, pe.StartLine, len(rec), len(s.col))
			case errors.As(err, &pe):
				return i, fmt.Errorf("row %d (line %d): %w", row, pe.StartLine, pe.Err)
			}
			return i, fmt.Errorf("row %d: %w", row, err)
		}
		if err := s.parse(rec, &rows[i]); err != nil {
			return i, fmt.Errorf("row %d, %w", row, err)
		}
		s.row++
	}
	return len(rows), nil
}

// parse reads one record into r; its errors start with the column.
func (s *csvSource) parse(rec []string, r *importRow) error {
	field := func(col string) (string, bool, error) {
		i, ok := s.col[col]
		if !ok {
			return "", false, nil
		}
		v := strings.TrimSpace(rec[i])
		if v == "" {
			return "", true, fmt.Errorf("column %s: empty; leave the column out to take its default", col)
		}
		return v, true, nil
	}
	seconds := func(col string, dst *float64) (bool, error) {
		v, ok, err := field(col)
		if !ok || err != nil {
			return ok, err
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return true, fmt.Errorf("column %s: want a number of seconds, got %q", col, v)
		}
		*dst = f
		return true, nil
	}
	name := func(col string, dst *int32) error {
		v, ok, err := field(col)
		if !ok || err != nil {
			return err
		}
		if *dst = s.ns.code(col, []byte(v)); *dst < 0 {
			return s.ns.bad(col, v)
		}
		return nil
	}

	*r = importRow{}
	if _, err := seconds(colArrival, &r.arrival); err != nil {
		return err
	}
	if err := name(colModel, &r.model); err != nil {
		return err
	}
	v, _, err := field(colBatch)
	if err != nil {
		return err
	}
	if r.batch, err = strconv.ParseInt(v, 10, 64); err != nil {
		return fmt.Errorf("column %s: want a whole number of samples, got %q", colBatch, v)
	}
	if err := name(colClass, &r.class); err != nil {
		return err
	}
	if err := name(colPrecision, &r.precision); err != nil {
		return err
	}
	r.hasSLO, err = seconds(colSLO, &r.slo)
	return err
}
