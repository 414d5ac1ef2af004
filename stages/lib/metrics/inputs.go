package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// Cluster is what the metrics need of cluster.parquet: the devices in
// cluster order and each one's lanes.
type Cluster struct {
	// Devices are the devices' names; the order is the one ReadTrace and
	// ReadBusy take.
	Devices []string
	// Lanes[d] is device d's lane count, at least 1.
	Lanes []int32
}

// ReadCluster reads the columns device and lanes of a schedule stage's
// cluster.parquet. A device without a name or named twice, or with fewer
// than one lane, is an error naming the file and row.
func ReadCluster(path string) (Cluster, error) {
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return Cluster{}, fmt.Errorf("read cluster: %w", err)
	}
	defer cf.Close()
	cols, err := openColumns(cf, path, []columnSpec{{"device", parquet.ByteArray}, {"lanes", parquet.Int32}})
	if err != nil {
		return Cluster{}, err
	}
	// A cluster has a handful of devices: a footer claiming more than a
	// trace could index is corrupt, not large.
	n := cf.NumRows()
	if n > math.MaxInt16 {
		return Cluster{}, fmt.Errorf("read %s: %d devices; at most %d are supported", path, n, math.MaxInt16)
	}
	var names interner
	codes := make([]int32, n)
	if _, err := cols[0].Codes(codes, names.code); err != nil {
		return Cluster{}, fmt.Errorf("read %s: %w", path, err)
	}
	cl := Cluster{Devices: make([]string, n), Lanes: make([]int32, n)}
	if err := cols[1].Int32s(cl.Lanes); err != nil {
		return Cluster{}, fmt.Errorf("read %s: %w", path, err)
	}
	seen := make([]bool, len(names.names))
	for i, c := range codes {
		d := names.names[c]
		switch {
		case d == "":
			return Cluster{}, fmt.Errorf("read %s: row %d: device has no name", path, i+1)
		case seen[c]:
			return Cluster{}, fmt.Errorf("read %s: row %d: device %q appears twice", path, i+1, d)
		case cl.Lanes[i] < 1:
			return Cluster{}, fmt.Errorf("read %s: row %d: device %q has %d lanes; want at least 1", path, i+1, d, cl.Lanes[i])
		}
		seen[c] = true
		cl.Devices[i] = d
	}
	return cl, nil
}

// Bounds are the lower bounds of a schedule stage's bounds.parquet that
// the gaps compare with: the makespan and the mean latency no policy can
// beat in expectation.
type Bounds struct {
	// MakespanLBS is the column makespan_lb_s, MeanLatencyLBS
	// mean_latency_lb_s; both in seconds.
	MakespanLBS, MeanLatencyLBS float64
}

// ReadBounds reads a schedule stage's bounds.parquet: one row per
// replication, in order (its replication column counts from 1), each the
// bounds of that replication's workload.
func ReadBounds(path string) ([]Bounds, error) {
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return nil, fmt.Errorf("read bounds: %w", err)
	}
	defer cf.Close()
	cols, err := openColumns(cf, path, []columnSpec{{"makespan_lb_s", parquet.Double}, {"mean_latency_lb_s", parquet.Double}, {"replication", parquet.Int32}})
	if err != nil {
		return nil, err
	}
	n := cf.NumRows()
	if n < 1 || n > maxReplications {
		return nil, fmt.Errorf("read %s: %d rows, want one per replication (1 to %d)", path, n, maxReplications)
	}
	v := [2][]float64{make([]float64, n), make([]float64, n)}
	for i, c := range cols[:2] {
		if err := c.Float64s(v[i]); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	reps := make([]int32, n)
	if err := cols[2].Int32s(reps); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := make([]Bounds, n)
	for r := range out {
		if reps[r] != int32(r+1) {
			return nil, fmt.Errorf("read %s: row %d: replication %d; want the replications in order from 1", path, r+1, reps[r])
		}
		for i, c := range cols[:2] {
			if x := v[i][r]; !(x >= 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("read %s: row %d: %s is %v; want a finite time at least 0", path, r+1, c.Name(), x)
			}
		}
		out[r] = Bounds{MakespanLBS: v[0][r], MeanLatencyLBS: v[1][r]}
	}
	return out, nil
}

// maxReplications bounds the rows of bounds.parquet: schedule's
// replications are at most 100 (schedulespec.MaxReplications).
const maxReplications = 1000

// ReadBusy reads a policy's <policy>/devices.parquet, one row per batch run
// on a lane, and returns for each device, in the order of devices, the sum
// over its batches of end_s - start_s: the lane-seconds it was busy.
// devices are the cluster's device names, as ReadCluster returns them; a
// device not among them is an error naming the file, row and name, as is a
// batch that ends before it starts or a time that is not finite.
func ReadBusy(path string, devices []string) ([]float64, error) {
	devIndex, err := deviceIndex(devices)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return nil, fmt.Errorf("read busy time: %w", err)
	}
	defer cf.Close()
	cols, err := openColumns(cf, path, []columnSpec{{"device", parquet.ByteArray}, {"start_s", parquet.Double}, {"end_s", parquet.Double}})
	if err != nil {
		return nil, err
	}
	n := cf.NumRows()
	k0 := int(min(n, readChunk))
	codes, starts, ends := make([]int32, k0), make([]float64, k0), make([]float64, k0)
	lookup := func(b []byte) int32 {
		if i, ok := devIndex[string(b)]; ok {
			return i
		}
		return -1
	}
	busy := make([]float64, len(devices))
	for done := int64(0); done < n; {
		k := int(min(readChunk, n-done))
		bad, err := cols[0].Codes(codes[:k], lookup)
		if err != nil {
			return nil, chunkErr(path, int(done), err)
		}
		if bad >= 0 {
			return nil, fmt.Errorf("read %s: row %d: device %q is not one of the cluster's %q", path, done+int64(bad)+1, cols[0].BadValue(), devices)
		}
		if err := cols[1].Float64s(starts[:k]); err != nil {
			return nil, chunkErr(path, int(done), err)
		}
		if err := cols[2].Float64s(ends[:k]); err != nil {
			return nil, chunkErr(path, int(done), err)
		}
		for i, d := range codes[:k] {
			s, e := starts[i], ends[i]
			if !(s <= e) || math.IsInf(s, 0) || math.IsInf(e, 0) {
				return nil, fmt.Errorf("read %s: row %d: a batch from start_s %v to end_s %v; want finite times, the end not before the start", path, done+int64(i)+1, s, e)
			}
			busy[d] += e - s
		}
		done += int64(k)
	}
	return busy, nil
}

// Samples maps the ids of a workload's jobs to their own samples, their
// batch sizes, for the throughput in samples per second. The workloads'
// ids are consecutive (see package generate), so it is a slice indexed by
// id minus the smallest; ids that span more than twice their count are
// kept in a map instead.
type Samples struct {
	first  int64
	dense  []int32 // by id - first; 0 where no job has the id
	sparse map[int64]int32
	n      int
}

// Of returns the samples of job id, and whether the workload has the job.
func (s *Samples) Of(id int64) (int32, bool) {
	if s.sparse != nil {
		v, ok := s.sparse[id]
		return v, ok
	}
	if i := uint64(id) - uint64(s.first); i < uint64(len(s.dense)) && s.dense[i] > 0 {
		return s.dense[i], true
	}
	return 0, false
}

// Len is the number of jobs.
func (s *Samples) Len() int { return s.n }

// JobSamples reads the columns job_id and batch_size of a workload's jobs
// file (generate's jobs-eval.parquet). Two rows for one job, or a batch
// size below 1, are errors naming the file and row.
func JobSamples(path string) (*Samples, error) {
	cf, err := parquetio.OpenColumns(path)
	if err != nil {
		return nil, fmt.Errorf("read job samples: %w", err)
	}
	defer cf.Close()
	cols, err := openColumns(cf, path, []columnSpec{{"job_id", parquet.Int64}, {"batch_size", parquet.Int32}})
	if err != nil {
		return nil, err
	}
	n := cf.NumRows()
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("read %s: %d rows; at most %d are supported", path, n, math.MaxInt32)
	}
	hint := int(min(n, 1<<20))
	ids, sizes := make([]int64, 0, hint), make([]int32, 0, hint)
	for done := 0; done < int(n); {
		k := min(readChunk, int(n)-done)
		var id []int64
		var sz []int32
		ids, id = extend(ids, k)
		sizes, sz = extend(sizes, k)
		if err := cols[0].Int64s(id); err != nil {
			return nil, chunkErr(path, done, err)
		}
		if err := cols[1].Int32s(sz); err != nil {
			return nil, chunkErr(path, done, err)
		}
		for i, b := range sz {
			if b < 1 {
				return nil, fmt.Errorf("read %s: row %d (job %d): batch_size must be at least 1, got %d", path, done+i+1, id[i], b)
			}
		}
		done += k
	}
	s := &Samples{n: len(ids)}
	if len(ids) == 0 {
		return s, nil
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	if span := uint64(hi) - uint64(lo); span < 2*uint64(len(ids)) {
		s.first, s.dense = lo, make([]int32, span+1)
		for i, id := range ids {
			if s.dense[id-lo] > 0 { // batch sizes are at least 1
				return nil, fmt.Errorf("read %s: %w", path, duplicate(id, slices.Index(ids, id), i))
			}
			s.dense[id-lo] = sizes[i]
		}
		return s, nil
	}
	s.sparse = make(map[int64]int32, len(ids))
	for i, id := range ids {
		if _, dup := s.sparse[id]; dup {
			return nil, fmt.Errorf("read %s: %w", path, duplicate(id, slices.Index(ids, id), i))
		}
		s.sparse[id] = sizes[i]
	}
	return s, nil
}
