// Package schedule is the schedule stage: it simulates generate's eval
// workload on a virtual cluster under every configured policy, with
// service times drawn from the profile's measured latencies, writes each
// policy's trace for the evaluate stage, and runs the load sweep and the
// capacity search, which simulate the policies again at other loads.
//
//	jobs-eval.parquet ─┐                       ┌─> cluster.parquet, bounds.parquet, runs.parquet
//	                   ├─> bounds pass ─> sim ─┼─> <policy>/trace.parquet, devices.parquet
//	samples.parquet ───┘   (resolves curves)   └─> sweep.parquet, capacity.parquet (memoized units)
//
// The stage's configuration and the rows of its files are declared in
// package schedulespec, which the command line links without the
// simulator; this package aliases them.
//
// The simulator (package sim), the policies (package policy) and the
// ground-truth service model (package servicetime) live below this package;
// this one turns the configuration and the upstream files into their
// inputs and their records into files.
//
// # The cluster
//
// Each device of schedule.cluster has lanes (batches it runs at once), a
// memory capacity and a speed, and takes its service times from one
// (profile device, model, precision, threads) curve of the profile per job
// type:
//
//   - measured: the profile device's times as measured (speed must be 1),
//     and its lanes slow each other down by the profile's contention factor
//     for the number of busy lanes (servicetime.Table.Contention). A measured
//     device the profile ran no concurrent sessions on gets factor 1, and
//     cluster.parquet says so (contention_measured false).
//   - declared: a device the profile did not measure, such as an
//     accelerator this machine lacks: the profile device's times divided by
//     speed. Its contention is unknown and taken as factor 1; every output
//     labels it "declared".
//
// A job of b samples draws its ground-truth time as the curve's
// u-quantile at b with u from the simulator's seeded generator
// (servicetime.Curve.Quantile); policies predict with the curve's mean
// (servicetime.Curve.Mean), which is what those draws average to. Every
// device needs a curve for every (model, precision) of the workload's
// jobs that fit somewhere: a missing one is an error naming the device,
// the model, the precision, the threads, the first job that needs it, and
// what the profile did measure, reported before any simulation starts.
//
// Memory admission uses a token model in MiB: a batch of b samples of
// model m holds base(m) + b·per_sample(m) on its device while it runs,
// times fp16_factor in fp16. By default base is the catalog's fp32 weight
// bytes and per_sample its fp32 input and activation bytes per sample, so
// with generate's default fp16_bytes_factor it equals the jobs' memory_mib
// column. A job larger than every device is rejected at its arrival, under
// every policy, and recorded as such.
//
// # Configuration
//
// The keys under schedule in pipeline.yaml, with DefaultConfig's values:
//
//	schedule:
//	  policies: [fifo, round_robin, random, greedy, edf, batch_aware, dynamic,
//	             edf+batch, greedy+split, round_robin+migrate]
//	  cluster:
//	    - name: cpu
//	      kind: measured          # measured | declared
//	      profile_device: cpu     # the profile's device name ("cpu": this machine)
//	      threads: 1              # intra-op threads per lane: selects the curve
//	      lanes: 2                # [1, 1024]
//	      memory_mib: 8192
//	      speed: 1                # 1 for measured; > 0 for declared
//	    - name: accel
//	      kind: declared
//	      profile_device: cpu
//	      threads: 1
//	      lanes: 4
//	      memory_mib: 16384
//	      speed: 10
//	  memory:
//	    fp16_factor: 0.5          # (0, 1]
//	    base_mib: {}              # per-model override of the catalog's weights
//	    per_sample_mib: {}        # per-model override of the catalog's per-sample bytes
//	  load: 1                     # arrival times are divided by it; SLOs kept
//	  batching: {max_batch: 32, window: 2ms}     # +batch; max_batch >= 2, window >= 0
//	  splitting: {min_batch: 32}                 # +split; >= 2
//	  migration: {cost: 1ms, min_gain: 0s}       # +migrate; both >= 0
//	  dynamic: {class: 1, urgency: 2, batch: 0.5, service: 0.5, memory: 0.25}
//	  replications: 1
//	  sweep:
//	    loads: [0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.1]   # fractions of capacity; empty: no grid
//	    jobs: 50000               # the first eval jobs each point simulates (0: all)
//	    target: 0.99              # the interactive SLO attainment that makes a load sustained
//	    tolerance: 0.01           # the capacity search's resolution; 0: no search
//
// The default cluster is this machine's CPU, two single-threaded lanes as
// measured, beside a declared four-lane accelerator whose lanes are each
// ten times one CPU thread: on a two-core machine generate's default eval
// workload then needs well under that cluster's capacity by the work bound
// below, while a slower accelerator would leave every policy missing
// nearly every SLO, and the comparison would say nothing
// (docs/configuration.md has the figures).
//
// Validate reports every problem at once with its full key
// (schedule.cluster[1].lanes: must be in [1, 1024], got 0). Devices are
// numbered in list order, and a policy's tie between devices goes to the
// earlier one.
//
// load scales the offered load without regenerating the workload: a job
// arriving at t arrives at t/load, and its deadline is its new arrival
// plus its SLO.
//
// # Policy specs and options
//
// Each entry of policies is a spec: a policy's name, then any of +batch,
// +split and +migrate in that order (policy.ParseSpec). A spec is one
// simulation; its directory and the trace's policy column are the spec.
//
//   - +batch (micro-batching; batch_aware and dynamic always batch): when a
//     lane of a device can start work, the job its policy picks leads a
//     batch, and the oldest waiting jobs of the same model, precision and
//     class on that device join it while the batch stays within max_batch
//     samples and the free memory. The batch runs for the profile's time at
//     the merged size (its u-quantile, as for any batch), holds the merged
//     size's memory, and each job keeps its own arrival, so its wait and
//     end-to-end latency are its own. A batch short of max_batch waits on
//     an idle lane until the device's oldest waiting job has waited window.
//     Each device keeps a FIFO group per kind of job beside its queue, so
//     forming a batch costs O(batch), not a scan of the queue.
//   - +split: a job of at least min_batch samples is divided across the
//     devices that hold it so that the parts are predicted to end together
//     (water-filling over each device's backlog and its predicted samples a
//     second at the job's size). Each part queues on its device like a job;
//     the job ends with its last part. Its trace row carries split_parts
//     and the last part's device, lane and batch; devices.parquet has every
//     part's batch.
//   - +migrate: whenever a device has a lane free, nothing queued and no
//     job in transit to fill it, it considers the job that the device with
//     the longest backlog would start next. The decision is a pluggable
//     sim.Migrator; today policy.Threshold moves the job when its predicted
//     end comes more than min_gain sooner after cost seconds of transit.
//     The trace marks moved jobs (migrated).
//
// # Seeds
//
// Each unit has two seeds, one for the simulator's
// ground-truth draws and one for the policy's own randomness (random
// placement), each the first 8 bytes, little-endian, of
//
//	SHA-256("mlsched/schedule/v2" NUL owner NUL stream NUL ‖ le64(global seed))
//
// with stream "sim" or "policy", and "sim#k" and "policy#k" for
// replication k from the second on. The owner of "sim" is empty, so every
// policy of a replication draws with the same seed, and the simulator keys
// each draw to its job (sim.Variate): a job that runs alone at the same
// size takes the same quantile of the measured distribution under every
// policy. These common random numbers make the paired comparisons of the
// evaluate stage compare scheduling, not luck. The owner of "policy" is the
// policy spec. A policy's trace does not change when another policy or
// replication is added or removed. The files are a pure function of the
// config, the global seed and the input files: the same inputs give
// byte-identical files. The wall clock is read only to pace progress
// reports.
//
// # Replications
//
// schedule.replications runs independent replications of the whole
// experiment: replication k simulates every policy on an eval workload of
// its own (Inputs.Workloads; generate draws one per replication, from
// streams of its own, and an imported workload is one sample for all),
// with its own seeds above. Its load is schedule.load, or
// schedule.utilization of the cluster's capacity for its own jobs (the
// sweep's definition), and the sweep's offered loads are fractions of that
// same capacity: every replication is the same experiment on another
// sample of the world. Within a replication every policy sees the same
// jobs and draws (common random numbers), which the paired comparisons
// need; across replications everything random is drawn anew, which
// intervals across replications need (Law, Simulation Modeling and
// Analysis, 5th ed., §9.4).
//
// # Units
//
// A Unit is one simulation: a policy spec, a replication (its seeds), the
// first Jobs jobs (0: all) and a Load their arrival times are divided by.
// The main runs are units over every job at schedule.load; the sweep's and
// the search's are units over the first sweep.jobs jobs. A unit's key is
// made by the runner (pipeline.Memo) from the stage's own key lines, so
// that no input of the stage can be forgotten, with the part of the
// section a simulation of its spec depends on in place of the section, and
// the unit's lines:
//
//	spec <spec>, replication <k>, jobs <n>, load <factor, shortest exact form>,
//	predictor <name>, prediction_error <e>, decision_cost <cost>
//
// That part is the cluster, the memory model and the predictor, and of the
// options' settings only those the spec reads (policy.Spec.Reads):
// batching for a spec that batches (+batch, batch_aware, dynamic),
// splitting for +split, the migrations' cost for +migrate and learned and
// their min_gain for +migrate, the learned section for learned, and the
// dynamic section for dynamic. The lists of policies, the load, the
// replications, the sweep, the studies and the real runs are left out.
// MLSCHED_DEBUG_KEY=1 prints the lines. The sweep's and the studies' units
// are kept in the memo under those keys, so adding a load, a policy or a
// replication simulates only what is new, changing an option's setting
// only the units of the specs that read it, and a distributed executor
// can ship a unit by its key.
//
// # The load sweep and the capacity search
//
// A load u is a fraction of the capacity of the cluster for the jobs
// swept: the first sweep.jobs jobs are offered at schedule load
// u × (arrival span / work bound), both from the bounds of those jobs at
// load 1, so u = 1 offers exactly the work the cluster can do in the span
// of their arrivals. Each point is summarized (SweepRow): SLO attainment
// overall and of the interactive jobs, mean and P99 end-to-end latency,
// throughput and goodput, with evaluate's metrics package, so that its
// numbers mean what the report's do.
//
// A load is sustained when the interactive jobs' SLO attainment (that of
// all jobs, for a workload without interactive jobs) is at least
// sweep.target there. The capacity search (Vidur's) finds the highest
// sustained load of each policy's replication: the grid brackets it (the
// highest load of its sustained prefix, and the next), loads above the
// grid double until one fails, up to MaxSweepLoad, and bisection narrows
// the bracket until it is at most sweep.tolerance wide. It assumes
// attainment falls as load rises, as it does but for noise. A policy that
// favours interactive jobs may sustain loads beyond capacity while batch
// jobs wait; the report says how many of all the jobs met their SLO at the
// sustained load. capacity.parquet has each replication's bracket
// (CapacityRow), sweep.parquet every point, grid and search.
//
// # Files
//
// cluster.parquet has a row per device, in cluster order (ClusterRow):
// its configuration, contention_measured, contention_factors (a list:
// element k-1 is the slowdown with k lanes busy, for k = 1..lanes),
// effective_lanes (below) and contention_note, which says where the
// factors came from.
//
// bounds.parquet has one row per replication, in order (BoundsRow): the
// bounds of the replication's workload at its load, the load, and that
// load as a fraction of the cluster's capacity where schedule.utilization
// set it.
//
// runs.parquet has a row per simulation of the whole workload (RunRow):
// the policy spec, the replication, the jobs, the load, and the paths of
// its trace and devices files; evaluate finds the traces through it.
//
// Each policy writes into a directory named after it, and with
// replications: k > 1, its k-th run (other seeds, see below) into
// <policy>/rep-<k>/ (ReplicationFile):
//
// <policy>/trace.parquet, one row per job in completion order (TraceRow):
//
//	job_id       int64   delta
//	policy       string  dictionary
//	device       string  dictionary   "" if rejected
//	device_kind  string  dictionary   measured | declared; "" if rejected
//	lane         int32   dictionary   from 0; -1 if rejected
//	batch_id     int64   delta        from 1 in start order; 0 if rejected
//	batch_size   int32   dictionary   samples in the batch as run; 0 if rejected
//	class        string  dictionary   interactive | batch
//	arrival_s    double  split        seconds, as simulated (after load)
//	start_s      double  split
//	end_s        double  split
//	wait_s       double  plain        start_s - arrival_s
//	service_s    double  plain        end_s - start_s, contention included
//	e2e_s        double  plain        end_s - arrival_s
//	slo_met      boolean              end_s <= arrival_s + slo; false if rejected
//	migrated     boolean              moved between device queues (+migrate)
//	split_parts  int32   dictionary   parts it ran as (+split): 1 whole; 0 if rejected
//	rejected     boolean              fit on no device
//	reason       string  dictionary   why it was rejected; null otherwise
//
// A job's model, precision and batch size are in the eval workload, by
// job_id; the trace does not repeat them.
//
// Every column but the durations is zstd-compressed; the times are stored
// byte-stream-split, which compresses them well. The durations are stored
// uncompressed: they are nearly random doubles, which zstd shrank by an
// eighth in about a third of the time it took to write a trace. Neither
// these nor the string columns nor start_s and end_s carry min/max
// statistics (no reader would prune by them); arrival_s does, and so does
// devices.parquet's start_s, so a reader can skip to a window of time.
// Together with the indexed event heap this took the stage past a million
// jobs a second per core (see the benchmark).
//
// <policy>/devices.parquet, one row per batch run in completion order
// (BatchRow): device, device_kind, lane, batch_id, jobs, samples,
// memory_mib (held while it ran), start_s and end_s: each lane's busy
// intervals and memory use. jobs counts the jobs (or parts of split jobs)
// the batch merged: 1 without +batch. A batch's model and precision are
// those of its jobs (the trace's rows with its batch_id).
//
// Every file carries the run's provenance in its footer and is written
// with parquetio.WriterOptions.
//
// # The lower bound
//
// bounds.parquet bounds from below what any policy can achieve on the
// cluster, from the predicted (mean) service times. Let M_d(j) be job j's
// mean time on device d's curve, s_d the device's speed, f_d(k) its
// contention factor, and over the jobs that fit somewhere:
//
//	w_j   = min over devices d that hold j of M_d(j)/s_d   (fastest, alone)
//	p_j   = min over devices d that hold j of M_d(j)       (smallest profiled)
//	κ_d   = max over k <= lanes_d of k/f_d(k)              (effective_lanes)
//
// With k lanes busy, device d gets through k·s_d/f_d(k) seconds of its
// profile's work per second, at most s_d·κ_d. In a schedule of length T
// the jobs on d use at most T·s_d·κ_d of it, so Σ_j p_j <= T·Σ_d s_d·κ_d;
// dividing each job's share by its device's speed instead gives
// Σ_j w_j <= T·Σ_d κ_d. Hence
//
//	work_lb_s         = max(Σ w_j / Σ κ_d, Σ p_j / Σ s_d·κ_d)
//	arrival_lb_s      = max over j of (arrival_j + w_j)
//	makespan_lb_s     = max(work_lb_s, arrival_lb_s)
//	mean_latency_lb_s = Σ w_j / (jobs - unfit_jobs)
//
// (Both work bounds hold; the first is the tighter when the devices run on
// different profiles, the second when they share one.) The bound ignores
// memory and queueing, so it is loose under light load and approached
// under heavy load. It bounds the expectation over the ground-truth draws:
// a draw can be faster than the mean, so one simulation can finish below
// it. (Outside the interpolation's clamps, rarely hit, the mean is exactly
// what the draws average to; see package servicetime.)
//
// # Cost
//
// Before the simulations, one pass over the jobs resolves the curves and
// computes the bounds. Then the policies run concurrently, at most
// GOMAXPROCS at once, each streaming the jobs file itself: seven columns
// decoded a page at a time straight from parquet-go's page buffers (many
// times faster than parquet-go's row reader; docs/benchmarks.md), the
// simulation, and trace and devices rows handed 256 at a time to a
// parquetio/columnar Table, which writes the bytes parquet-go's
// GenericWriter would, in less CPU time.
//
// Memory does not grow with the workload as long as the cluster keeps
// up: per running policy, the reader's few MiB, the jobs queued or running
// in the simulator (their memory is reused once recorded), and one row
// group (1M rows, parquetio.RowGroupRows) of compressed trace and devices
// pages. BenchmarkScheduleStage (1M jobs) and BenchmarkScheduleStageScale
// (10M) report the peak heap (docs/benchmarks.md has the figures). An
// overloaded cluster's queues hold a growing share of the workload, as
// they would in reality: round_robin and random, which ignore device
// speed, hold more.
//
// BenchmarkScheduleStage times the stage on a million jobs, and
// BenchmarkScheduleStageScale at 10⁵, 10⁶ and 10⁷ (the cost per job stays
// flat).
package schedule
