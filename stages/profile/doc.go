// Package profile is the profile stage: it measures how fast this machine
// runs the models mlsched schedules, and how much sessions sharing its
// cores slow each other down. Every timed run is kept, so that the
// schedule stage draws service times from the measured distribution rather
// than from a summary of it. A profile measured elsewhere, say on a GPU
// this machine lacks, can be added to it (profile.import).
//
//	profile.models ───> zoo: ONNX, seeded ───> onnxruntime ──┐
//	profile.matmul ───> gonum, onnxruntime ──────────────────┼─> samples.parquet, summary.parquet,
//	profile.contention ─> k sessions at once ────────────────┤   <model>.onnx, <model>-fp16.onnx
//	profile.serving ──> placementnet, each call timed ───────┤
//	profile.import (.parquet, .csv) ─> Sample.Validate ──────┘
//	the machine, before and between the measurements ─────────> machine.parquet
//
// The stage's configuration is declared in package profilespec, which the
// command line links without the stage's code or onnxruntime; spec.go
// aliases its types and constants here.
//
// # What it measures
//
// Inference: each model of profile.models is built in Go as an ONNX graph
// by package zoo, with weights drawn from the global seed, in each
// precision of profile.precisions, and run through onnxruntime's CPU
// execution provider at each batch size of profile.batch_sizes and each
// intra-op thread count of profile.threads (one inter-op thread), or, with
// profile.provider cuda, through the CUDA execution provider on GPU
// profile.gpu (see Profiling a GPU below). Inputs
// are seeded values in [-1, 1): latency does not depend on them, but zeros
// or denormals could take odd paths. Each model is measured at the batch
// sizes profile.model_batch_sizes gives it, else profile.batch_sizes. One
// onnxruntime session serves a model, precision and thread count, a bound
// pair of tensors per batch size (ort.Session.Bind), so that the graph is
// optimised once per series. The series' largest batch size runs
// profile.warmup times untimed first (2 by default: onnxruntime faults new
// memory in on a shape's first run, and for the ResNets on its second,
// which would otherwise be timed; docs/fidelity.md); each smaller size,
// in decreasing order, then runs once untimed, reusing that memory (a GPU's
// session per size warms each size profile.warmup times). A configuration
// is then timed profile.repeats times and on until its
// runs have taken profile.min_time, at most profile.max_repeats times (a microsecond
// model's median needs hundreds of runs to hold still), stopping early
// once it has used profile.max_time after at least profile.min_repeats
// runs (the large models at large batches would otherwise take minutes on
// a small machine). The batch sizes of a series are timed interleaved:
// after their warm-ups they take turns, one timed run each, so that a
// drift of the machine (its clock, a neighbour's load) falls on every
// batch size alike rather than on whichever ran then, and the curve across
// batch sizes keeps its shape. An fp16 configuration the CPU provider has
// no kernels for is a finding, not a failure: the summary records it as
// unsupported, with the reason.
//
// Matrix multiply: n×n by n×n float32 products for each n of
// profile.matmul.sizes, in pure Go (gonum's Sgemm, which spreads a product
// over GOMAXPROCS goroutines, so the row records that many threads) and
// through onnxruntime at each thread count: the arithmetic rate the
// machine reaches, to set the models' GFLOP/s against.
//
// Contention: for each k of profile.contention.sessions, k sessions, one
// intra-op thread each, start together and each time its runs, every
// session running on, untimed, until all have theirs, so that no run is
// timed with fewer sessions beside it than its row says: how much lanes
// sharing the cores slow each other down. The sessions of a round run
// the models of profile.contention.models in turn (Contention.ModelOf), so
// that over n² rounds two sessions meet every ordered pair of the n
// models: a server's lanes run different models side by side, and one
// model beside another is not one model beside itself (docs/fidelity.md
// has the measurements). The sessions are made
// once, warmed the first time they run and kept across rounds. The counts
// are measured in profile.contention.rounds rounds spread evenly over the
// models' measurements, each round in the order opposite to the one
// before (1, 2, 4, then 4, 2, 1, ...): the factor is the machine's over the profile's
// minutes rather than over a few seconds of them, and a neighbour's burst
// or a drift of the machine's speed lands on every count alike (single
// back-to-back runs of each count on a shared virtual machine gave
// factors far apart; docs/fidelity.md). The schedule
// stage turns these rows into the slowdown of a measured device's busy
// lanes: the median, over every run at a count, of the run's latency over
// its model's median alone.
//
// Serving: the learned policy asks the placement network whether to move
// a job, a batch of decisions at a time, and the schedule stage charges
// each batch time on the simulated clock (schedule.learned.cost). What it
// charges by default is measured here, on the serving path itself:
// package placementnet's Network.Eval, the code the schedule stage serves
// decisions with (one onnxruntime session on the caller's thread, a
// binding per batch size, features copied in, probabilities copied out),
// on placementnet.Synthetic, a network of the trained one's shape with
// weights drawn from the global seed (the profile runs before any network
// is trained, and a call's cost does not depend on the weights). Each
// size of profile.serving.batch_sizes is called profile.serving.calls
// times, after a tenth as many untimed rounds, the sizes taking turns,
// and every call is timed on its own and kept as a row of kind serving
// (model "placement"): the distribution, its tail included, not a tight
// loop's mean, which is what the zoo's mlp rows are (a bare session run
// back to back, which the serving path's median and tail exceed;
// docs/benchmarks.md). A CUDA profile leaves it out: the serving path
// runs on the host's cores, not on the GPU the profile names.
//
// No GPU numbers are ever invented. The summary has a row (kind provider)
// for each GPU execution provider the loaded onnxruntime library cannot
// use, saying whether it is absent from the build or compiled in but
// unusable here, rather than leaving readers to assume.
//
// # How busy the machine was
//
// A profile measured beside other work times that work too: at a load
// average of 10 on 2 cores a ResNet-50 at batch 1 took 68 ms against
// 37 ms on a quiet run, and nothing in the samples said so. So while it
// measures, the stage observes the machine (observer): before the first
// measurement, after an idle wait of a second in which this process does
// nothing, and after each part (a model's series at one precision and
// thread count, the contention rounds run between them, the serving path,
// each product size), so after the last. Each observation is a row of
// machine.parquet (MachineRow): the 1-, 5- and 15-minute load averages of
// /proc/loadavg; over the interval since the observation before, the
// share of all cores' time that other processes used (/proc/stat's busy
// ticks less this process's own CPU time, getrusage's, every thread's),
// this process's own share and the share a hypervisor stole (/proc/stat's
// steal); and the median of five timings of a fixed computation, a
// 128×128 float64 product in pure Go on one goroutine, whose spread over
// the profile says whether this process got a core when it asked. The
// load averages count the profile's own sessions once it runs, so they
// say what else ran only before it; during it the others' share does.
// Where /proc cannot be read (an OS other than Linux) those figures are
// NaN and the rest is written; nothing here fails the stage. The
// evaluate stage's report warns, with the figures, when they say the
// machine was busy. A profile that measures nothing (an import alone)
// writes no machine.parquet.
//
// # Profiling a GPU
//
// With profile.provider cuda every session runs on onnxruntime's CUDA
// execution provider, on GPU profile.gpu, and the rows carry the provider
// and the device name profile.device (default "gpu"). The library must be
// a CUDA-capable onnxruntime with its provider beside it (make cuda-ort
// installs one); a library or machine that cannot attach CUDA is an error
// before anything is measured, never a CPU profile under the GPU's name.
// Inputs and outputs stay in host memory, so a run's time includes
// copying them to the GPU and back, as a served request's does. Each batch
// size gets a session of its own, always run at its one shape: the CUDA
// convolutions set themselves up again whenever a session's input shape
// changes (docs/gpu.md), and a GPU deployment keeps an engine per batch size.
// gonum's products are left out (they would time the host's cores under
// the GPU's name); the onnxruntime products run on the GPU. The machine's
// description gains the GPU (nvidia-smi's name, memory, driver and compute
// capability). Such a profile is meant to be imported by the machines
// that schedule for that GPU; docs/examples holds one of an H200.
//
// # Why it runs alone
//
// The measurements run one at a time, so that none disturbs another (the
// contention runs disturb each other on purpose), and the stage is
// declared Exclusive (pipeline.Stage.Exclusive): the runner starts no
// other stage while it runs, since a simulation on the same cores would
// show up in its latencies. The numbers still differ slightly from run to
// run; pin a version you trust (mlsched pin profile).
//
// # Importing a profile
//
// profile.import names a .parquet or .csv file (relative to the config
// file) of rows in samples.parquet's columns: kind, backend, provider,
// device, model, precision, batch, threads, concurrency and latency_s, and
// optionally repeat. Every row is checked by Sample.Validate, the same
// check the schedule stage applies to the rows it reads; an error names
// the file, the row (data rows counted from 1) and the column. The rows
// join the measured ones with source "import:<file name>" and keep their
// own device names, which the schedule stage's cluster can take curves
// from. With profile.measure off the profile holds only the imported rows.
// The file's content digest is part of the stage's cache key, so editing
// it reruns the stage.
//
// The import is held to what a profile is: a regular file (a named pipe or
// /dev/zero is refused before it is opened) of at most MaxImportBytes and
// MaxImportRows rows. A CSV may start with a UTF-8 byte-order mark, its
// header is read first and no line may run past MaxImportLine bytes, so a
// file that is not a CSV fails at once. A Parquet file's columns must have
// the schema's types, nothing converted silently: strings as BYTE_ARRAY,
// integers as INT32 or INT64 whose values fit an int32, latency_s as DOUBLE
// or FLOAT; a null is an error naming its row and column.
//
// # Files
//
// samples.parquet has one row per timed run (Sample), the serving path's
// calls included. machine.parquet has one row per observation of the
// machine (MachineRow). summary.parquet has
// one row per configuration (Summary): count, mean, p50, p95 and p99
// (linearly interpolated, so the p99 of 20 runs is not their maximum),
// standard deviation, spread (p95/p50, near 1 on a quiet machine),
// samples a second and GFLOP/s at the median; and a row, marked not
// supported and with a note saying why, for each configuration that could
// not run and each absent GPU provider. The .onnx files are the models
// measured, <model>.onnx in fp32 and <model>-fp16.onnx; the runner also
// copies them into models/, for Netron or onnx.checker. When the stage
// measures, every Parquet footer and the manifest describe the machine
// (Machine: CPU, cores, memory, OS and kernel, Go and onnxruntime
// versions, execution providers), so the numbers are never separated from
// the hardware that produced them.
package profile
