// Package metrics turns a schedule stage's outputs into the metrics the
// evaluate stage reports: one run's summary of each policy. It gives no
// intervals: one run is one sample, and the evaluate stage's output
// analysis (package outputanalysis) takes intervals across replications.
//
// # Inputs
//
// ReadCluster and ReadBounds read cluster.parquet (device names and lane
// counts) and bounds.parquet (the lower bounds); ReadTrace and ReadBusy
// read a policy's <policy>/trace.parquet and <policy>/devices.parquet,
// given the cluster's device names; JobSamples reads the eval workload's
// jobs file for each job's own samples. The large files are read column by
// column through parquetio.ColumnFile, straight from parquet-go's page
// buffers (docs/benchmarks.md has the times); a Trace's
// rows are ordered by job id, so that row i of every policy's trace is the
// same job. Errors name the file and the column or row at fault, and a
// corrupt file gives an error wrapping parquetio.ErrCorrupt, never a panic.
//
// # Metrics
//
// A job is completed when its trace row is not rejected. Times are seconds
// on the simulated clock, which starts with the workload at 0.
//
//   - Latency (end-to-end e2e_s, wait_s, service_s): over completed jobs,
//     the mean (summed in job id order), the quantiles P50, P95 and P99 and
//     the maximum. Quantiles are nearest-rank: the p-quantile of n values
//     is the r-th smallest, r = ⌈p·n⌉ (at least 1), the same as gonum's
//     stat.Quantile(p, stat.Empirical, ...); the P99 of 1..100 is 99 and
//     the P50 of 1..10 is 5. Nearest rank makes every quantile one of the
//     data.
//   - Makespan: the largest end_s of a completed job (0 when none
//     completed).
//   - Throughput: completed jobs per second of makespan; SampleThroughput:
//     the completed jobs' own samples (their batch_size in the workload,
//     not the batch they ran in) per second of makespan; Goodput: jobs that
//     met their SLO per second of makespan. All are 0 when the makespan is.
//   - SLO violation: the fraction of jobs that missed their SLO, counting
//     rejected jobs as misses (slo_met is false for them); NaN for no jobs.
//   - Per class (interactive, then batch; a class without jobs is left
//     out): the same latencies over the class's completed jobs, its SLO
//     violation over all its jobs, and its goodput per second of the run's
//     makespan.
//   - Utilization of a device: its busy lane-seconds (the sum over the
//     batches in devices.parquet of end_s - start_s) over lanes × makespan.
//   - Jain's fairness index over the devices' utilizations x:
//     (Σx)² / (n·Σx²), from 1/n (one device does everything) to 1 (all
//     equal, including all idle); NaN for no devices.
//   - Fairness between classes: the mean wait of completed batch jobs over
//     that of completed interactive jobs; above 1 when the policy favours
//     interactive jobs. NaN when either class has no completed job or the
//     interactive jobs' mean wait is 0.
//   - Gaps to the lower bounds: makespan / makespan_lb_s - 1 and mean e2e /
//     mean_latency_lb_s - 1 (NaN for a bound of 0). A draw of the service
//     times can beat the bounds, which hold in expectation, so a gap can be
//     slightly negative.
//
// BenchmarkSummarize and BenchmarkEvaluate time Summarize on a million
// jobs and on ten policies of 200k (docs/benchmarks.md has the figures).
package metrics
