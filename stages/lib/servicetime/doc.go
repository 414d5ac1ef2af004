// Package servicetime is the simulator's ground-truth service-time model:
// how long a batch takes on a lane, drawn from the latencies the profile
// stage measured rather than from a fitted formula, and how much lanes that
// share a device slow each other down.
//
// A Table is built once from the rows of the profile's samples.parquet
// (package profile, type Sample). Its Curves give service times for one
// (device, model, precision, threads) configuration at any batch size; its
// Contentions give each device's slowdown factor for k lanes at once. Both
// are immutable and allocation-free to query, and are meant to be called
// from the simulator's hot loop millions of times per second.
//
// # Which rows
//
// Latencies come from kind "inference" rows of concurrency 1, grouped by
// (device, model, precision, threads) and then by batch size; the samples of
// all repeats of a batch size are pooled. Contention comes from kind
// "contention" rows. The serving path's curve (Table.Serving: what a call
// of the learned policy's placement network takes at each decision batch
// size, which the schedule stage charges each batch of decisions a draw
// from) comes from kind "serving" rows, grouped by device alone. Every
// other row is ignored. Rows keep their device
// name, so an imported GPU profile is simply another device. A
// configuration whose samples come from two origins (source, backend and
// execution provider: say this machine and an imported file that both call
// their device "cpu") is two distributions that no single curve can stand
// for: asking for it is an error that says to rename one device.
//
// Times are seconds on the device that was profiled. A device the
// configuration declares without measuring it (an accelerator this machine
// lacks) is the simulator's to scale by its speed factor; nothing here
// scales.
//
// # Service time at a measured batch size
//
// Let x_0 <= ... <= x_{n-1} be the n measured latencies at batch size b.
// Quantile(b, u) is their Hazen (midpoint) empirical quantile, Hyndman and
// Fan's type 5: with h = u·n - ½,
//
//	Q_b(u) = x_0                              if h <= 0
//	Q_b(u) = x_{n-1}                          if h >= n-1
//	Q_b(u) = x_k + (h-k)·(x_{k+1} - x_k)      otherwise, k = ⌊h⌋
//
// that is, the piecewise-linear function through the points ((k+½)/n, x_k),
// flat beyond the first and last. Each sample gets probability 1/n spread
// evenly around it, so for U uniform on [0, 1):
//
//   - Q_b(U) lies within [x_0, x_{n-1}]: the simulator never invents a
//     latency faster or slower than one the profile saw. (The tail is
//     therefore as long as the measurement's: with 20 repeats, nothing past
//     the slowest of the 20.)
//   - E[Q_b(U)] = (x_0 + ... + x_{n-1})/n exactly, the sample mean: the flat
//     ends contribute x_0/(2n) and x_{n-1}/(2n), each interior segment
//     (x_k + x_{k+1})/(2n). So Mean(b), the sample mean, is what Quantile
//     averages to.
//   - For distinct samples, P(Q_b(U) <= x_k) = (k+½)/n for k < n-1: the
//     empirical CDF at the midpoints of its steps, with atoms of ½/n at
//     x_0 and x_{n-1}.
//   - Var Q_b(U) <= the sample variance (1/n form), since on each segment
//     (a²+ab+b²)/3 <= (a²+b²)/2: interpolating smooths a little, never
//     widens.
//
// (summary.parquet's p50_s is gonum's type-4 quantile, which for an even
// count is the lower middle value rather than the mean of the middle two;
// so a Curve's median can differ slightly from it.)
//
// A batch size below 1 counts as 1, u is clamped to [0, 1] and a NaN u
// counts as 0, so every result is a positive finite number of seconds: the
// samples are checked positive and finite, and each rule below gives at
// least a positive multiple of one measured quantile (between: a convex
// combination; above: at least Q_{b_{m-1}}(u); below and with one size: at
// least (b/b_0)·Q_{b_0}(u)).
//
// # Between, above and below the measured sizes
//
// Let b_0 < b_1 < ... < b_{m-1} be the measured batch sizes. The same u is
// used at every measured size, so the spread of the distribution is carried
// along with its location (between two sizes the result is the quantile
// function of (1-w)·X + w·Y for comonotone X and Y distributed as the two
// sizes' latencies):
//
//   - Between: for b_i < b < b_{i+1}, with w = (b - b_i)/(b_{i+1} - b_i),
//     Q_b(u) = (1-w)·Q_{b_i}(u) + w·Q_{b_{i+1}}(u).
//   - Above the largest: for b > b_{m-1}, with t = (b - b_{m-1})/(b_{m-1} -
//     b_{m-2}), Q_b(u) = Q_{b_{m-1}}(u) + t·max(0, Q_{b_{m-1}}(u) -
//     Q_{b_{m-2}}(u)): the line through the two largest sizes. Beyond small
//     sizes latency is close to affine in the batch (a fixed overhead plus
//     per-item work), so the last segment is the best evidence of the slope.
//     A falling last segment is noise (a device far from saturation gives a
//     flat one, not a falling one); a larger batch never finishes sooner,
//     so the slope is floored at 0 and the curve stays flat.
//   - Below the smallest: for 1 <= b < b_0, with t = (b_0 - b)/(b_1 - b_0),
//     the line through the two smallest sizes, clamped to the range an
//     affine latency a + c·b with a, c >= 0 allows:
//     Q_b(u) = min(Q_{b_0}(u), max(Q_{b_0}(u) - t·(Q_{b_1}(u) - Q_{b_0}(u)),
//     (b/b_0)·Q_{b_0}(u))).
//     The line keeps the fixed overhead that dominates small batches (on a
//     GPU a batch of 1 takes nearly as long as a batch of 8; scaling by b/b_0
//     would make it 8 times faster). Latency at batch 0 is not known, so
//     where the line would fall below the zero-overhead bound (b/b_0)·Q_{b_0}
//     (a line with negative intercept: per-item time growing with the batch)
//     that bound is the floor; where it would rise above Q_{b_0} (a falling
//     segment) the curve is flat. The floor is positive for every b >= 1.
//     Profiles usually measure batch 1, and then this rule never applies.
//   - One measured size only: Q_b(u) = (b/b_0)·Q_{b_0}(u) on both sides, the
//     line through the origin: with a single point the overhead cannot be
//     told from the per-item work.
//
// Mean(b) applies the same rules to the per-size sample means. Where no
// max, min or floor binds, every rule is a fixed linear combination of the
// measured sizes' quantile functions, so E[Q_b(U)] = Mean(b) at every
// batch size, up to rounding: a policy that predicts with Mean is unbiased against
// the ground truth it is simulated with.
//
// # Contention
//
// The profile's contention rows time k sessions of one model, one intra-op
// thread each, running at once, for several k. For each measured k the
// factor is the median latency of all k sessions' pooled runs over the
// median at k = 1 (the usual median: the mean of the middle two of an even
// count). The factor at k = 1 is 1 by definition, and a measured factor
// below 1 is timing noise around "no slowdown" and is clamped to 1, since k
// sessions cannot each run faster than one alone on the same cores.
// Factor(k) is 1 for k <= 1, linear between measured k, and beyond the
// largest measured k follows the line through the last two measured
// points (after clamping), its slope floored at 0: once the cores are
// oversubscribed each extra lane keeps adding its share. If the contention rows lack k = 1, the
// device's inference rows of the same model, precision, batch and threads
// (the same session timed alone) are the baseline; if there are none, the
// device's contention is an error.
//
// A device with latencies but no contention rows gets factor 1 for every k
// and Measured() == false, so a report can say that its lanes were
// simulated without interference. The factor was measured for one model at
// one batch size with single-threaded sessions; applied to every lane on the
// device, whatever its model, batch and threads, it is the best estimate the
// profile offers, not a measurement of that lane.
//
// # Cost
//
// A Curve keeps each size's samples sorted in one flat slice, and a table of
// where every batch size up to the largest measured one falls among the
// measured sizes with its precomputed weights (up to 4096 entries; larger
// sizes are found by binary search, sizes above the largest by one
// division). Quantile and Mean are then a lookup, one or two quantiles of
// sorted slices and a few multiplications: no allocation, tens of
// nanoseconds (BenchmarkQuantile, BenchmarkMean).
//
// # Determinism
//
// Nothing here draws random numbers: the simulator passes u from its own
// seeded generator, and Quantile is a pure function of (batch, u). A Table
// depends only on the multiset of sample rows, not their order (groups are
// sorted before use and means are summed in sorted order), so the same
// profile gives the same service times, bit for bit.
package servicetime
