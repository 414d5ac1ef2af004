package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/profile"
	"github.com/mlsched/mlsched/stages/schedule/policy"
	"github.com/mlsched/mlsched/stages/schedule/service"
	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// Inputs are the upstream files the stage reads.
type Inputs struct {
	// Samples is the profile's samples.parquet.
	Samples string
	// Jobs is generate's jobs-eval.parquet.
	Jobs string
}

// Output is where and how Run writes its artifacts.
type Output struct {
	// Dir receives every file; it exists (the runner's staging directory).
	Dir string
	// Metadata is the provenance added to every Parquet footer.
	Metadata map[string]string
	// Progress, if not nil, is called with the jobs simulated so far over
	// all policies and the total (policies × jobs), at most a few times a
	// second and once at the end. It may be called from any goroutine,
	// never concurrently.
	Progress func(done, total int64)
}

// rowBuffer is how many rows a trace or devices writer collects before
// handing them to parquet-go: enough to amortize its per-call work.
const rowBuffer = 4096

// checkEvery is how many jobs pass between looks at the context.
const checkEvery = 4096

// Run simulates the eval workload in in.Jobs under every policy of cfg on
// the cluster cfg describes, with service times from the profile samples in
// in.Samples, and writes ClusterFile, BoundsFile and each policy's
// TraceFile and DevicesFile into out.Dir. The files are a pure function of
// cfg, seed and the two inputs. Policies run concurrently, at most
// GOMAXPROCS at once, each streaming the jobs file on its own. Run returns
// ctx.Err() soon after ctx is cancelled; on any error the output directory
// holds partial files, which the runner discards.
func Run(ctx context.Context, cfg Config, seed int64, in Inputs, out Output) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("schedule: invalid config: %w", err)
	}
	samples, err := parquetio.ReadAll[profile.Sample](in.Samples)
	if err != nil {
		return fmt.Errorf("schedule: read profile samples: %w", err)
	}
	table, err := service.NewTable(samples)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	cl, err := newCluster(cfg, table)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	// One pass over the jobs resolves every curve the simulations need,
	// so that a missing one is reported before any of them starts, and
	// computes the bounds.
	bounds, err := computeBounds(ctx, cl, in.Jobs, cfg.Load)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("schedule: %w", err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, ClusterFile), cl.rows(), out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", ClusterFile, err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, BoundsFile), []BoundsRow{bounds}, out.Metadata); err != nil {
		return fmt.Errorf("schedule: write %s: %w", BoundsFile, err)
	}

	prog := &progress{report: out.Progress, total: int64(len(cfg.Policies)*cfg.Replications) * bounds.Jobs}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, name := range cfg.Policies {
		for k := 1; k <= cfg.Replications; k++ {
			g.Go(func() error {
				err := runPolicy(gctx, name, k, cfg, cl, seed, in.Jobs, bounds.Jobs, out, prog)
				if err != nil && k > 1 {
					return fmt.Errorf("replication %d: %w", k, err)
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	prog.finish()
	return nil
}

// seeds derives the two seeds of a policy's replication k from the global
// seed: the simulator's (ground-truth draws) and the policy's own (random
// placement). Each is the first 8 bytes, little-endian, of
// SHA-256("mlsched/schedule/v2" NUL owner NUL stream NUL ‖ le64(seed)),
// with stream "sim" or "policy", followed by "#k" from the second
// replication on. The simulator's owner is "" for every policy, so all
// policies of a replication share their ground-truth draws (common random
// numbers, see sim.Variate); the policy's owner is the policy, so each
// random policy has its own stream. Adding a policy or a replication
// changes no other's trace, and the first replication is the one a single
// run gives.
func seeds(global int64, policyName string, k int) (simSeed, policySeed uint64) {
	derive := func(owner, stream string) uint64 {
		if k > 1 {
			stream += fmt.Sprintf("#%d", k)
		}
		h := sha256.New()
		h.Write([]byte("mlsched/schedule/v2\x00" + owner + "\x00" + stream + "\x00"))
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(global))
		h.Write(b[:])
		return binary.LittleEndian.Uint64(h.Sum(nil)[:8])
	}
	return derive("", "sim"), derive(policyName, "policy")
}

// runPolicy simulates the workload under one policy and writes its trace
// and devices files.
func runPolicy(ctx context.Context, name string, rep int, cfg Config, cl *cluster, seed int64, jobsPath string, jobs int64, out Output, prog *progress) (err error) {
	defer func() {
		// A goroutine's panic would take the whole process with it.
		if p := recover(); p != nil {
			err = fmt.Errorf("schedule: policy %s: %v", name, p)
		}
	}()
	simSeed, policySeed := seeds(seed, name, rep)
	spec, err := policy.ParseSpec(name)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	pol, err := policy.New(spec.Name, cfg.options(policySeed))
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	r, err := openJobs(jobsPath, cfg.Load)
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	defer r.Close()
	dir := filepath.Join(out.Dir, filepath.Dir(filepath.FromSlash(ReplicationFile(name, rep, TraceFile))))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	trace, err := createTable[TraceRow](filepath.Join(dir, TraceFile), out.Metadata, traceWriterOptions)
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	defer trace.abort()
	batches, err := createTable[BatchRow](filepath.Join(dir, DevicesFile), out.Metadata, batchWriterOptions)
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	defer batches.abort()

	var stop error // why next stopped early: a bad row or cancellation
	next := func() (*sim.Job, bool) {
		if stop != nil {
			return nil, false
		}
		if r.done%checkEvery == 0 {
			if stop = ctx.Err(); stop != nil {
				return nil, false
			}
		}
		j, err := r.next()
		if err != nil {
			stop = err
		}
		return j, j != nil
	}
	rec := recorder{policy: name, cl: cl, trace: trace, batches: batches}
	var emitted int64
	emit := func(x *sim.Record) error {
		if stop != nil {
			return stop // end the simulation now, not after its backlog
		}
		if err := rec.record(x); err != nil {
			return err
		}
		r.recycle(x.Job)
		if emitted++; emitted%checkEvery == 0 {
			prog.add(checkEvery)
			return ctx.Err()
		}
		return nil
	}
	sc := sim.Config{Devices: cl.devices, Service: cl, Policy: pol, Seed: simSeed, OnBatch: rec.batch}
	spec.Configure(&sc, cfg.settings())
	_, err = sim.Run(sc, next, emit)
	if err == nil {
		err = stop
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	prog.add(emitted % checkEvery)
	if emitted != jobs {
		// The bounds pass read the same file: only a simulator bug gets here.
		return fmt.Errorf("schedule: policy %s: recorded %d jobs of %d", name, emitted, jobs)
	}
	if err := trace.close(); err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	if err := batches.close(); err != nil {
		return fmt.Errorf("schedule: policy %s: %w", name, err)
	}
	return nil
}

// recorder turns the simulator's records into trace and devices rows.
type recorder struct {
	policy  string
	cl      *cluster
	trace   *table[TraceRow]
	batches *table[BatchRow]
}

func (r *recorder) record(x *sim.Record) error {
	j := x.Job
	t := r.trace.next()
	*t = TraceRow{
		JobID:    j.ID,
		Policy:   r.policy,
		Lane:     -1,
		Class:    classNames[j.Class],
		ArrivalS: j.Arrival,
		StartS:   x.Start,
		EndS:     x.End,
	}
	if x.Rejected() {
		t.Rejected, t.Reason = true, x.Reason
		return r.trace.commit()
	}
	dev := &r.cl.cfg[x.Device]
	t.Device, t.DeviceKind, t.Lane = dev.Name, dev.Kind, x.Lane
	t.BatchID, t.BatchSize = x.BatchID, x.BatchSize
	t.WaitS, t.ServiceS, t.E2ES = x.Start-j.Arrival, x.End-x.Start, x.End-j.Arrival
	t.SLOMet = x.End <= j.Deadline
	t.Migrated, t.SplitParts = x.Migrated, x.SplitParts
	return r.trace.commit()
}

func (r *recorder) batch(x *sim.BatchRecord) error {
	dev := &r.cl.cfg[x.Device]
	b := r.batches.next()
	*b = BatchRow{
		Device:     dev.Name,
		DeviceKind: dev.Kind,
		Lane:       x.Lane,
		BatchID:    x.BatchID,
		Jobs:       x.Jobs,
		Samples:    x.Samples,
		MemoryMiB:  x.Memory,
		StartS:     x.Start,
		EndS:       x.End,
	}
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

func (p *progress) finish() {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.report(p.done.Load(), p.total)
}
