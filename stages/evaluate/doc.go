// Package evaluate is mlsched's evaluate stage: it turns the schedule
// stage's traces, load sweep and capacity search into metrics with
// confidence intervals, and writes the report people read and share. It
// simulates nothing: everything it says of the simulations (which policies
// ran and how often, on which cluster, at which loads) it reads from the
// schedule artifact.
//
// # What it computes
//
// For every policy spec the schedule stage simulated (package metrics has
// the exact definitions):
//
//   - end-to-end, wait and service latency: mean, P50, P95, P99 and max,
//     overall and per class;
//   - SLO violations per class and overall (a rejected job counts as a
//     violation), goodput (jobs within SLO per second of makespan), and
//     throughput in jobs and samples per second;
//   - the makespan and its gap to schedule's lower bound, the mean latency's
//     gap to its bound;
//   - each device's utilization (busy lane-seconds over lanes × makespan),
//     Jain's index over the utilizations, and fairness (the batch jobs' mean
//     wait over the interactive jobs');
//   - against each baseline (evaluate.baselines): the difference in mean and
//     P99 latency, SLO violations, goodput and makespan with its paired
//     interval, and the speedup in mean latency and makespan. A difference
//     whose interval contains zero is reported as no difference.
//
// # Intervals and the best policy
//
// Every interval comes from section.Analysis, which applies package
// outputanalysis (its doc cites the literature): with two or more
// replications (schedule.replications; each its own eval workload, draws
// and placements) an estimate is the mean over the replications with its
// Student t interval, and a difference between two policies the paired-t
// interval over the replications (common random numbers pair them); the
// mean latency leaves out the initial transient MSER-5 finds on the
// replications' averaged latency series (Law's replication/deletion
// approach), the same jobs for every policy. With one replication there is
// no variation of the workload to measure, and the mean latency and the
// SLO violations get batch-means intervals over the one run (the batch
// size set by a lag-1 autocorrelation test); the rest get none, and no
// best policy is named. The jobs of one queue are not independent, so no
// interval is ever a bootstrap over them: outputanalysis's calibration
// test measures such intervals covering an M/M/c queue's mean wait in as
// few as 10 of 100 seeds, against 95 for these.
//
// The summary names a policy best for an objective only when multiple
// comparisons with the best (MCB, for paired replications) separate it
// from every other at evaluate.confidence, or show it within
// evaluate.indifference of the best; otherwise it names the policies that
// cannot be separated. Its first sentence recommends a policy for
// evaluate.objective, with its margin over the strongest baseline and the
// confidence, or says which policies cannot be told apart.
//
// # How busy the profiled machine was
//
// Every service time the simulator draws is one the profile measured, so
// a profile measured beside other work makes every result a busy
// machine's. When the profile recorded how busy the machine was
// (machine.parquet; package profile says how), the Profile section says
// so: one line of the figures on a quiet machine, and on a busy one a
// warning with the figures and a table of every observation; the same
// warning then opens the report, under its title, before the
// recommendation. The machine
// is busy when any of these passes its threshold (machine.go): the share
// of all cores other processes used over the profile, or in any interval
// of a second or more (the idle second before it included), above 10%;
// or the share a hypervisor stole, judged alike, above 2%. Where those
// shares cannot be read (no /proc), the 1-minute load average before the
// profile above half the cores, or the reference timing over 1.25× its
// fastest at a fifth of the observations or more, judge instead: beside
// the shares they misjudge a quiet machine (a build just before the
// profile, a reference timing that is bimodal on its own). A profile without the file
// (an older one) gets a sentence saying it did not record it, an
// imported one nothing. metrics.parquet holds the figures (scope
// machine) and the verdict (busy, 1 or 0).
//
// Traces are read column by column and released once summarized; what
// stays is each policy's per-job series (latency, SLO misses) for the
// analysis, a few numbers a job.
//
// # The load sweep and capacity
//
// The schedule stage's sweep.parquet and capacity.parquet hold each
// policy's points at the grid's loads and its highest sustained load per
// replication (package schedule says how they are found). The report
// charts SLO attainment and P99 latency against load (means over the
// replications), states each policy's sustained load, and, in its
// summary, the best policy's capacity as a multiple of each baseline's,
// paired by replication; with several replications each comes with its
// Student-t interval.
//
// # The trained models
//
// With the train artifact (Inputs.Train), the report shows what train
// learned, from its metrics.parquet, cv.parquet and predictor.json: the
// service-time predictor's candidates scored on each split, the kept one
// marked and held to its targets (grouped k-fold R² ≥ 0.97, MAPE ≤ 10%,
// at least 90% within ±10%; leave-one-batch-size-out MAPE ≤ 15%), its
// predictions against the measurements and its feature importances; and
// the placement network's labels, training curve, and scores on the test
// points beside the rules it competes with. Without it (a run of the
// stage on its own) those sections are left out. evaluate recomputes none
// of it: the numbers are train's.
//
// # The learned policies
//
// When schedule simulated a learned policy (edf with every migration
// decision the placement network's, served through onnxruntime), the
// report's "Learned decisions" section sets each learned spec against
// edf with the same options, with the Threshold rule (+migrate) and with
// no migration, where schedule simulated them: paired differences with
// the same analysis as the baselines', each stated as
// better, worse or no difference; a counterpart not simulated is named
// with the spec to add to schedule.policies. It shows each learned run's
// serving.parquet (decisions, migrations, mean batch, onnxruntime calls,
// cache hits and the hits the cache got wrong, the simulated cost of a
// decision) and the wall-clock figures per serving path that the
// schedule manifest's notes hold (Inputs.ScheduleNotes), beside the
// serving targets: those differ from run to run, and the report says
// so. From studies.parquet it charts each policy's SLO attainment and
// mean latency against the prediction error (the predictions' MAPE),
// train's predictor marked, and tabulates the learned policies at each
// decision cost; a sentence under each, computed from the rows, says
// which policy degrades most and what the dearest decisions do. An
// artifact without studies.parquet, or with the studies off, leaves those
// parts out; a damaged serving or studies file, or a note that is no
// number, is an error naming it.
//
// # Fidelity
//
// When schedule ran policies for real (schedule.real: the artifact's
// real/), the report's "Fidelity" section sets each real run, one policy
// at one load on a slice of the eval jobs, against the simulation of the
// same jobs on the same devices: the end-to-end latency's P50, P95 and P99
// with the relative error (sim − real)/real of each, the per-job errors
// (the traces joined on job id: the median and P90 of their absolute
// value and the share within ±10%), SLO attainment and utilization, each
// trace summarized by package metrics as a simulation's is; whether the
// simulator orders the policies at each load as the real runs do, by mean
// latency; and each run against the target (within 10% at P50 and
// P99 for fifo and edf, the ranking preserved), met or missed with its
// figures, a percentile judged only on a run with 100 completed jobs
// beyond it; and every run's real mean and percentiles against their
// prediction band (the draws' range widened by the profile's run-to-run
// variation), with the band's coverage over all the runs and the signed
// errors (package fidelity says how). Charts draw each run's latency CDF, real against simulated,
// and every job's simulated latency against its real one. From each run's
// dispatch.parquet and runs.parquet it weighs what the simulator does not
// model (run times beyond the time the simulator's service model gives
// each batch on the real run's own timeline, for batches that ran alone
// and for those that ran beside other lanes; dispatch overhead; scheduler
// lateness) by the time each adds to a real job's own latency, and names
// the largest.
// The real cluster is the simulated one less the devices this machine
// cannot run, which the section names. An artifact without real runs
// leaves the section out.
//
// # Outputs
//
// metrics.parquet holds every number of the report in long form
// (MetricRow): scope (policy, class, device, difference, replications,
// replication_difference, sweep, sustained, bound, profile, machine: how
// busy the profiled machine was, the trained
// models' headline numbers, predictor and placement, learned: each
// learned spec's serving counts and its differences from its
// counterparts, and fidelity: each real run against its simulation and
// each load's ranking), the names that apply (policy, baseline, class, device, model, precision, threads,
// batch, load), metric, value, the interval's lo and hi (null without
// one), significant, and previous (the value in evaluate.compare_to's run).
//
// With schedule.replications N > 1, every policy's N runs are summarized
// too, and the report gives each headline metric's mean over the runs with
// a Student-t interval, and each difference from a baseline paired by run. report.md and report.html are the same report from one
// Markdown source (package report); charts/ holds its SVG charts, which
// report.html carries inline. The stage publishes all three to reports/.
//
// The report is deterministic given its inputs: it contains versions and
// the configuration, never the time it was written. Its provenance names
// its upstreams' versions and shows their configuration as their
// manifests record it; the runner keys the stage on those versions
// (pipeline.Stage.ShowsUpstreams), so a stored report never names a
// version other than those it was made from.
//
// # Sections
//
// The report is made of sections, each a value that implements the
// contract of package section, and listed, one line each and in the
// report's order, in sections (sections.go), the registry. Run reads
// once what several sections share (the runs, the cluster, the bounds,
// every policy's traces summarized and compared with the baselines) into
// a section.Evaluation, then takes every section through the same steps:
// Read what it alone shows, compare the pairs a section.Comparer asks
// for, add its Rows to metrics.parquet (laid out by scope,
// section.OrderRows), and Render it. The small sections are a file each
// here (summary.go, policies.go, ... provenance.go); the big ones are a
// package each, their model apart from their prose (fidelity, learned).
//
// # Adding a report section
//
// Write the section in a file of its own (or a package under
// stages/evaluate when it is big), a type with the four methods of
// section.Section and a compile-time assertion:
//
//	type queueSection struct{ waits []float64 }
//
//	var _ section.Section = (*queueSection)(nil)
//
//	func (*queueSection) Name() string                                    // its name in the registry
//	func (s *queueSection) Read(ev *section.Evaluation) error             // the files it alone reads; nil for none
//	func (s *queueSection) Rows(ev *section.Evaluation) []MetricRow       // its numbers for metrics.parquet
//	func (s *queueSection) Render(ev *section.Evaluation) (report.Section, error) // untitled: left out
//
// and add its one line to the list in sections(), where it is to appear.
// Rows of a new scope want the scope declared in section/row.go, with its
// place in metrics.parquet (rowOrder), and a title in the change
// section's scopeTitles (change.go), so that a later run shows how its
// numbers moved. Write numbers with report's formats and tables
// (report.Secs, report.NewTable) and escape every name (report.Escape).
package evaluate
