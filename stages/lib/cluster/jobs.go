package cluster

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// readChunk is how many jobs a JobReader decodes from its columns at a time:
// enough to amortize the per-column calls, small enough to stay in cache.
const readChunk = 4096

// Precision indexes, the sim.Job.Precision values.
const (
	precFP32 = iota
	precFP16
	numPrecisions
)

// precisionNames is indexed by the precision indexes above.
var precisionNames = [numPrecisions]string{generatespec.PrecisionFP32, generatespec.PrecisionFP16}

// classNames is indexed by sim.Class.
var classNames = [...]string{sim.Interactive: generatespec.ClassInteractive, sim.Batch: generatespec.ClassBatch}

// PrecisionName is the name (generatespec.PrecisionFP32, PrecisionFP16) of
// a sim.Job.Precision index.
func PrecisionName(precision int32) string { return precisionNames[precision] }

// ClassName is the name (generatespec.ClassInteractive, ClassBatch) of a
// job class.
func ClassName(c sim.Class) string { return classNames[c] }

// CheckEvery is how many jobs pass between looks at the context in a loop
// over a workload.
const CheckEvery = 4096

// noCode marks a string a column holds that names nothing known: any
// negative code does for parquetio.Column.Codes.
const noCode = -1

// JobReader streams the jobs of a jobs-<workload>.parquet file in file
// (arrival) order as sim.Jobs. It decodes the seven columns it needs a page
// at a time through parquetio.ColumnFile, straight from parquet-go's typed
// page buffers: no row is ever assembled as a Go struct, and strings are
// mapped to indexes once per dictionary rather than once per row.
// parquet-go's row reader allocates three strings a row, and is slower than
// the simulator it would feed (docs/benchmarks.md).
//
// Memory is bounded whatever the file's size: one decoded page per column
// (pages are written PageBufferSize, 256 KiB, at a time), parquet-go's read
// buffers, and readChunk rows of decoded values; a few MiB in all.
type JobReader struct {
	file *parquetio.ColumnFile
	name string // the file's base name, for errors
	// models are the catalog's names, indexed by sim.Job.Model.
	models []string
	rows   int64 // as the footer says
	// load scales arrival times (arrival/load); the SLO is kept.
	load float64

	id, arrival, slo                 *parquetio.Column
	class, model, precision, batchSz *parquetio.Column

	// The current chunk, decoded column by column.
	ids                 []int64
	arrivals, slos      []float64
	classes, modelCodes []int32 // codes; see classCode and modelCode
	precisions          []int32
	batches             []int32
	pos, n              int
	done                int64   // rows returned so far
	lastArrival         float64 // of the previous row, as in the file
	// free holds recycled jobs for next to fill.
	free []*sim.Job
}

// OpenJobs opens a jobs file for streaming and checks that it has the
// columns the simulator needs, with the physical types generate writes.
// Its models are numbered in cat's order (sim.Job.Model), and a model cat
// lacks is an error. Arrival times are divided by load; limit > 0 reads
// only the first limit jobs.
func OpenJobs(path string, cat *catalog.Catalog, load float64, limit int64) (r *JobReader, err error) {
	name := filepath.Base(path)
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return nil, fmt.Errorf("open jobs: %w", err)
	}
	defer func() {
		if err != nil {
			cf.Close()
		}
	}()
	rows := cf.NumRows()
	if limit > 0 {
		rows = min(rows, limit)
	}
	r = &JobReader{file: cf, name: name, models: cat.Names(), rows: rows, load: load, lastArrival: math.Inf(-1)}
	for _, c := range []struct {
		col  **parquetio.Column
		name string
		kind parquet.Kind
	}{
		{&r.id, "job_id", parquet.Int64},
		{&r.arrival, "arrival_s", parquet.Double},
		{&r.slo, "slo_s", parquet.Double},
		{&r.class, "class", parquet.ByteArray},
		{&r.model, "model", parquet.ByteArray},
		{&r.precision, "precision", parquet.ByteArray},
		{&r.batchSz, "batch_size", parquet.Int32},
	} {
		if *c.col, err = cf.Column(c.name, c.kind); err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	r.ids = make([]int64, readChunk)
	r.arrivals = make([]float64, readChunk)
	r.slos = make([]float64, readChunk)
	r.classes = make([]int32, readChunk)
	r.modelCodes = make([]int32, readChunk)
	r.precisions = make([]int32, readChunk)
	r.batches = make([]int32, readChunk)
	return r, nil
}

// Read is how many jobs Next has returned.
func (r *JobReader) Read() int64 { return r.done }

// Close releases the file and the pages in use.
func (r *JobReader) Close() error { return r.file.Close() }

// Next returns the next job, or nil at the end of the file. The job comes
// from the reader's free list when one was recycled.
func (r *JobReader) Next() (*sim.Job, error) {
	i, ok, err := r.advance()
	if !ok {
		return nil, err
	}
	var j *sim.Job
	if n := len(r.free); n > 0 {
		j, r.free = r.free[n-1], r.free[:n-1]
	} else {
		j = new(sim.Job)
	}
	r.job(i, j)
	return j, nil
}

// advance checks the next row and moves past it, returning its place in
// the current chunk; ok is false at the end of the file or on an error.
// A pass that needs a few of a row's values reads them from the chunk
// there, without filling a sim.Job.
func (r *JobReader) advance() (i int, ok bool, err error) {
	if r.pos == r.n {
		if r.done == r.rows {
			return 0, false, nil
		}
		if err := r.fill(int(min(readChunk, r.rows-r.done))); err != nil {
			return 0, false, err
		}
	}
	i = r.pos
	row := r.done + 1 // counting from 1, as people do
	arr, slo, b := r.arrivals[i], r.slos[i], r.batches[i]
	switch {
	case math.IsNaN(arr) || math.IsInf(arr, 0) || arr < 0:
		return 0, false, fmt.Errorf("read %s: row %d (job %d): arrival_s must be a finite time at least 0, got %v", r.name, row, r.ids[i], arr)
	case arr < r.lastArrival:
		return 0, false, fmt.Errorf("read %s: row %d (job %d): arrival_s %v is before the previous row's %v; jobs must be in arrival order", r.name, row, r.ids[i], arr, r.lastArrival)
	case !(slo >= 0) || math.IsInf(slo, 0):
		return 0, false, fmt.Errorf("read %s: row %d (job %d): slo_s must be a finite number of seconds at least 0, got %v", r.name, row, r.ids[i], slo)
	case b < 1:
		return 0, false, fmt.Errorf("read %s: row %d (job %d): batch_size must be at least 1, got %d", r.name, row, r.ids[i], b)
	}
	r.lastArrival = arr
	r.pos++
	r.done++
	return i, true, nil
}

// arrivalAt is row i's arrival time as simulated: the file's divided by the
// load.
func (r *JobReader) arrivalAt(i int) float64 { return r.arrivals[i] / r.load }

// job fills j with row i of the current chunk.
func (r *JobReader) job(i int, j *sim.Job) {
	a := r.arrivalAt(i)
	*j = sim.Job{
		ID:        r.ids[i],
		Arrival:   a,
		Deadline:  a + r.slos[i],
		Class:     sim.Class(r.classes[i]),
		Model:     r.modelCodes[i],
		Precision: r.precisions[i],
		Batch:     r.batches[i],
	}
}

// Recycle hands back a job the simulator has finished with: sim.Run
// emits a job's record once, when it is done with the job, and keeps no
// reference to it afterwards, so its memory can carry a later job. The
// jobs in memory are then only those queued or running.
func (r *JobReader) Recycle(j *sim.Job) { r.free = append(r.free, j) }

// fill decodes the next n rows of every column.
func (r *JobReader) fill(n int) error {
	if err := r.id.Int64s(r.ids[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.arrival.Float64s(r.arrivals[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.slo.Float64s(r.slos[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.batchSz.Int32s(r.batches[:n]); err != nil {
		return r.wrap(err)
	}
	for _, c := range []struct {
		col    *parquetio.Column
		dst    []int32
		lookup func([]byte) int32
	}{
		{r.class, r.classes, classCode},
		{r.model, r.modelCodes, r.modelCode},
		{r.precision, r.precisions, precisionCode},
	} {
		bad, err := c.col.Codes(c.dst[:n], c.lookup)
		if err != nil {
			return r.wrap(err)
		}
		if bad >= 0 {
			return r.badValue(c.col.Name(), bad, c.col.BadValue())
		}
	}
	r.pos, r.n = 0, n
	return nil
}

func (r *JobReader) wrap(err error) error {
	return fmt.Errorf("read %s: after row %d: %w", r.name, r.done, err)
}

// badValue reports the row that holds a string naming nothing known.
func (r *JobReader) badValue(col string, i int, value string) error {
	var want []string
	switch col {
	case "class":
		want = classNames[:]
	case "model":
		want = r.models
	case "precision":
		want = precisionNames[:]
	}
	return fmt.Errorf("read %s: row %d (job %d): %s %q is not one of %v", r.name, r.done+int64(i)+1, r.ids[i], col, value, want)
}

func classCode(b []byte) int32 {
	switch string(b) {
	case generatespec.ClassInteractive:
		return int32(sim.Interactive)
	case generatespec.ClassBatch:
		return int32(sim.Batch)
	}
	return noCode
}

func (r *JobReader) modelCode(b []byte) int32 {
	// slices.Index gives -1, noCode, for a name not in the catalog.
	return int32(slices.Index(r.models, string(b)))
}

func precisionCode(b []byte) int32 {
	switch string(b) {
	case generatespec.PrecisionFP32:
		return precFP32
	case generatespec.PrecisionFP16:
		return precFP16
	}
	return noCode
}
