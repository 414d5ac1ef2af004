// Package generate is the generate stage: it makes seeded synthetic ML
// workloads, a train workload for the train stage and a separate eval
// workload for the schedule stage, and writes them as Parquet artifacts.
//
// # The model
//
// A workload is a stream of jobs, each an inference or compute request for
// one model of the catalog (package catalog). A job draws, independently of
// the others and of its arrival time:
//
//   - its class: interactive with probability interactive_fraction, else
//     batch; the class fixes its SLO and batch-size range;
//   - its model, with probability proportional to its weight in models;
//   - its batch size, log-uniform over the integers of the class's
//     [batch_min, batch_max]: P(b) = ln((b+1)/b) / ln((max+1)/min), so sizes
//     of each doubling are about equally likely;
//   - its precision: fp16 with probability fp16_fraction, else fp32.
//
// From these and the catalog follow its memory need, weights plus the
// batch's inputs and activations, (W + b·(I + A))·s bytes with s = 1 for fp32
// and fp16_bytes_factor for fp16; its task size b·F FLOPs; its roofline
// arithmetic intensity, task FLOPs over those same bytes (each weight, input
// and activation crossing the memory bus once); and its deadline, arrival
// plus SLO.
//
// Arrivals come from one of three processes, each with long-run mean rate
// arrival.rate jobs per second, starting at time 0:
//
//   - poisson: exponential gaps, coefficient of variation (CV) 1;
//   - bursty, model gamma: a renewal process with gamma gaps of shape 1/cv²
//     and mean 1/rate, so the gap CV is bursty.cv;
//   - bursty, model mmpp: a two-state Markov-modulated Poisson process that
//     spends a long-run fraction high_fraction of the time in a high state
//     whose rate is rate_ratio times the low state's, with exponential
//     high-state sojourns of mean mean_burst; the two rates are solved so
//     the mean rate is arrival.rate;
//   - diurnal: a Poisson process with rate λ(t) = rate·(1 + amplitude·
//     sin(2πt/period)), drawn by thinning; its mean is rate over whole
//     periods.
//
// # Configuration
//
// The keys under generate in pipeline.yaml, with DefaultConfig's values.
// Every section is validated, including those the chosen processes ignore.
// A models map given in the file replaces the default mix (models left out are
// not drawn); --set generate.models.NAME=W changes one entry, and weight 0
// drops a model too.
//
//	generate:
//	  train:
//	    import: ""                # a .csv or .parquet of jobs instead (below)
//	    jobs: 500000
//	    seed: 1
//	    arrival:
//	      process: diurnal        # poisson | bursty | diurnal
//	      rate: 100               # mean jobs per second
//	      bursty:
//	        model: gamma          # gamma | mmpp
//	        cv: 2                 # gamma: gap coefficient of variation, (0, 10]
//	        high_fraction: 0.2    # mmpp: fraction of time in the high state
//	        rate_ratio: 5         # mmpp: high rate / low rate, >= 1
//	        mean_burst: 10s       # mmpp: mean time in the high state
//	      diurnal:
//	        amplitude: 0.5        # relative rate swing, [0, 1]
//	        period: 10m
//	  eval:
//	    jobs: 200000
//	    seed: 2
//	    arrival:                  # as for train, but process: bursty
//	  interactive_fraction: 0.7
//	  models: {mlp: 0.4, resnet18: 0.25, resnet50: 0.15, vit: 0.2}
//	  fp16_fraction: 0.3
//	  fp16_bytes_factor: 0.5
//	  classes:
//	    interactive: {slo: 100ms, batch_min: 1, batch_max: 8}
//	    batch:       {slo: 1s, batch_min: 8, batch_max: 64}
//
// # Imported workloads
//
// generate.<workload>.import names a .csv or .parquet file (by its
// extension, in any case; relative to the config file) of the workload's
// jobs, one row per job in arrival order: the user's own trace. Jobs, seed
// and arrival are then ignored for that workload; the other may still be
// synthetic. Its columns:
//
//	arrival_s   required  seconds since the workload's start, in [0, MaxArrivalS]; never less than the row before
//	model       required  a catalog model: mlp, resnet18, resnet50, vit
//	batch_size  required  a whole number of samples in [1, MaxBatchSize]
//	class       required  interactive | batch
//	precision   optional  fp32 | fp16; default fp32
//	slo_s       optional  seconds in [MinSLOS, MaxSLOS]; default the class's generate.classes.<class>.slo
//
// Any other column is refused, so that a misspelt optional column does not
// quietly take its default; so are a jobs file's derived columns (job_id,
// memory_mib, task_gflop, intensity_flop_per_byte, deadline_s), which are
// computed exactly as for a synthetic job: the catalog's figures for the
// model, batch and precision (fp16_bytes_factor included), the deadline as
// arrival plus SLO, and the id as ordinal·2^40 plus the row's index. The
// jobs file is therefore the same as for a synthetic workload with the same
// jobs, byte for byte, and every later stage reads it unchanged.
// stats.parquet counts every catalog model for an imported workload.
//
// Rows out of arrival order are refused, not sorted: sorting would hold the
// whole file in memory, and a trace out of order is more likely damaged
// than meant. A CSV file has a header row naming its columns (a byte-order
// mark, surrounding spaces and case are ignored), no empty cell, and no
// record longer than 64 KiB. A Parquet file's columns are checked by type
// before a row is read, and nothing is converted: seconds are DOUBLE with
// no annotation; batch_size is INT32 or INT64, plain or with an integer
// annotation (signed or not); names are BYTE_ARRAY annotated STRING or
// ENUM. A column may be optional, as most writers mark them, but a null is
// refused. Every error names the config key, the file, and for a value its
// row (counting data rows from 1) and column, and what was expected.
//
// Both formats stream: the memory an import holds is one chunk of rows and
// one Parquet page per column, whatever the file's size. The registry
// (package stages) puts the file's SHA-256 into the stage's key, and
// refuses a path that is not a regular file (a named pipe, a device)
// before anything opens it, and train and eval imports with the same
// content.
//
// # Seeds and job ids
//
// Each workload has two random streams, "jobs" for the attributes and
// "arrivals" for the arrival process, so changing only the arrival process
// leaves every job's class, model, batch size and precision as they were.
// Each stream is a PCG generator seeded with the first 16 bytes of
//
//	SHA-256("mlsched/generate/v1" NUL workload NUL stream NUL ‖ le64(global seed) ‖ le64(workload seed))
//
// where the global seed is the pipeline's. The workload name is part of the
// hash, so train and eval never share a stream even with equal seeds, and
// there is no seed pair for Validate to reject. Job ids are
// ordinal·2^40 + sequence number, with ordinal 0 for train and 1 for eval and
// at most 2^40 jobs per workload (MaxJobs), so the two workloads' ids are
// disjoint, and each workload's ids stay the same when the other's job count
// changes.
//
// # Replications of the eval workload
//
// The schedule stage simulates schedule.replications independent
// replications of the experiment (Output.EvalReplications), and each
// needs a workload of its own: the workload is the largest source of
// variance, and replications that shared it would give intervals for
// this one sample of arrivals only (Law, Simulation Modeling and
// Analysis, 5th ed., §9.4: replications are independent only if every
// random input is drawn anew). Replication r of the eval workload is drawn
// exactly as the first, from the streams "jobs#r" and "arrivals#r" (the
// first keeps "jobs" and "arrivals", so one replication draws what a run
// without replications drew), with ordinal r for its ids, into
// generatespec.EvalJobsFile(r). An imported eval workload is one sample
// of the world, written once; every replication simulates it, and only
// the service-time draws and random placements differ between them.
//
// The files are a pure function of the config, the global seed and any
// imported file's content: the same inputs give byte-identical files with
// the same toolchain. No wall
// clock or global random source is read.
//
// # Files
//
// jobs-train.parquet and jobs-eval.parquet hold one row per job, in arrival
// order (schema: Job):
//
//	job_id                  int64   DELTA_BINARY_PACKED
//	arrival_s               double  PLAIN              seconds since the workload's start
//	class                   string  dictionary         interactive | batch
//	slo_s                   double  dictionary         seconds
//	model                   string  dictionary         catalog name
//	batch_size              int32   dictionary
//	precision               string  dictionary         fp32 | fp16
//	memory_mib              double  dictionary         MiB (2^20 bytes)
//	task_gflop              double  dictionary         10^9 FLOPs
//	intensity_flop_per_byte double  dictionary         FLOP per byte
//	deadline_s              double  PLAIN              arrival_s + slo_s
//
// The derived columns take one value per (class, model, batch size,
// precision), so dictionaries make them nearly free to write and store.
//
// stats.parquet is a tidy table of what was generated, one row per
// (workload, statistic, label) (schema: Stat); its statistics are listed
// with StatJobs. Rates and gaps are measured from time 0 to the last arrival.
//
// Every file carries the run's provenance in its footer (Output.Metadata)
// and is written with parquetio.WriterOptions. Files stream to disk in
// chunks, so memory stays bounded whatever the job count: the chunks in
// flight plus one row group per workload (BenchmarkGenerate10M fails
// above 256 MiB of peak heap for 10M jobs).
package generate
