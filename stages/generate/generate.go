package generate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// Output is where and how Run writes its artifacts.
type Output struct {
	// Dir receives every file; it exists (the runner's staging directory).
	Dir string
	// Metadata is the provenance added to every Parquet footer.
	Metadata map[string]string
	// Progress, if not nil, is called with the jobs written so far and the
	// total, about once per million jobs and once at the end. Calls are
	// serialized.
	Progress func(done, total int64)
	// EvalReplications is how many replications of the eval workload the
	// schedule stage simulates (schedule.replications): a synthetic eval
	// workload is written once per replication, each drawn from streams
	// of its own (generatespec.EvalJobsFile names the files); an imported
	// one once. 0 is 1.
	EvalReplications int
}

// chunkRows is how many jobs the generating goroutine hands to the writing
// one at a time: large enough that the hand-off costs nothing per job, small
// enough that the chunks in flight stay a few megabytes.
const chunkRows = 1 << 14

// chunksInFlight is how many chunks each workload cycles between its
// generator and its writer; more than two lets the generator run ahead while
// the writer compresses a page.
const chunksInFlight = 3

// jobsWriterOptions skip the min/max bounds (page statistics and column
// index) of the string columns. parquet-go computes them by comparing every
// value's string rather than the few dictionary entries, which took about a
// fifth of the writer's time, and the min and max of a handful of category
// names help no reader skip a page.
var jobsWriterOptions = []parquet.WriterOption{
	parquet.SkipPageBounds("class"), parquet.SkipPageStatistics("class"),
	parquet.SkipPageBounds("model"), parquet.SkipPageStatistics("model"),
	parquet.SkipPageBounds("precision"), parquet.SkipPageStatistics("precision"),
}

// streamSeeds derives the PCG seed of one random stream of a workload:
// SHA-256 over "mlsched/generate/v1", the workload name, the stream name
// ("jobs" or "arrivals"), each NUL-terminated, then the global seed and the
// workload seed as little-endian int64s; the first 16 bytes of the sum are
// the two PCG seed words. Hashing the name in keeps train and eval apart even
// under equal seeds, and the separate streams keep a job's attributes
// unchanged when only the arrival process changes.
func streamSeeds(global int64, workload string, seed int64, stream string) (uint64, uint64) {
	h := sha256.New()
	h.Write([]byte("mlsched/generate/v1\x00" + workload + "\x00" + stream + "\x00"))
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(global))
	binary.LittleEndian.PutUint64(b[8:], uint64(seed))
	h.Write(b[:])
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])
}

// workloadSpec is one workload as Run generates or imports it.
type workloadSpec struct {
	name string
	// rep is the workload's replication, from 1 (the train workload has
	// one), and file its jobs file.
	rep     int
	file    string
	ordinal int64 // job ids start at ordinal·MaxJobs
	w       Workload
	// src reads an imported workload's rows; nil for a synthetic one.
	src jobSource
	// models are the models its statistics count: the weighted ones for
	// a synthetic workload, the whole catalog for an imported one.
	models []modelSpec
}

// stream names one of the workload's random streams: the stream itself for
// the first replication (so that one replication draws what a run without
// replications always drew), "<stream>#<r>" for replication r after.
func (s workloadSpec) stream(name string) string {
	if s.rep > 1 {
		return fmt.Sprintf("%s#%d", name, s.rep)
	}
	return name
}

// Run generates every workload of cfg from the pipeline's global seed, or
// reads it from its Import file, its jobs of cat's models (the profile's
// catalog), and writes JobsFile(name) for each plus
// StatsFile into out.Dir. An Import path is used as given: the caller
// resolves it against the config's directory. The workloads are made
// concurrently, each by a generating (or reading) and a writing
// goroutine. The files are a pure function of cfg, seed and the imported
// files' content. Run checks ctx between chunks of jobs and returns
// ctx.Err() once it is cancelled.
func Run(ctx context.Context, cfg Config, seed int64, cat *catalog.Catalog, out Output) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("generate: invalid config: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Models)) {
		if _, ok := cat.Lookup(name); !ok {
			return fmt.Errorf("generate: generate.models.%s: %w", name, cat.Unknown(name))
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	pop := newPopulation(cfg, cat)
	specs := []workloadSpec{
		{name: WorkloadTrain, rep: 1, file: JobsFile(WorkloadTrain), ordinal: 0, w: cfg.Train},
		{name: WorkloadEval, rep: 1, file: generatespec.EvalJobsFile(1), ordinal: 1, w: cfg.Eval},
		{name: generatespec.WorkloadHoldout, rep: 1, file: JobsFile(generatespec.WorkloadHoldout), ordinal: generatespec.HoldoutOrdinal, w: cfg.Holdout},
	}
	// The eval workload's later replications: ordinals after the first
	// eval's, so that every job id of the run stays unique.
	for r := 2; r <= generatespec.EvalWorkloads(cfg, out.EvalReplications); r++ {
		specs = append(specs, workloadSpec{name: WorkloadEval, rep: r, file: generatespec.EvalJobsFile(r), ordinal: int64(r), w: cfg.Eval})
	}
	prog := &progress{report: out.Progress}
	known := true // a CSV's rows are counted only at its end
	for i := range specs {
		s := &specs[i]
		if s.w.Import == "" {
			s.models = pop.models
			prog.total += s.w.Jobs
			continue
		}
		src, err := openImport(s.w.Import, "generate."+s.name+".import", cat)
		if err != nil {
			closeSources(specs)
			return err
		}
		s.src, s.models = src, catalogModels(cat)
		n := src.rows()
		known = known && n >= 0
		prog.total += max(n, 0)
	}
	defer closeSources(specs)
	if !known {
		prog.total = 0 // reports come without a total
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]*stats, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() {
			results[i], errs[i] = writeWorkload(runCtx, s, seed, &pop, out, prog)
			if errs[i] != nil {
				cancel() // no point finishing the other workload
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		removeOutputs(out.Dir, specs)
		return err
	}
	// A workload stopped by the other's failure reports context.Canceled;
	// the failure itself is the error worth returning.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		removeOutputs(out.Dir, specs)
		return first
	}

	var rows []Stat
	for i, s := range specs {
		rows = append(rows, results[i].rows(s.name, s.rep, &pop, s.models)...)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, StatsFile), rows, out.Metadata); err != nil {
		removeOutputs(out.Dir, specs)
		return fmt.Errorf("generate: write %s: %w", StatsFile, err)
	}
	prog.finish()
	return nil
}

// closeSources closes the imported workloads' files.
func closeSources(specs []workloadSpec) {
	for _, s := range specs {
		if s.src != nil {
			s.src.close()
		}
	}
}

// removeOutputs deletes the job files of a failed run so that nothing
// half-written is left in the staging directory.
func removeOutputs(dir string, specs []workloadSpec) {
	for _, s := range specs {
		os.Remove(filepath.Join(dir, s.file))
	}
}

// writeWorkload generates or imports one workload and streams it to its
// jobs file: a goroutine draws (or reads) jobs into chunks while this one
// writes them, so drawing and encoding overlap. Memory is bounded by the
// chunks in flight and the writer's current row group.
func writeWorkload(ctx context.Context, s workloadSpec, seed int64, pop *population, out Output, prog *progress) (st *stats, err error) {
	name := s.file
	f, err := os.Create(filepath.Join(out.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("generate: write %s: %v", name, r)
		}
		if err != nil {
			f.Close()
		}
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan []Job, chunksInFlight)
	full := make(chan []Job, chunksInFlight)
	for range chunksInFlight {
		free <- make([]Job, chunkRows)
	}
	st = newStats(len(s.models))
	var perr error // the reader's, read once full is closed
	go func() {
		defer close(full)
		if s.src != nil {
			perr = importJobs(ctx, s, pop, st, free, full)
		} else {
			generateJobs(ctx, s, seed, pop, st, free, full)
		}
	}()

	w := parquet.NewGenericWriter[Job](f, parquetio.WriterOptions(out.Metadata, jobsWriterOptions...)...)
	var werr error
	for chunk := range full {
		if werr == nil {
			if _, werr = w.Write(chunk); werr != nil {
				cancel() // stop the generator; keep draining so it can exit
			} else {
				prog.add(int64(len(chunk)))
			}
		}
		free <- chunk[:cap(chunk)]
	}
	// full is closed only after the generator returned, so st and perr
	// are complete and ctx.Err() tells whether it stopped early.
	switch {
	case werr != nil:
		return nil, fmt.Errorf("generate: write %s: %w", name, werr)
	case perr != nil:
		return nil, perr
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("generate: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("generate: write %s: %w", name, err)
	}
	return st, nil
}

// generateJobs draws the workload's jobs in order, filling chunks taken from
// free and sending them on full, until all jobs are drawn or ctx is done.
func generateJobs(ctx context.Context, s workloadSpec, seed int64, pop *population, st *stats, free <-chan []Job, full chan<- []Job) {
	jobs := rand.New(rand.NewPCG(streamSeeds(seed, s.name, s.w.Seed, s.stream("jobs"))))
	arrSrc := rand.NewPCG(streamSeeds(seed, s.name, s.w.Seed, s.stream("arrivals")))
	arr := newArrivals(s.w.Arrival, rand.New(arrSrc), arrSrc)
	id := s.ordinal * MaxJobs
	for left := s.w.Jobs; left > 0; {
		var chunk []Job
		select {
		case <-ctx.Done():
			return
		case chunk = <-free:
		}
		if ctx.Err() != nil {
			return
		}
		chunk = chunk[:min(int64(len(chunk)), left)]
		for i := range chunk {
			j := &chunk[i]
			j.ID = id
			j.ArrivalS = arr.next()
			class, model := pop.draw(jobs, j)
			st.add(j, class, model)
			id++
		}
		left -= int64(len(chunk))
		full <- chunk
	}
}

// progress serializes progress reports from the concurrent workloads and
// rate-limits them to one per parquetio.RowGroupRows jobs. A total of 0 is
// unknown (a CSV import's rows) until finish.
type progress struct {
	report     func(done, total int64)
	total      int64
	mu         sync.Mutex
	done, next int64
}

func (p *progress) add(n int64) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.done >= p.next && (p.total == 0 || p.done < p.total) {
		p.report(p.done, p.total)
		p.next = p.done + parquetio.RowGroupRows
	}
}

// finish reports completion once every file, statistics included, is written.
func (p *progress) finish() {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total == 0 {
		p.total = p.done // known now
	}
	p.report(p.done, p.total)
}
