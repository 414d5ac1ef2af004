package profile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// importColumns are the samples.parquet columns an imported file must have;
// repeat and source are optional (source is always replaced).
var importColumns = []string{"kind", "backend", "provider", "device", "model", "precision", "batch", "threads", "concurrency", "latency_s"}

// readImport reads and validates an imported profile. Every error names the
// file, and for a bad value its row (1-based, as a spreadsheet counts data
// rows) and column.
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

func readImportCSV(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("empty file, want a header row")
	}
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.ToLower(h))] = i
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
		var s Sample
		var perr error
		str := func(name string) string { return strings.TrimSpace(rec[col[name]]) }
		num := func(name string) int32 {
			v, err := strconv.ParseInt(str(name), 10, 32)
			if err != nil && perr == nil {
				perr = fmt.Errorf("row %d, column %s: want an integer, got %q", row, name, str(name))
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
		if perr != nil {
			return nil, perr
		}
		out = append(out, s)
	}
}

func readImportParquet(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := openParquet(f, fi.Size())
	f.Close()
	if err != nil {
		return nil, err
	}
	// A missing column would read as zero values without complaint.
	for _, c := range importColumns {
		if _, ok := pf.Schema().Lookup(c); !ok {
			return nil, fmt.Errorf("lacks column %q (want %s)", c, strings.Join(importColumns, ", "))
		}
	}
	return parquetio.ReadAll[Sample](path)
}

// openParquet opens a Parquet file's footer, turning the library's panics
// on malformed input into errors.
func openParquet(r io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("not a readable Parquet file: %v", p)
		}
	}()
	pf, err = parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %w", err)
	}
	return pf, nil
}
