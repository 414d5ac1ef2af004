// Package outputanalysis is mlsched's output analysis, done as the
// simulation literature does it: confidence intervals from independent
// replications, deletion of the initial transient, batch means where one
// long run is all there is, and multiple comparisons with the best before
// a policy is named best. It is pure computation, deterministic, with no
// randomness of its own.
//
// Why not a bootstrap over jobs: the jobs of one queue are not
// independent (a job's wait depends on the jobs before it), and one run
// is one sample of the workload, the largest source of variance. An
// interval over the jobs of one run is therefore far too narrow; the
// calibration test in this package measures by how much, on M/M/1 and
// M/M/c queues with known mean waits.
//
// # Methods
//
// Replications and the t interval (TInterval, PairedTInterval). Each
// replication is an independent run (its own workload and draws), so its
// output is one independent observation of the metric; the interval is
// x̄ ± t(1−α/2, R−1)·s/√R over the R replication values. Comparing two
// systems, both see the same workload and draws in replication r (common
// random numbers) and the interval is taken over the differences
// a_r − b_r: the paired-t interval. Reference: A. M. Law, Simulation
// Modeling and Analysis, 5th ed., McGraw-Hill, 2015, ch. 9 (replications,
// t intervals) and ch. 10 (paired-t, common random numbers).
//
// Initial transient: MSER-5 (MSER, ReplicationDeletion). A run that
// starts empty is biased low at first. MSER chooses the deletion d that
// minimizes 1/(n−d)²·Σ_{i>d}(X_i − X̄(d))², the marginal standard error
// of the truncated mean; MSER-5 applies it to means of batches of five.
// The deletion is sought in the first half of the run, and a smaller
// statistic in the second half means the run shows no steady state.
// ReplicationDeletion runs MSER-5 on the replications' averaged series
// (their mean at each observation index, as in Welch's procedure),
// deletes that many observations from every replication, averages what
// is left, and takes the t interval over the replications: Law's
// replication/deletion approach. Run on one replication alone, MSER
// mistakes an early busy period of a congested queue for a transient and
// biases the mean low; averaging damps the busy periods, which are
// independent across replications, and keeps the transient, which is
// common to them. References: Law 2015, ch. 9 (replication/deletion,
// Welch's procedure); K. P. White Jr., An effective truncation heuristic
// for bias reduction in simulation output, Simulation 69(6), 1997;
// K. P. White Jr., M. J. Cobb and S. C. Spratt, A comparison of five
// steady-state truncation heuristics for simulation, Proc. Winter
// Simulation Conference 2000 (MSER-5).
//
// One long run: non-overlapping batch means (BatchMeans). The run is cut
// into k batches of consecutive observations and the t interval is taken
// over the batch means. The batch size is chosen by testing the batch
// means for lag-1 autocorrelation with the von Neumann ratio, starting
// from 1280 batches and doubling the batch size (halving k) until the
// test at level 0.10 passes, never below 10 batches; an interval whose
// batches never passed is flagged (BatchInfo.Passed). References: Law
// 2015, ch. 9 (batch means); A. M. Law and J. S. Carson, A sequential
// procedure for determining the length of a steady-state simulation,
// Operations Research 27(5), 1979; G. S. Fishman and L. S. Yarberry, An
// implementation of the batch means method, INFORMS Journal on Computing
// 9(3), 1997 (LBATCH, the von Neumann test); B. Schmeiser, Batch size
// effects in the analysis of simulation output, Operations Research
// 30(3), 1982 (10 to 30 batches suffice); J. von Neumann, Distribution of
// the ratio of the mean square successive difference to the variance,
// Annals of Mathematical Statistics 12, 1941.
//
// A best policy with stated confidence: multiple comparisons with the
// best (MCB). For k systems and R paired replications, each system gets
// an interval for its difference from the best of the others, all k
// holding together at the stated confidence. Built from Bonferroni
// one-sided paired-t half-widths w_ij = t(1−α/(k−1), R−1)·S_ij/√R, where
// S_ij is the standard deviation of the paired differences, it remains
// valid under common random numbers. A system is named best only when
// every other is shown worse (Separated), or, given an indifference zone
// δ from the config, when it is shown to be within δ of the best
// (WithinDelta); otherwise the set of systems that cannot be separated
// from the best is given (Inseparable). MCB states the rule exactly.
// References: J. C. Hsu, Constrained simultaneous confidence intervals
// for multiple comparisons with the best, Annals of Statistics 12(3),
// 1984; J. C. Hsu, Multiple Comparisons: Theory and Methods, Chapman &
// Hall, 1996; B. L. Nelson and F. J. Matejcik, Using common random
// numbers for indifference-zone selection and multiple comparisons in
// simulation, Management Science 41(12), 1995; D. Goldsman and B. L.
// Nelson, Comparing systems via simulation, in J. Banks (ed.), Handbook
// of Simulation, Wiley, 1998, ch. 8.
package outputanalysis
