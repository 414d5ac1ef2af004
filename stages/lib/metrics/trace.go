package metrics

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// Class codes, the values of Trace.Class: the trace's class column holds
// their names, generatespec.ClassInteractive and generatespec.ClassBatch.
const (
	Interactive = 0
	Batch       = 1
)

// classNames is indexed by the class codes.
var classNames = [...]string{Interactive: generatespec.ClassInteractive, Batch: generatespec.ClassBatch}

// NoDevice is Trace.Device for a rejected job, which ran on none.
const NoDevice = -1

// readChunk is how many rows the readers decode from each column at a
// time: enough to amortize the per-call costs, few enough that a footer
// claiming more rows than the file holds costs no memory before it is
// found out.
const readChunk = 1 << 16

// Trace is one policy's trace, <policy>/trace.parquet, loaded column-wise
// with its rows ordered by job id, so that row i of two traces of the same
// workload is the same job. Times are seconds on the simulated clock, as in
// schedule.TraceRow.
type Trace struct {
	// Policy is the policy simulated (the trace's policy column).
	Policy string
	// JobID holds the jobs' ids, ascending.
	JobID []int64
	// Class holds the jobs' class codes, Interactive or Batch.
	Class []uint8
	// Arrival, Start and End are the columns arrival_s, start_s and end_s;
	// Wait, Service and E2E the durations wait_s, service_s and e2e_s. A
	// rejected job has Start = End = Arrival and zero durations.
	Arrival, Start, End, Wait, Service, E2E []float64
	// SLOMet and Rejected are the columns slo_met and rejected.
	SLOMet, Rejected []bool
	// Device indexes Devices: the device that ran the job (for a split
	// job, its last part's); NoDevice for a rejected job.
	Device []int16
	// Devices are the cluster's device names in the order given to
	// ReadTrace.
	Devices []string
	// BatchSize is the samples of the batch the job ran in (or its last
	// part did), as run: with micro-batching, more than the job's own.
	BatchSize []int32
}

// Len is the number of jobs in the trace.
func (t *Trace) Len() int { return len(t.JobID) }

// ReadTrace reads the trace at path (a schedule stage's
// <policy>/trace.parquet) column by column and orders its rows by job id.
// devices are the cluster's device names in order, as ReadCluster returns
// them; Trace.Device indexes them.
//
// Errors name the file and the column or row (counted from 1, in file
// order) at fault: a missing column or one of another type, nulls, a row
// count short of the footer's, a class or device the trace should not
// hold, a rejected job with a device or a met SLO, a completed one without
// a device, a time that is not finite, two rows for one job, or rows of
// more than one policy. A corrupt file gives an error wrapping parquetio.ErrCorrupt,
// never a panic.
func ReadTrace(path string, devices []string) (*Trace, error) {
	devIndex, err := deviceIndex(devices)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	defer cf.Close()
	rows := cf.NumRows()
	if rows > math.MaxInt32 {
		return nil, fmt.Errorf("read %s: %d rows; at most %d are supported", path, rows, math.MaxInt32)
	}
	cols, err := openColumns(cf, path, []columnSpec{
		{"job_id", parquet.Int64}, {"policy", parquet.ByteArray}, {"class", parquet.ByteArray},
		{"device", parquet.ByteArray}, {"batch_size", parquet.Int32},
		{"arrival_s", parquet.Double}, {"start_s", parquet.Double}, {"end_s", parquet.Double},
		{"wait_s", parquet.Double}, {"service_s", parquet.Double}, {"e2e_s", parquet.Double},
		{"slo_met", parquet.Boolean}, {"rejected", parquet.Boolean},
	})
	if err != nil {
		return nil, err
	}
	n := int(rows)
	r := &traceReader{
		path: path, devices: devices, devIndex: devIndex,
		id: cols[0], policy: cols[1], class: cols[2], device: cols[3], batch: cols[4],
		times: cols[5:11], sloMet: cols[11], rejected: cols[12],
		codes: make([]int32, min(n, readChunk)),
	}
	// Capacity for the footer's count, up to a million rows: a corrupt
	// footer can claim any count, and a genuinely larger file grows.
	t := NewTrace("", devices, min(n, 1<<20))
	for done := 0; done < n; done += readChunk {
		if err := r.chunk(t, done, min(readChunk, n-done)); err != nil {
			return nil, err
		}
	}
	if len(r.policies.names) > 0 {
		t.Policy = r.policies.names[0]
	} else {
		// An empty trace names no policy; its directory does.
		t.Policy = filepath.Base(filepath.Dir(path))
	}
	if err := t.sortByID(path); err != nil {
		return nil, err
	}
	return t, nil
}

// traceReader holds ReadTrace's columns and what it has learnt.
type traceReader struct {
	path     string
	devices  []string
	devIndex map[string]int32

	id, policy, class, device, batch *parquetio.Column
	times                            []*parquetio.Column // as Trace.times
	sloMet, rejected                 *parquetio.Column

	policies interner
	codes    []int32 // scratch for a chunk's strings
}

// chunk reads the k rows after the first done into t's columns, checking
// them.
func (r *traceReader) chunk(t *Trace, done, k int) error {
	var ids []int64
	t.JobID, ids = extend(t.JobID, k)
	if err := r.id.Int64s(ids); err != nil {
		return chunkErr(r.path, done, err)
	}
	rowErr := func(i int, format string, args ...any) error {
		return fmt.Errorf("read %s: row %d (job %d): %s", r.path, done+i+1, ids[i], fmt.Sprintf(format, args...))
	}
	codes := r.codes[:k]

	// The interner knows every string: it learns them.
	if _, err := r.policy.Codes(codes, r.policies.code); err != nil {
		return chunkErr(r.path, done, err)
	}
	if i := slices.IndexFunc(codes, func(c int32) bool { return c != 0 }); i >= 0 {
		return rowErr(i, "policy %q, but earlier rows are of %q; a trace holds one policy", r.policies.names[codes[i]], r.policies.names[0])
	}

	bad, err := r.class.Codes(codes, classCode)
	if err != nil {
		return chunkErr(r.path, done, err)
	}
	if bad >= 0 {
		return rowErr(bad, "class %q is not one of %v", r.class.BadValue(), classNames)
	}
	var cls []uint8
	t.Class, cls = extend(t.Class, k)
	for i, c := range codes {
		cls[i] = uint8(c)
	}

	var rej, met []bool
	t.Rejected, rej = extend(t.Rejected, k)
	if err := r.rejected.Bools(rej); err != nil {
		return chunkErr(r.path, done, err)
	}
	t.SLOMet, met = extend(t.SLOMet, k)
	if err := r.sloMet.Bools(met); err != nil {
		return chunkErr(r.path, done, err)
	}
	noDevice := int32(len(r.devices))
	bad, err = r.device.Codes(codes, func(b []byte) int32 {
		if len(b) == 0 {
			return noDevice
		}
		if i, ok := r.devIndex[string(b)]; ok {
			return i
		}
		return -1
	})
	if err != nil {
		return chunkErr(r.path, done, err)
	}
	if bad >= 0 {
		return rowErr(bad, "device %q is not one of the cluster's %q", r.device.BadValue(), r.devices)
	}
	var dev []int16
	t.Device, dev = extend(t.Device, k)
	for i, c := range codes {
		switch {
		case rej[i] && met[i]:
			return rowErr(i, "rejected, but met its SLO")
		case rej[i] && c != noDevice:
			return rowErr(i, "rejected, but ran on device %q", r.devices[c])
		case !rej[i] && c == noDevice:
			return rowErr(i, "not rejected, but has no device")
		case c == noDevice:
			dev[i] = NoDevice
		default:
			dev[i] = int16(c)
		}
	}

	var sizes []int32
	t.BatchSize, sizes = extend(t.BatchSize, k)
	if err := r.batch.Int32s(sizes); err != nil {
		return chunkErr(r.path, done, err)
	}
	for c, s := range t.times() {
		var vals []float64
		*s, vals = extend(*s, k)
		if err := r.times[c].Float64s(vals); err != nil {
			return chunkErr(r.path, done, err)
		}
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return rowErr(i, "%s is %v; times must be finite", r.times[c].Name(), v)
			}
		}
	}
	return nil
}

// times are the trace's time columns, in the order arrival, start, end,
// wait, service, e2e.
func (t *Trace) times() []*[]float64 {
	return []*[]float64{&t.Arrival, &t.Start, &t.End, &t.Wait, &t.Service, &t.E2E}
}

// sortByID puts the rows in job id order, checking that no id repeats.
func (t *Trace) sortByID(path string) error {
	perm, err := idOrder(t.JobID)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if perm == nil {
		return nil // already in order
	}
	t.JobID = permute(t.JobID, perm)
	t.Class = permute(t.Class, perm)
	t.Device = permute(t.Device, perm)
	t.BatchSize = permute(t.BatchSize, perm)
	t.SLOMet = permute(t.SLOMet, perm)
	t.Rejected = permute(t.Rejected, perm)
	for _, s := range t.times() {
		*s = permute(*s, perm)
	}
	return nil
}

// idOrder returns the permutation that sorts ids (perm[k] is the row of
// the k-th smallest), or nil when they are in order already. Two equal ids
// are an error naming both rows. ids that span at most twice their count,
// as the workloads' consecutive ids do, are placed in slots in linear
// time; others are sorted.
func idOrder(ids []int64) ([]int32, error) {
	if len(ids) == 0 || slices.IsSorted(ids) {
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				return nil, duplicate(ids[i], i-1, i)
			}
		}
		return nil, nil
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	n := len(ids)
	if span := uint64(hi) - uint64(lo); span < 2*uint64(n) {
		slot := make([]int32, span+1)
		for i := range slot {
			slot[i] = -1
		}
		for i, id := range ids {
			s := id - lo
			if slot[s] >= 0 {
				return nil, duplicate(id, int(slot[s]), i)
			}
			slot[s] = int32(i)
		}
		perm := slot[:0]
		for _, i := range slot {
			if i >= 0 {
				perm = append(perm, i)
			}
		}
		return perm, nil
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int { return cmp.Or(cmp.Compare(ids[a], ids[b]), cmp.Compare(a, b)) })
	for k := 1; k < n; k++ {
		if a, b := perm[k-1], perm[k]; ids[a] == ids[b] {
			return nil, duplicate(ids[a], int(a), int(b))
		}
	}
	return perm, nil
}

func duplicate(id int64, i, j int) error {
	return fmt.Errorf("rows %d and %d are both job %d", i+1, j+1, id)
}

func permute[T any](s []T, perm []int32) []T {
	out := make([]T, len(perm))
	for k, i := range perm {
		out[k] = s[i]
	}
	return out
}

func classCode(b []byte) int32 {
	switch string(b) {
	case generatespec.ClassInteractive:
		return Interactive
	case generatespec.ClassBatch:
		return Batch
	}
	return -1
}

// deviceIndex maps device names to their positions, checking that they
// are distinct, not empty, and few enough for Trace.Device.
func deviceIndex(devices []string) (map[string]int32, error) {
	if len(devices) > math.MaxInt16 {
		return nil, fmt.Errorf("%d devices; at most %d are supported", len(devices), math.MaxInt16)
	}
	m := make(map[string]int32, len(devices))
	for i, d := range devices {
		if d == "" {
			return nil, fmt.Errorf("device %d of the cluster has no name", i+1)
		}
		if _, dup := m[d]; dup {
			return nil, fmt.Errorf("the cluster names device %q twice", d)
		}
		m[d] = int32(i)
	}
	return m, nil
}

// columnSpec names a column a reader needs and its physical type.
type columnSpec struct {
	name string
	kind parquet.Kind
}

// openColumns opens the columns specs name, in order.
func openColumns(cf *parquetio.ColumnFile, path string, specs []columnSpec) ([]*parquetio.Column, error) {
	cols := make([]*parquetio.Column, len(specs))
	for i, s := range specs {
		c, err := cf.Column(s.name, s.kind)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		cols[i] = c
	}
	return cols, nil
}

// extend lengthens s by k elements and returns it with the new ones.
func extend[T any](s []T, k int) (all, added []T) {
	s = slices.Grow(s, k)
	s = s[:len(s)+k]
	return s, s[len(s)-k:]
}

// chunkErr wraps an error from a column read that began after row done.
func chunkErr(path string, done int, err error) error {
	return fmt.Errorf("read %s: after row %d: %w", path, done, err)
}

// interner gives each distinct string a code, from 0 in order of first
// sight; its code method is a lookup for parquetio.Column.Codes that knows
// every string.
type interner struct {
	names []string
	index map[string]int32
}

func (in *interner) code(b []byte) int32 {
	if i, ok := in.index[string(b)]; ok {
		return i
	}
	if in.index == nil {
		in.index = make(map[string]int32)
	}
	i := int32(len(in.names))
	in.names = append(in.names, string(b))
	in.index[string(b)] = i
	return i
}
