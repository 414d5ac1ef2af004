package generate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// The ranges an imported job's times must lie in.
const (
	// MaxArrivalS bounds arrival_s: about 31 years of seconds. A Unix
	// time (1.7e9 in 2024) is beyond it, as it should be: arrivals count
	// from the workload's start.
	MaxArrivalS = 1e9
	// MinSLOS and MaxSLOS bound slo_s: from a microsecond to a week.
	MinSLOS = 1e-6
	MaxSLOS = 7 * 24 * 3600.0
)

// The columns of an imported workload (see the package doc). The first
// four are required.
const (
	colArrival   = "arrival_s"
	colModel     = "model"
	colBatch     = "batch_size"
	colClass     = "class"
	colPrecision = "precision"
	colSLO       = "slo_s"
)

// importKind is what an import column holds.
type importKind int

const (
	kindSeconds importKind = iota // a float64 number of seconds
	kindInteger                   // a whole number
	kindName                      // a string, one of a set
)

// importColumn is a column an imported workload may have.
type importColumn struct {
	name     string
	required bool
	kind     importKind
}

// importColumns are the columns an import may have, in the order the
// documentation lists them; a column not listed is refused, so that a
// misspelt optional column does not silently take its default.
var importColumns = []importColumn{
	{colArrival, true, kindSeconds},
	{colModel, true, kindName},
	{colBatch, true, kindInteger},
	{colClass, true, kindName},
	{colPrecision, false, kindName},
	{colSLO, false, kindSeconds},
}

// derivedColumns are the columns of a jobs file that an import must not
// carry: generate computes them.
var derivedColumns = []string{"job_id", "memory_mib", "task_gflop", "intensity_flop_per_byte", "deadline_s"}

// columnNames lists the import's columns for messages: "arrival_s,
// model, batch_size, class (required), precision, slo_s (optional)".
func columnNames() string {
	var req, opt []string
	for _, c := range importColumns {
		if c.required {
			req = append(req, c.name)
		} else {
			opt = append(opt, c.name)
		}
	}
	return strings.Join(req, ", ") + " (required); " + strings.Join(opt, ", ") + " (optional)"
}

// checkColumns checks a file's column names: every required one present,
// none unknown, none twice. names are as the file gives them.
func checkColumns(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case seen[n]:
			return fmt.Errorf("column %q appears twice", n)
		case slices.Contains(derivedColumns, n):
			return fmt.Errorf("column %q is derived (from the catalog, the precision and the SLO), not read: drop it; the columns are %s", n, columnNames())
		case !slices.ContainsFunc(importColumns, func(c importColumn) bool { return c.name == n }):
			return fmt.Errorf("unknown column %q; the columns are %s", n, columnNames())
		}
		seen[n] = true
	}
	for _, c := range importColumns {
		if c.required && !seen[c.name] {
			return fmt.Errorf("lacks column %q; the columns are %s", c.name, columnNames())
		}
	}
	return nil
}

// The codes of the named values, as importRow holds them: a model is its
// index in the catalog; a class and a precision these.
const (
	classInteractive = 0
	classBatch       = 1
	precFP32         = 0
	precFP16         = 1
)

// nameSets are the values each named column accepts, indexed by code:
// the catalog's models, the classes and the precisions.
type nameSets map[string][]string

// namesOf are the name sets of a workload whose models are cat's.
func namesOf(cat *catalog.Catalog) nameSets {
	return nameSets{
		colModel:     cat.Names(),
		colClass:     {classInteractive: ClassInteractive, classBatch: ClassBatch},
		colPrecision: {precFP32: PrecisionFP32, precFP16: PrecisionFP16},
	}
}

// code is the code of value in column col's set, or -1.
func (ns nameSets) code(col string, value []byte) int32 {
	for i, v := range ns[col] {
		if v == string(value) {
			return int32(i)
		}
	}
	return -1
}

// bad is the error for a value of a named column that names nothing.
func (ns nameSets) bad(col, value string) error {
	if col == colModel {
		return fmt.Errorf("column model: unknown model %q; the catalog has %s", value, strings.Join(ns[colModel], ", "))
	}
	return fmt.Errorf("column %s: want %s, got %q", col, strings.Join(ns[col], " or "), value)
}

// importRow is one row of an imported workload, as a jobSource reads it:
// the named columns as codes, the optional ones marked absent.
type importRow struct {
	arrival   float64
	model     int32
	batch     int64
	class     int32
	precision int32 // precFP32 when the file has no precision column
	slo       float64
	hasSLO    bool // false: the class's SLO (generate.classes)
}

// jobSource reads an imported workload's rows in file order. Each error
// of a row names it ("row 12, column batch_size: ..."), counting data rows
// from 1; the caller adds the config key and the file.
type jobSource interface {
	// read fills rows with the next rows of the file and returns how many
	// it read; 0 and no error at the end.
	read(rows []importRow) (int, error)
	// rows is the file's row count, or -1 when it is known only at the
	// end (a CSV file).
	rows() int64
	close() error
}

// openImport opens the workload file at path, a .csv or a .parquet (by
// its extension, in any case), after checking that it is a regular file.
// Its models are cat's. Its errors, and those of the source's reads,
// start with key and path.
func openImport(path, key string, cat *catalog.Catalog) (jobSource, error) {
	wrap := func(err error) error { return fmt.Errorf("%s %s: %w", key, path, err) }
	if err := generatespec.CheckImportName(path); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if _, err := userfile.Check(path); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	var src jobSource
	var err error
	switch generatespec.ImportKind(path) {
	case generatespec.ImportCSV:
		src, err = openCSV(path, namesOf(cat))
	default:
		src, err = openParquet(path, namesOf(cat))
	}
	if err != nil {
		return nil, wrap(err)
	}
	return &namedSource{src: src, wrap: wrap}, nil
}

// namedSource prefixes a source's errors with its key and file.
type namedSource struct {
	src  jobSource
	wrap func(error) error
}

func (n *namedSource) read(rows []importRow) (int, error) {
	k, err := n.src.read(rows)
	if err != nil {
		return k, n.wrap(err)
	}
	return k, nil
}

func (n *namedSource) rows() int64  { return n.src.rows() }
func (n *namedSource) close() error { return n.src.close() }

// checkRow checks what every source's rows must satisfy, whatever the
// file's format: times in range and arrivals in order. row counts from 1;
// prev is the previous row's arrival (0 before the first).
func checkRow(r *importRow, row int64, prev float64) error {
	switch {
	case !(r.arrival >= 0 && r.arrival <= MaxArrivalS):
		return fmt.Errorf("row %d, column %s: want a number of seconds since the workload's start, in [0, %g], got %v",
			row, colArrival, float64(MaxArrivalS), r.arrival)
	case r.arrival < prev:
		return fmt.Errorf("row %d, column %s: %v is before the previous row's %v; the rows must be in arrival order (sort the file by %s)",
			row, colArrival, r.arrival, prev, colArrival)
	case r.batch < 1 || r.batch > MaxBatchSize:
		return fmt.Errorf("row %d, column %s: want a whole number of samples in [1, %d], got %d", row, colBatch, MaxBatchSize, r.batch)
	case r.hasSLO && !(r.slo >= MinSLOS && r.slo <= MaxSLOS):
		return fmt.Errorf("row %d, column %s: want a number of seconds in [%g, %g], got %v", row, colSLO, MinSLOS, MaxSLOS, r.slo)
	}
	return nil
}

// importJobs reads the workload's rows from its source in order, filling
// chunks taken from free and sending them on full, until the file ends,
// a row is refused, or ctx is done. Each job takes the catalog's figures
// for its model, its class's SLO when its row gives none, and the id
// ordinal·MaxJobs + its row's index.
func importJobs(ctx context.Context, s workloadSpec, pop *population, st *stats, free <-chan []Job, full chan<- []Job) error {
	classes := [2]classSpec{pop.classes[0], pop.classes[1]}
	rows := make([]importRow, chunkRows)
	id := s.ordinal * MaxJobs
	var done int64
	prev := 0.0
	for {
		var chunk []Job
		select {
		case <-ctx.Done():
			return nil
		case chunk = <-free:
		}
		n, err := s.src.read(rows[:min(len(chunk), len(rows))])
		if err != nil {
			return err
		}
		if n == 0 {
			if done == 0 {
				return fmt.Errorf("generate.%s.import %s: no rows", s.name, s.w.Import)
			}
			return nil
		}
		chunk = chunk[:n]
		for i := range chunk {
			r := &rows[i]
			if err := checkRow(r, done+1, prev); err != nil {
				return fmt.Errorf("generate.%s.import %s: %w", s.name, s.w.Import, err)
			}
			if done == MaxJobs {
				return fmt.Errorf("generate.%s.import %s: more than %d rows", s.name, s.w.Import, int64(MaxJobs))
			}
			prev = r.arrival
			c := &classes[r.class]
			slo := c.slo
			if r.hasSLO {
				slo = r.slo
			}
			m := &s.models[r.model]
			if fp16 := r.precision == precFP16; m.fp16Job(fp16) != fp16 {
				return fmt.Errorf("generate.%s.import %s: row %d, column %s: model %s runs in %s only (the precision its file holds)",
					s.name, s.w.Import, done+1, colPrecision, m.name, map[bool]string{false: PrecisionFP32, true: PrecisionFP16}[m.fp16])
			}
			j := &chunk[i]
			j.ID = id
			j.ArrivalS = r.arrival
			pop.fill(j, c.name, slo, m, int(r.batch), r.precision == precFP16)
			st.add(j, int(r.class), int(r.model))
			id++
			done++
		}
		full <- chunk
	}
}
