package profile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// importColumns are the samples.parquet columns an imported file must have;
// repeat and source are optional (source is always replaced).
var importColumns = []string{"kind", "backend", "provider", "device", "model", "precision", "batch", "threads", "concurrency", "latency_s"}

// Bounds of an imported file: its size, its rows, and a CSV line's length.
const (
	MaxImportBytes = profilespec.MaxImportBytes
	MaxImportRows  = profilespec.MaxImportRows
	MaxImportLine  = profilespec.MaxImportLine
)

// readImport reads and validates an imported profile. Every error names the
// file, and for a bad value its row (1-based, as a spreadsheet counts data
// rows) and column. The file must be a regular file of at most
// MaxImportBytes bytes and MaxImportRows rows: anything else (a named
// pipe, /dev/zero) is refused before it is opened.
func readImport(path string) ([]Sample, error) {
	var rows []Sample
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		rows, err = readImportCSV(path)
	case ".parquet":
		rows, err = readImportParquet(path)
	default:
		err = errors.New("want a .parquet or .csv file")
	}
	if err != nil {
		return nil, fmt.Errorf("profile.import %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("profile.import %s: no rows", path)
	}
	source := "import:" + filepath.Base(path)
	for i := range rows {
		if err := rows[i].Validate(); err != nil {
			return nil, fmt.Errorf("profile.import %s: row %d, %w", path, i+1, err)
		}
		rows[i].Source = source
	}
	return rows, nil
}

// utf8BOM is the byte-order mark that spreadsheets put before a CSV's
// header; it is not part of the first column's name.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func readImportCSV(path string) ([]Sample, error) {
	f, _, err := userfile.Open(path, MaxImportBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	lines := &lineLimit{r: br, max: MaxImportLine}
	r := csv.NewReader(lines)
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("empty file, want a header row")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		name := strings.TrimSpace(strings.ToLower(h))
		if j, ok := col[name]; ok && name != "" {
			return nil, fmt.Errorf("header names column %q twice (columns %d and %d)", name, j+1, i+1)
		}
		col[name] = i
	}
	for _, c := range importColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("header lacks column %q (want %s)", c, strings.Join(importColumns, ", "))
		}
	}
	var out []Sample
	for row := 1; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", row, err)
		}
		if row > MaxImportRows {
			return nil, fmt.Errorf("more than %d rows, the most an import may hold", MaxImportRows)
		}
		var s Sample
		var perr error
		str := func(name string) string { return strings.TrimSpace(rec[col[name]]) }
		num := func(name string) int32 {
			v, err := strconv.ParseInt(str(name), 10, 32)
			if err != nil && perr == nil {
				perr = fmt.Errorf("row %d, column %s: want an integer, got %q", row, name, str(name))
				if errors.Is(err, strconv.ErrRange) {
					perr = fmt.Errorf("row %d, column %s: want an integer in [%d, %d], got %s", row, name, math.MinInt32, math.MaxInt32, str(name))
				}
			}
			return int32(v)
		}
		s.Kind, s.Backend, s.Provider, s.Device = str("kind"), str("backend"), str("provider"), str("device")
		s.Model, s.Precision = str("model"), str("precision")
		s.Batch, s.Threads, s.Concurrency = num("batch"), num("threads"), num("concurrency")
		if _, ok := col["repeat"]; ok {
			s.Repeat = num("repeat")
		}
		lat, err := strconv.ParseFloat(str("latency_s"), 64)
		if err != nil && perr == nil {
			perr = fmt.Errorf("row %d, column latency_s: want a number, got %q", row, str("latency_s"))
		}
		s.LatencyS = lat
		for _, v := range []string{s.Kind, s.Backend, s.Provider, s.Device, s.Model, s.Precision} {
			if !utf8.ValidString(v) && perr == nil {
				perr = fmt.Errorf("row %d: %q is not valid UTF-8", row, v)
			}
		}
		if perr != nil {
			return nil, perr
		}
		out = append(out, s)
	}
}

// lineLimit passes a reader through, failing once a line runs past max
// bytes: a CSV's first line is read whole before anything is checked, and
// a file with no newline (a sparse file, a binary) would be read into
// memory entire.
type lineLimit struct {
	r    io.Reader
	max  int
	n    int // bytes since the last newline
	line int // lines ended so far
}

// errLongLine reports a line past the limit.
var errLongLine = errors.New("line too long")

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.n = 0
			l.line++
			continue
		}
		if l.n++; l.n > l.max {
			what := fmt.Sprintf("line %d", l.line+1)
			if l.line == 0 {
				what = "the header line"
			}
			return i, fmt.Errorf("%w: %s runs past %d bytes without a newline (is this a CSV file?)", errLongLine, what, l.max)
		}
	}
	return n, err
}

// The types an imported Parquet column may have, by the Go type of its
// Sample field.
type columnType int

const (
	textColumn columnType = iota
	intColumn
	floatColumn
)

func (c columnType) String() string {
	switch c {
	case textColumn:
		return "BYTE_ARRAY (STRING)"
	case intColumn:
		return "INT32 or INT64 (an integer)"
	}
	return "DOUBLE or FLOAT"
}

// importTypes are the types of the import's columns, as Sample has them.
var importTypes = map[string]columnType{
	"kind": textColumn, "backend": textColumn, "provider": textColumn, "device": textColumn, "model": textColumn, "precision": textColumn,
	"batch": intColumn, "threads": intColumn, "concurrency": intColumn, "repeat": intColumn,
	"latency_s": floatColumn,
}

// checkType reports whether a file's column of parquet type t holds what
// want asks for, converting nothing silently: a boolean is not a latency,
// a double not a thread count, a date not an integer.
func checkType(t parquet.Type, want columnType) bool {
	var lt format.LogicalTypeValue
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	switch want {
	case textColumn:
		switch lt.(type) {
		case nil, *format.StringType, *format.EnumType:
			return t.Kind() == parquet.ByteArray
		}
	case intColumn:
		switch lt.(type) {
		case nil, *format.IntType:
			return t.Kind() == parquet.Int32 || t.Kind() == parquet.Int64
		}
	case floatColumn:
		return lt == nil && (t.Kind() == parquet.Double || t.Kind() == parquet.Float)
	}
	return false
}

// typeName describes a parquet type for an error: its physical type, and
// its logical type when it has one.
func typeName(t parquet.Type) string {
	s := t.Kind().String()
	if l := t.LogicalType(); l != nil && l.Value != nil {
		s += " (" + l.String() + ")"
	}
	return s
}

func readImportParquet(path string) (rows []Sample, err error) {
	f, info, err := userfile.Open(path, MaxImportBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// parquet-go panics on some malformed input.
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("not a readable Parquet file: %v", p)
		}
	}()
	if err := parquetio.CheckFooter(f, info.Size()); err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %w", err)
	}
	pf, err := parquet.OpenFile(f, info.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %w", err)
	}
	if err := parquetio.CheckForeignPages(f, pf, info.Size()); err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %w", err)
	}
	if n := pf.NumRows(); n > MaxImportRows {
		return nil, fmt.Errorf("%d rows, more than the %d an import may hold", n, MaxImportRows)
	}
	// Each column the import reads, by its index among the file's leaves.
	type column struct {
		name     string
		want     columnType
		unsigned bool
	}
	byIndex := map[int]column{}
	for _, name := range slices.Concat(importColumns, []string{"repeat"}) {
		want := importTypes[name]
		c := pf.Root().Column(name)
		if c == nil {
			if name == "repeat" {
				continue // optional
			}
			return nil, fmt.Errorf("lacks column %q (want %s)", name, strings.Join(importColumns, ", "))
		}
		switch {
		case !c.Leaf():
			return nil, fmt.Errorf("column %s: a group of columns, want %s", name, want)
		case c.Repeated():
			return nil, fmt.Errorf("column %s: a repeated column (a list), want %s", name, want)
		case !checkType(c.Type(), want):
			return nil, fmt.Errorf("column %s: type %s, want %s", name, typeName(c.Type()), want)
		}
		col := column{name: name, want: want}
		if l := c.Type().LogicalType(); l != nil {
			if it, ok := l.Value.(*format.IntType); ok {
				col.unsigned = !it.IsSigned
			}
		}
		byIndex[c.Index()] = col
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 256)
	// No more rows asked for than are left (see parquetio.ReadAll).
	for left := pf.NumRows(); left > 0; {
		n, err := r.ReadRows(buf[:min(int64(len(buf)), left)])
		left -= int64(n)
		for _, values := range buf[:n] {
			row := len(rows) + 1
			var s Sample
			for _, v := range values {
				c, ok := byIndex[v.Column()]
				if !ok {
					continue
				}
				if v.IsNull() {
					return nil, fmt.Errorf("row %d, column %s: null, want %s", row, c.name, c.want)
				}
				if err := setField(&s, c.name, c.unsigned, v); err != nil {
					return nil, fmt.Errorf("row %d, column %s: %w", row, c.name, err)
				}
			}
			rows = append(rows, s)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", len(rows)+1, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("row %d: the reader made no progress", len(rows)+1)
		}
		if len(rows) > MaxImportRows {
			return nil, fmt.Errorf("more than %d rows, the most an import may hold", MaxImportRows)
		}
	}
	if int64(len(rows)) != pf.NumRows() {
		return nil, fmt.Errorf("read %d rows, but the footer says %d", len(rows), pf.NumRows())
	}
	return rows, nil
}

// setField stores value v of column name, whose type checkType accepted,
// into s: an integer must fit an int32, text must be UTF-8.
func setField(s *Sample, name string, unsigned bool, v parquet.Value) error {
	var i int64
	var text string
	switch v.Kind() {
	case parquet.ByteArray:
		text = string(v.ByteArray())
		if !utf8.ValidString(text) {
			return fmt.Errorf("%q is not valid UTF-8", text)
		}
	case parquet.Int32:
		i = int64(v.Int32())
		if unsigned {
			i = int64(uint32(v.Int32()))
		}
	case parquet.Int64:
		i = v.Int64()
		if unsigned && i < 0 {
			return fmt.Errorf("%d does not fit an int32 (at most %d)", uint64(i), math.MaxInt32)
		}
	}
	if v.Kind() == parquet.Int32 || v.Kind() == parquet.Int64 {
		if i < math.MinInt32 || i > math.MaxInt32 {
			return fmt.Errorf("%d does not fit an int32 (want an integer in [%d, %d])", i, math.MinInt32, math.MaxInt32)
		}
	}
	switch name {
	case "kind":
		s.Kind = text
	case "backend":
		s.Backend = text
	case "provider":
		s.Provider = text
	case "device":
		s.Device = text
	case "model":
		s.Model = text
	case "precision":
		s.Precision = text
	case "batch":
		s.Batch = int32(i)
	case "threads":
		s.Threads = int32(i)
	case "concurrency":
		s.Concurrency = int32(i)
	case "repeat":
		s.Repeat = int32(i)
	case "latency_s":
		if v.Kind() == parquet.Float {
			s.LatencyS = float64(v.Float())
		} else {
			s.LatencyS = v.Double()
		}
	}
	return nil
}
