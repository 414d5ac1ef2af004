package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Inputs are the upstream files the stage reads.
type Inputs struct {
	// Models is the profile's models.parquet: the catalog.
	Models string
	// Samples is the profile's samples.parquet.
	Samples string
	// Jobs is generate's jobs-eval.parquet: the first replication's eval
	// workload, which the real runs and the studies run.
	Jobs string
	// Workloads, if not empty, lists the eval workload of each
	// replication, from the first (Workloads[0] is Jobs; generate writes
	// generatespec.EvalReplicationFiles). A replication beyond it
	// simulates Jobs.
	Workloads []string
	// Predictor is the train stage's predictor.json, which
	// schedule.predictor "learned" predicts with; it may be empty
	// otherwise.
	Predictor string
	// Placement is the train stage's placement.onnx, and ORTLib the
	// onnxruntime library (ORTSource where its path came from), which a
	// learned policy needs; they may be empty without one.
	Placement string
	ORTLib    string
	ORTSource ort.Source
}

// Output is where and how Run writes its artifacts.
type Output struct {
	// Dir receives every file; it exists (the runner's staging directory).
	Dir string
	// Metadata is the provenance added to every Parquet footer.
	Metadata map[string]string
	// Progress, if not nil, is called with the jobs simulated so far over
	// all simulations and the total, at most a few times a second and once
	// at the end. It may be called from any goroutine, never concurrently.
	// The capacity search's share of the total is an estimate.
	Progress func(done, total int64)
	// Memo keeps the sweep's simulations across runs; nil simulates every
	// one.
	Memo Memo
	// Notes, if not nil, receives what the run measured apart from its
	// reproducible files: each learned simulation's evaluator and its
	// wall-clock time in it; and, under NoteRejected, the warning that more than
	// RejectedWarnShare of the jobs fit on no device.
	Notes map[string]string
	// Warn, if not nil, is told what the user should know before reading
	// the results (that warning), as it is found.
	Warn func(msg string)
	// Shard, if not nil, asks for one part of the load sweep alone (see
	// Shards): its memo entries are the part's result, and no file is
	// written.
	Shard *Shard
}

// Shard is one part of the load sweep (schedulespec.Shards): the runs
// (policy, replication) whose index in the config's order is Index modulo
// Count.
type Shard struct{ Index, Count int }

// NoteRejected is the manifest note that warns of a workload of which
// more than RejectedWarnShare fits on no device.
const NoteRejected = "warning.rejected"

// Memo keeps the results of units across runs of the stage: the runner's
// memo (pipeline.Memo). Get returns the directory of the entry whose key is
// the stage's key lines with config in place of the section and lines
// added, building it with build when it is absent.
type Memo interface {
	Get(unit string, config any, lines [][2]string, build func(dir string) error) (string, error)
}

// rowBuffer is how many rows a trace or devices writer collects before
// handing them to parquet-go, which takes them 64 at a time: 256 trace rows
// (40 KiB) are still in the cache when parquet-go reads them back column
// by column, 4096 (640 KiB) were not. The files' bytes do not depend on it
// as long as it is a multiple of 64 dividing parquetio.RowGroupRows:
// parquet-go ends a page only between its 64-row chunks, which then start
// at the same rows whatever the size of each Write.
const rowBuffer = 256

// Run simulates the eval workload in in.Jobs under every policy of cfg on
// the cluster cfg describes, with service times from the profile samples in
// in.Samples, and writes ClusterFile, BoundsFile, RunsFile, each policy's
// TraceFile and DevicesFile, and the sweep's SweepFile and CapacityFile
// into out.Dir. The files are a pure function of cfg, seed and the two
// inputs. Simulations run concurrently, at most GOMAXPROCS at once, each
// streaming the jobs file on its own. Run returns ctx.Err() soon after ctx
// is cancelled; on any error the output directory holds partial files,
// which the runner discards.
func Run(ctx context.Context, cfg Config, seed int64, in Inputs, out Output) (err error) {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("schedule: invalid config: %w", err)
	}
	cat, err := catalog.Read(in.Models)
	if err != nil {
		return fmt.Errorf("schedule: profile's catalog: %w", err)
	}
	samples, err := parquetio.ReadAll[profilespec.Sample](in.Samples)
	if err != nil {
		return fmt.Errorf("schedule: read profile samples: %w", err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	cl, err := newCluster(cfg, cat, table, in)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	defer func() {
		if cerr := cl.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("schedule: %w", cerr)
		}
	}()
	var notesMu sync.Mutex
	note := func(k, v string) {
		if out.Notes != nil {
			notesMu.Lock()
			defer notesMu.Unlock()
			out.Notes[k] = v
		}
	}
	if out.Shard != nil {
		return runShard(ctx, cfg, cl, seed, in, out)
	}
	// The real runs go first, alone on the cores.
	if err := runReal(ctx, cfg, cat, samples, table, seed, in, out, note); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: %w", err)
	}
	// Each replication's workload is read for its load and its bounds,
	// which resolves every curve the simulations need, so that a missing
	// one is reported before any of them starts.
	reps, err := replications(ctx, cfg, cl, in)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: %w", err)
	}
	first := reps[0]
	warning, err := cl.RejectedWarning(ctx, first.jobs, first.load, first.bounds)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: %w", err)
	}
	if warning != "" {
		note(NoteRejected, warning)
		if out.Warn != nil {
			out.Warn("schedule: " + warning)
		}
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, ClusterFile), cl.Rows(), out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", ClusterFile, err)
	}
	bounds := make([]BoundsRow, len(reps))
	for i, r := range reps {
		bounds[i] = r.bounds
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, BoundsFile), bounds, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", BoundsFile, err)
	}
	var units []Unit
	var runs []RunRow
	var total int64
	for _, r := range runsOfSpecs(cfg.Runs(), cfg.Replications, nil) {
		rep := reps[r.rep-1]
		units = append(units, Unit{Spec: r.spec, Replication: r.rep, Load: rep.load, Predictor: cfg.Predictor})
		runs = append(runs, RunRow{Policy: r.spec, Replication: int32(r.rep), Jobs: rep.bounds.Jobs, Load: rep.load,
			Trace: ReplicationFile(r.spec, r.rep, TraceFile), Devices: ReplicationFile(r.spec, r.rep, DevicesFile)})
		total += rep.bounds.Jobs
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, RunsFile), runs, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", RunsFile, err)
	}
	sw, err := newSweeper(ctx, cfg, cl, seed, in, out.Memo, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: sweep: %w", err)
	}

	loads := make([]float64, len(reps))
	for i, r := range reps {
		loads[i] = r.load
	}
	ss := studies(cfg, cl, loads)
	var studyJobs []int64
	var studyTotal int64
	if len(ss) > 0 {
		for _, r := range reps[:cfg.StudyReplications()] {
			b, err := cl.Bounds(ctx, r.jobs, r.load, cfg.Studies.Jobs)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("schedule: studies: %w", r.errorf(err))
			}
			studyJobs = append(studyJobs, b.Jobs)
		}
		for _, st := range ss {
			studyTotal += studyJobs[st.u.Replication-1]
		}
	}
	prog := &progress{report: out.Progress, total: total + sw.estimate() + studyTotal}
	sw.prog = prog
	prog.begin()
	served := &servings{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, u := range units {
		g.Go(func() error {
			dir := filepath.Join(out.Dir, filepath.Dir(filepath.FromSlash(ReplicationFile(u.Spec, u.Replication, TraceFile))))
			rep := reps[u.Replication-1]
			o := filesIn(dir, out.Metadata)
			o.serving = served.add
			err := runUnit(gctx, u, cfg, cl, seed, rep.jobs, rep.bounds.Jobs, o, prog, note)
			if err != nil && u.Replication > 1 {
				return fmt.Errorf("replication %d: %w", u.Replication, err)
			}
			return err
		})
	}
	sw.grid(gctx, g)
	sw.runStudies(gctx, g, ss, studyJobs)
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if err := served.write(out.Dir, out.Metadata); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	points, capacity, err := sw.search(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: sweep: %w", err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, SweepFile), points, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", SweepFile, err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, CapacityFile), capacity, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", CapacityFile, err)
	}
	if err := fillMAPE(ctx, cl, ss, seed, reps, cfg.Studies.Jobs); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: studies: %w", err)
	}
	rows := make([]StudyRow, len(ss))
	for i, st := range ss {
		rows[i] = st.row
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, StudiesFile), rows, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", StudiesFile, err)
	}
	prog.finish()
	return nil
}

// runShard simulates one part of the load sweep into the memo: the grid
// points and the capacity search of the runs (policy, replication) that
// belong to it, exactly as Run would, so that Run then finds them there.
func runShard(ctx context.Context, cfg Config, cl *cluster.Cluster, seed int64, in Inputs, out Output) error {
	if out.Memo == nil {
		return errors.New("schedule: a part of the sweep needs a memo to leave its simulations in")
	}
	if sh := out.Shard; sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return fmt.Errorf("schedule: part %d of %d", sh.Index, sh.Count)
	}
	sw, err := newSweeper(ctx, cfg, cl, seed, in, out.Memo, out.Shard)
	if err == nil {
		sw.prog = &progress{report: out.Progress, total: sw.estimate()}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		sw.grid(gctx, g)
		if err = g.Wait(); err == nil {
			_, _, err = sw.search(ctx)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: sweep: %w", err)
	}
	sw.prog.finish()
	return nil
}

// unitOutput is where a unit's simulation goes: its records into a sink
// that open makes, and a learned policy's ServingRow to serving (if not
// nil).
type unitOutput struct {
	open    func(policy string, cl *cluster.Cluster) (sink, error)
	serving func(ServingRow)
}

// servings gathers the ServingRows of the learned policies' replications,
// which run at once, so that each policy's are written into one
// ServingFile: a file per replication took more time to create on some
// file systems (about a millisecond each) than its row took to compute.
type servings struct {
	mu   sync.Mutex
	rows []ServingRow
}

// add takes one replication's row.
func (s *servings) add(r ServingRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, r)
}

// write writes each policy's rows, in the order of their replications,
// into its ServingFile in dir.
func (s *servings) write(dir string, meta map[string]string) error {
	rows := s.rows
	slices.SortFunc(rows, func(a, b ServingRow) int {
		return cmp.Or(cmp.Compare(a.Policy, b.Policy), cmp.Compare(a.Replication, b.Replication))
	})
	for len(rows) > 0 {
		n := 1
		for n < len(rows) && rows[n].Policy == rows[0].Policy {
			n++
		}
		name := schedulespec.PolicyFile(rows[0].Policy, ServingFile)
		if err := parquetio.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), rows[:n], meta); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		rows = rows[n:]
	}
	return nil
}

// filesIn is the output of a unit that writes its trace and devices
// files into dir, which it creates.
func filesIn(dir string, meta map[string]string) unitOutput {
	return unitOutput{open: func(policy string, cl *cluster.Cluster) (sink, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return newRecorder(dir, policy, cl, meta)
	}}
}

// sink takes one simulation's records: a recorder writes the trace and
// devices files, a summarizer keeps only what a summary needs. close ends
// a simulation that ran to its end; abort drops what an unfinished one
// made, and does nothing after close.
type sink interface {
	record(*sim.Record) error
	batch(*sim.BatchRecord) error
	close() error
	abort()
}

// runUnit simulates one unit on the first jobs of jobsPath (jobs of them,
// as the bounds pass counted) into out.
//
// A learned policy's simulation also hands its ServingRow to
// out.serving (if not nil), and tells note (if not nil) its evaluator
// and wall-clock serving figures.
func runUnit(ctx context.Context, u Unit, cfg Config, cl *cluster.Cluster, seed int64, jobsPath string, jobs int64, out unitOutput,
	prog *progress, note func(key, value string)) (err error) {
	defer func() {
		// A goroutine's panic would take the whole process with it.
		if p := recover(); p != nil {
			err = fmt.Errorf("schedule: policy %s: %v", u.Spec, p)
		}
	}()
	name := u.Spec
	simSeed, policySeed := u.seeds(seed)
	r, err := cl.OpenJobs(jobsPath, u.Load, u.Jobs)
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	defer r.Close()
	rec, err := out.open(name, cl)
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	defer rec.abort()

	var stop error // why next stopped early: a bad row or cancellation
	next := func() (*sim.Job, bool) {
		if stop != nil {
			return nil, false
		}
		if r.Read()%cluster.CheckEvery == 0 {
			if stop = ctx.Err(); stop != nil {
				return nil, false
			}
		}
		j, err := r.Next()
		if err != nil {
			stop = err
		}
		return j, j != nil
	}
	var emitted int64
	emit := func(x *sim.Record) error {
		if stop != nil {
			return stop // end the simulation now, not after its backlog
		}
		if err := rec.record(x); err != nil {
			return err
		}
		r.Recycle(x.Job)
		if emitted++; emitted%cluster.CheckEvery == 0 {
			prog.add(cluster.CheckEvery)
			return ctx.Err()
		}
		return nil
	}
	b, err := cl.Build(cluster.Simulation{Spec: u.Spec, SimSeed: simSeed, PolicySeed: policySeed, Predictor: u.Predictor,
		PredictionError: u.PredictionError, DecisionCost: u.DecisionCost, OnBatch: rec.batch})
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	mig, _ := b.Migrator.(*netMigrator)
	if mig != nil {
		defer mig.release()
	}
	stats, err := sim.Run(b.Config, next, emit)
	if err == nil && mig != nil {
		err = mig.err
	}
	if err == nil {
		err = stop
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	prog.add(emitted % cluster.CheckEvery)
	if emitted != jobs {
		// The bounds pass read the same file: only a simulator bug gets here.
		return fmt.Errorf("schedule: policy %s: recorded %d jobs of %d", name, emitted, jobs)
	}
	if err := rec.close(); err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	if mig != nil && out.serving != nil {
		out.serving(servingRow(u, stats, mig, b.DecisionCost))
		if note != nil {
			noteServing(note, replicationName(u), mig)
		}
	}
	return nil
}

// noteServing tells note a learned simulation's wall-clock serving
// figures, one key each (serving:<run>:<figure>), so that a reader can
// take the numbers: the evaluator (schedule.learned.evaluator) and, for
// the Go one, how many points its guard referred to onnxruntime; the time
// in the evaluator; and the median and 99th percentile of each path a
// decision took, in µs.
func noteServing(note func(k, v string), run string, m *netMigrator) {
	st := &m.stats
	key := "serving:" + run + ":"
	note(key+"evaluator", m.evaluator)
	if n, ok := m.referred(); ok {
		note(key+"referred", fmt.Sprint(n))
	}
	note(key+"inference_s", fmt.Sprintf("%.6f", st.Inference.Seconds()))
	for _, p := range []struct {
		name string
		l    *latencies
	}{{"uncached", &st.Uncached}, {"batched", &st.Batched}, {"cached", &st.Cached}} {
		if p.l.n == 0 {
			continue
		}
		note(key+p.name+"_n", fmt.Sprint(p.l.n))
		note(key+p.name+"_p50_us", fmt.Sprintf("%.3g", 1e6*p.l.quantile(0.5)))
		note(key+p.name+"_p99_us", fmt.Sprintf("%.3g", 1e6*p.l.quantile(0.99)))
	}
}

// servingRow is a learned simulation's ServingRow, with what cost charged
// a decision: its median and P99 for a batch of one, and its source.
func servingRow(u Unit, stats sim.Stats, m *netMigrator, cost cluster.Charge) ServingRow {
	st := m.stats
	row := ServingRow{Policy: u.Spec, Replication: int32(u.Replication), Decisions: st.Decisions, Batches: stats.DecisionBatches,
		Migrations: stats.Migrations, CacheHits: st.Hits, CacheChanged: st.Changed, Evaluated: st.Evaluated, Calls: st.Calls,
		CostS: cost.Quantile(1, 0.5), CostP99S: cost.Quantile(1, 0.99), CostSource: cost.Source}
	if stats.DecisionBatches > 0 {
		row.MeanBatch = float64(st.Decisions) / float64(stats.DecisionBatches)
	}
	if st.Decisions > 0 {
		row.HitRate = float64(st.Hits) / float64(st.Decisions)
	}
	return row
}

// replicationName names a unit's replication as its directory does.
func replicationName(u Unit) string {
	if u.Replication == 1 {
		return u.Spec
	}
	return fmt.Sprintf("%s/rep-%d", u.Spec, u.Replication)
}

// recorder turns the simulator's records into trace and devices rows.
type recorder struct {
	policy  string
	cl      *cluster.Cluster
	trace   *table[TraceRow]
	batches *table[BatchRow]
}

// newRecorder creates the trace and devices files of policy's run in dir.
func newRecorder(dir, policy string, cl *cluster.Cluster, meta map[string]string) (*recorder, error) {
	trace, err := createTable[TraceRow](filepath.Join(dir, TraceFile), meta, traceWriterOptions)
	if err != nil {
		return nil, err
	}
	batches, err := createTable[BatchRow](filepath.Join(dir, DevicesFile), meta, batchWriterOptions)
	if err != nil {
		trace.abort()
		return nil, err
	}
	return &recorder{policy: policy, cl: cl, trace: trace, batches: batches}, nil
}

// close finishes both files; abort drops them, unless closed.
func (r *recorder) close() error {
	if err := r.trace.close(); err != nil {
		return err
	}
	return r.batches.close()
}

func (r *recorder) abort() {
	r.trace.abort()
	r.batches.abort()
}

// record and batch fill the next row field by field, every field of it
// (TestRecorderSetsEveryField): assigning a composite literal to the row
// cost 115 instructions a trace row and 53 a devices row, field by field
// 73 and 35 (cachegrind, fifo on a million jobs).
func (r *recorder) record(x *sim.Record) error {
	j := x.Job
	t := r.trace.next()
	t.JobID, t.Policy, t.Class = j.ID, r.policy, cluster.ClassName(j.Class)
	t.ArrivalS, t.StartS, t.EndS = j.Arrival, x.Start, x.End
	if x.Rejected() {
		t.Device, t.DeviceKind, t.Lane = "", "", -1
		t.BatchID, t.BatchSize = 0, 0
		t.WaitS, t.ServiceS, t.E2ES = 0, 0, 0
		t.SLOMet, t.Migrated, t.SplitParts = false, false, 0
		t.Rejected, t.Reason = true, x.Reason
		return r.trace.commit()
	}
	dev := r.cl.Device(int(x.Device))
	t.Device, t.DeviceKind, t.Lane = dev.Name, dev.Kind, x.Lane
	t.BatchID, t.BatchSize = x.BatchID, x.BatchSize
	t.WaitS, t.ServiceS, t.E2ES = x.Start-j.Arrival, x.End-x.Start, x.End-j.Arrival
	t.SLOMet = x.End <= j.Deadline
	t.Migrated, t.SplitParts = x.Migrated, x.SplitParts
	t.Rejected, t.Reason = false, ""
	return r.trace.commit()
}

func (r *recorder) batch(x *sim.BatchRecord) error {
	dev := r.cl.Device(int(x.Device))
	b := r.batches.next()
	b.Device, b.DeviceKind, b.Lane = dev.Name, dev.Kind, x.Lane
	b.BatchID, b.Jobs, b.Samples, b.MemoryMiB = x.BatchID, x.Jobs, x.Samples, x.Memory
	b.StartS, b.EndS = x.Start, x.End
	return r.batches.commit()
}

// progress adds up the policies' progress and passes it on at most every
// progressEvery of wall-clock time; it is the only clock the stage reads,
// and it touches no output.
type progress struct {
	report func(done, total int64)
	total  int64
	done   atomic.Int64
	mu     sync.Mutex
	last   time.Time
}

const progressEvery = 250 * time.Millisecond

func (p *progress) add(n int64) {
	if p.report == nil {
		return
	}
	done := p.done.Add(n)
	if !p.mu.TryLock() {
		return // another policy is reporting right now
	}
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.report(done, p.total)
	}
}

// begin reports that the counted work starts, none of it done: the
// real runs before it are not counted, and the time left is told from
// the rate of the simulations alone.
func (p *progress) begin() {
	if p.report != nil {
		p.report(0, p.total)
	}
}

func (p *progress) finish() {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.report(p.done.Load(), p.total)
}
