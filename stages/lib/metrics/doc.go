// Package metrics turns a schedule stage's outputs into the metrics the
// evaluate stage reports, with bootstrap confidence intervals.
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
//     data, which is what lets the bootstrap find it by counting.
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
// # Bootstrap
//
// Intervals are nonparametric bootstrap percentile intervals: Resamples
// replicates each resample the n jobs with replacement and recompute the
// metric; the interval runs from the nearest-rank (1-c)/2 to the (1+c)/2
// quantile of the replicates' values, c the confidence (the 25th and
// 975th of 1000 at 95%). Replicates on which a metric is undefined (a
// resample without interactive jobs, say) are left out of its interval.
//
// A replicate's resample is drawn as counts: how many times each job was
// drawn. Replicate j's generator is math/rand/v2's PCG (DXSM), seeded
// from (Seed, j) by SplitMix64 and written out in this package so that the
// draw loop keeps its state in registers (a test checks it against
// rand.PCG). The replicates are thus independent of one another and of
// the order and number of goroutines that compute them: the same inputs
// and Seed give identical intervals on any number of cores. The counts are drawn block by block (a binomial count of the
// draws that land in each block of 4096 jobs, then uniform draws within
// it, which is exactly multinomial) so that they stay in cache, and each
// uniform draw takes half of a 64-bit output by Lemire's method with
// rejection, so none is biased.
//
// Summarize's E2EP99CI resamples the completed jobs' latencies. Since the
// P99 of a resample of n values is its m-th largest (m = n - ⌈0.99n⌉ + 1),
// only the draws that land among the top K sorted values matter when
// there are at least m of them: a replicate draws their number from
// Binomial(n, K/n) (gonum's distuv.Binomial) and spreads them over the top
// K, with K = m + 8√m + 32, and draws the rest as well only in the rare
// case that fewer than m landed there. That is the same distribution as
// resampling all n at O(K) cost instead of O(n).
//
// Compare's paired bootstrap resamples the job indices once per replicate
// and computes every metric on both traces from the same counts: mean e2e
// as Σ count·e2e / Σ count over each trace's completed jobs, the P99 by
// walking each trace's completed jobs down from the slowest until the
// counts pass m, the SLO counts from counts per category of job; a
// resample's goodput divides its SLO-met jobs by the full run's makespan.
// Job i is the same job in both traces, so what they share (which jobs
// happened to arrive) cancels out of the difference, and the interval is
// that of the difference itself. The makespan has no interval: a single
// run has no sampling distribution for it; intervals across replicated
// runs are the caller's to compute.
//
// BenchmarkSummarize, BenchmarkCompare and BenchmarkEvaluate time them on a
// million jobs and on ten policies of 200k (docs/benchmarks.md has the
// figures): Compare's time is nearly all the resamples' draws.
package metrics
