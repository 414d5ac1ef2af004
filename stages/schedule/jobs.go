package schedule

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/catalog"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// readChunk is how many jobs a jobReader decodes from its columns at a time:
// enough to amortize the per-column calls, small enough to stay in cache.
const readChunk = 4096

// Precision indexes, the sim.Job.Precision values.
const (
	precFP32 = iota
	precFP16
	numPrecisions
)

// precisionNames is indexed by the precision indexes above.
var precisionNames = [numPrecisions]string{generate.PrecisionFP32, generate.PrecisionFP16}

// modelNames is indexed by sim.Job.Model: the catalog's fixed order.
var modelNames = catalog.Names()

// classNames is indexed by sim.Class.
var classNames = [...]string{sim.Interactive: generate.ClassInteractive, sim.Batch: generate.ClassBatch}

// noCode marks a string a column holds that names nothing known.
const noCode = math.MaxUint8

// jobReader streams the jobs of a jobs-<workload>.parquet file in file
// (arrival) order as sim.Jobs. It decodes the seven columns it needs a page
// at a time, straight from parquet-go's typed page buffers: no row is ever
// assembled as a Go struct, and strings are mapped to indexes once per
// dictionary rather than once per row. parquet-go's row reader allocates
// three strings a row and ran at 1.5M rows/s here; the simulator alone runs
// faster than that.
//
// Memory is bounded whatever the file's size: one decoded page per column
// (pages are written PageBufferSize, 256 KiB, at a time), parquet-go's read
// buffers, and readChunk rows of decoded values; a few MiB in all.
type jobReader struct {
	f    *os.File
	name string // the file's base name, for errors
	rows int64  // as the footer says
	// load scales arrival times (arrival/load); the SLO is kept.
	load float64

	id, arrival, slo                 column
	class, model, precision, batchSz column

	// The current chunk, decoded column by column.
	ids             []int64
	arrivals, slos  []float64
	classes, models []uint8
	precisions      []uint8
	batches         []int32
	pos, n          int
	done            int64   // rows returned so far
	lastArrival     float64 // of the previous row, as in the file
	// free holds recycled jobs for next to fill.
	free []*sim.Job
}

// openJobs opens a jobs file for streaming and checks that it has the
// columns the simulator needs, with the physical types generate writes.
func openJobs(path string, load float64) (r *jobReader, err error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open jobs: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("read %s: %w: %v", name, parquetio.ErrCorrupt, p)
		}
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	r = &jobReader{f: f, name: name, rows: pf.NumRows(), load: load, lastArrival: math.Inf(-1)}
	root := pf.Root()
	for _, c := range []struct {
		col  *column
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
		pc := root.Column(c.name)
		if pc == nil || !pc.Leaf() {
			return nil, fmt.Errorf("read %s: no column %s", name, c.name)
		}
		if !pc.Required() || pc.Type().Kind() != c.kind {
			return nil, fmt.Errorf("read %s: column %s: want a required %s column, got %s", name, c.name, c.kind, pc)
		}
		*c.col = column{name: c.name, pages: pc.Pages()}
	}
	r.ids = make([]int64, readChunk)
	r.arrivals = make([]float64, readChunk)
	r.slos = make([]float64, readChunk)
	r.classes = make([]uint8, readChunk)
	r.models = make([]uint8, readChunk)
	r.precisions = make([]uint8, readChunk)
	r.batches = make([]int32, readChunk)
	return r, nil
}

// Close releases the file and the pages in use.
func (r *jobReader) Close() error {
	for _, c := range []*column{&r.id, &r.arrival, &r.slo, &r.class, &r.model, &r.precision, &r.batchSz} {
		c.close()
	}
	return r.f.Close()
}

// next returns the next job, or nil at the end of the file. The job comes
// from the reader's free list when one was recycled.
func (r *jobReader) next() (*sim.Job, error) {
	if r.pos == r.n {
		if r.done == r.rows {
			return nil, nil
		}
		if err := r.fill(int(min(readChunk, r.rows-r.done))); err != nil {
			return nil, err
		}
	}
	i := r.pos
	row := r.done + 1 // counting from 1, as people do
	arr, slo, b := r.arrivals[i], r.slos[i], r.batches[i]
	switch {
	case math.IsNaN(arr) || math.IsInf(arr, 0) || arr < 0:
		return nil, fmt.Errorf("read %s: row %d (job %d): arrival_s must be a finite time at least 0, got %v", r.name, row, r.ids[i], arr)
	case arr < r.lastArrival:
		return nil, fmt.Errorf("read %s: row %d (job %d): arrival_s %v is before the previous row's %v; jobs must be in arrival order", r.name, row, r.ids[i], arr, r.lastArrival)
	case !(slo >= 0) || math.IsInf(slo, 0):
		return nil, fmt.Errorf("read %s: row %d (job %d): slo_s must be a finite number of seconds at least 0, got %v", r.name, row, r.ids[i], slo)
	case b < 1:
		return nil, fmt.Errorf("read %s: row %d (job %d): batch_size must be at least 1, got %d", r.name, row, r.ids[i], b)
	}
	r.lastArrival = arr
	var j *sim.Job
	if n := len(r.free); n > 0 {
		j, r.free = r.free[n-1], r.free[:n-1]
	} else {
		j = new(sim.Job)
	}
	a := arr / r.load
	*j = sim.Job{
		ID:        r.ids[i],
		Arrival:   a,
		Deadline:  a + slo,
		Class:     sim.Class(r.classes[i]),
		Model:     int32(r.models[i]),
		Precision: int32(r.precisions[i]),
		Batch:     b,
	}
	r.pos++
	r.done++
	return j, nil
}

// recycle hands back a job the simulator has finished with: sim.Run
// emits a job's record once, when it is done with the job, and keeps no
// reference to it afterwards, so its memory can carry a later job. The
// jobs in memory are then only those queued or running.
func (r *jobReader) recycle(j *sim.Job) { r.free = append(r.free, j) }

// fill decodes the next n rows of every column.
func (r *jobReader) fill(n int) (err error) {
	defer func() {
		// parquet-go panics on some malformed pages.
		if p := recover(); p != nil {
			err = fmt.Errorf("read %s: %w: %v", r.name, parquetio.ErrCorrupt, p)
		}
	}()
	if err := r.id.int64s(r.ids[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.arrival.float64s(r.arrivals[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.slo.float64s(r.slos[:n]); err != nil {
		return r.wrap(err)
	}
	if err := r.batchSz.int32s(r.batches[:n]); err != nil {
		return r.wrap(err)
	}
	for _, c := range []struct {
		col    *column
		dst    []uint8
		lookup func([]byte) uint8
	}{
		{&r.class, r.classes, classCode},
		{&r.model, r.models, modelCode},
		{&r.precision, r.precisions, precisionCode},
	} {
		bad, err := c.col.codes(c.dst[:n], c.lookup)
		if err != nil {
			return r.wrap(err)
		}
		if bad >= 0 {
			return r.badValue(c.col.name, bad, c.col.badValue)
		}
	}
	r.pos, r.n = 0, n
	return nil
}

func (r *jobReader) wrap(err error) error {
	return fmt.Errorf("read %s: after row %d: %w", r.name, r.done, err)
}

// badValue reports the row that holds a string naming nothing known.
func (r *jobReader) badValue(col string, i int, value string) error {
	var want []string
	switch col {
	case "class":
		want = classNames[:]
	case "model":
		want = modelNames
	case "precision":
		want = precisionNames[:]
	}
	return fmt.Errorf("read %s: row %d (job %d): %s %q is not one of %v", r.name, r.done+int64(i)+1, r.ids[i], col, value, want)
}

func classCode(b []byte) uint8 {
	switch string(b) {
	case generate.ClassInteractive:
		return uint8(sim.Interactive)
	case generate.ClassBatch:
		return uint8(sim.Batch)
	}
	return noCode
}

func modelCode(b []byte) uint8 {
	if i := slices.Index(modelNames, string(b)); i >= 0 {
		return uint8(i)
	}
	return noCode
}

func precisionCode(b []byte) uint8 {
	switch string(b) {
	case generate.PrecisionFP32:
		return precFP32
	case generate.PrecisionFP16:
		return precFP16
	}
	return noCode
}

// column is a cursor over the pages of one required leaf column. Every
// page is either dictionary-indexed (its data are int32 indexes into the
// column chunk's dictionary) or plain (its data are the values); both are
// decoded by parquet-go, whatever the encoding on disk.
type column struct {
	name   string
	pages  parquet.Pages
	page   parquet.Page
	data   encoding.Values
	dict   parquet.Dictionary
	off, n int
	// The current dictionary, decoded once per column chunk.
	decodedFor  parquet.Dictionary
	dictInt64   []int64
	dictFloat64 []float64
	dictInt32   []int32
	dictCodes   []uint8
	badValue    string // the string behind the last noCode codes returned
}

var errShort = errors.New("column ends before the footer's row count")

// advance makes the next page current.
func (c *column) advance() error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	p, err := c.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("column %s: %w: %w", c.name, parquetio.ErrCorrupt, errShort)
	}
	if err != nil {
		return fmt.Errorf("column %s: %w", c.name, err)
	}
	if p.NumNulls() > 0 {
		parquet.Release(p)
		return fmt.Errorf("column %s: %w: a required column holds nulls", c.name, parquetio.ErrCorrupt)
	}
	c.page, c.data, c.dict = p, p.Data(), p.Dictionary()
	c.off, c.n = 0, int(p.NumValues())
	return nil
}

func (c *column) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
	}
}

// span makes sure the current page has values left and returns how many
// of want it can give.
func (c *column) span(want int) (int, error) {
	for c.off == c.n {
		if err := c.advance(); err != nil {
			return 0, err
		}
	}
	return min(want, c.n-c.off), nil
}

// indexes returns the next k dictionary indexes, checked against the
// dictionary's size.
func (c *column) indexes(k, dictLen int) ([]int32, error) {
	idx := c.data.Int32()[c.off : c.off+k]
	for _, x := range idx {
		if uint32(x) >= uint32(dictLen) {
			return nil, fmt.Errorf("column %s: %w: dictionary index %d of %d", c.name, parquetio.ErrCorrupt, x, dictLen)
		}
	}
	return idx, nil
}

func (c *column) int64s(dst []int64) error {
	return readValues(c, dst, &c.dictInt64, (*encoding.Values).Int64)
}

func (c *column) float64s(dst []float64) error {
	return readValues(c, dst, &c.dictFloat64, (*encoding.Values).Double)
}

func (c *column) int32s(dst []int32) error {
	return readValues(c, dst, &c.dictInt32, (*encoding.Values).Int32)
}

// readValues fills dst with the column's next values, of the type that get
// extracts, page by page: through the dictionary (decoded once into *cache
// per dictionary) or straight from plain pages.
func readValues[T any](c *column, dst []T, cache *[]T, get func(*encoding.Values) []T) error {
	for i := 0; i < len(dst); {
		k, err := c.span(len(dst) - i)
		if err != nil {
			return err
		}
		if c.dict != nil {
			if c.decodedFor != c.dict {
				v := c.dict.Page().Data()
				*cache, c.decodedFor = slices.Clone(get(&v)), c.dict
			}
			idx, err := c.indexes(k, len(*cache))
			if err != nil {
				return err
			}
			for j, x := range idx {
				dst[i+j] = (*cache)[x]
			}
		} else {
			copy(dst[i:i+k], get(&c.data)[c.off:])
		}
		c.off += k
		i += k
	}
	return nil
}

// codes maps the next len(dst) strings through lookup. It returns the
// position in dst of the first string lookup does not know (its text in
// c.badValue), or -1.
func (c *column) codes(dst []uint8, lookup func([]byte) uint8) (bad int, err error) {
	bad = -1
	for i := 0; i < len(dst); {
		k, err := c.span(len(dst) - i)
		if err != nil {
			return -1, err
		}
		if c.dict != nil {
			if c.decodedFor != c.dict {
				v := c.dict.Page().Data()
				data, offsets := v.ByteArray()
				c.dictCodes = make([]uint8, max(len(offsets)-1, 0))
				for e := range c.dictCodes {
					c.dictCodes[e] = lookup(data[offsets[e]:offsets[e+1]])
				}
				c.decodedFor = c.dict
			}
			idx, err := c.indexes(k, len(c.dictCodes))
			if err != nil {
				return -1, err
			}
			for j, x := range idx {
				code := c.dictCodes[x]
				if code == noCode && bad < 0 {
					bad = i + j
					c.badValue = dictString(c.dict, x)
				}
				dst[i+j] = code
			}
		} else {
			data, offsets := c.data.ByteArray()
			for j := range k {
				s := data[offsets[c.off+j]:offsets[c.off+j+1]]
				code := lookup(s)
				if code == noCode && bad < 0 {
					bad = i + j
					c.badValue = string(s)
				}
				dst[i+j] = code
			}
		}
		c.off += k
		i += k
	}
	return bad, nil
}

func dictString(d parquet.Dictionary, i int32) string {
	v := d.Page().Data()
	data, offsets := v.ByteArray()
	return string(data[offsets[i]:offsets[i+1]])
}
