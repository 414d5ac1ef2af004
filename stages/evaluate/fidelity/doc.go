// Package fidelity is the evaluate report's Fidelity section: the
// simulator held to the real runs. When schedule ran policies for real
// (schedule.real: the artifact's real/), it sets each real run, one
// policy at one load on a slice of the eval jobs, against the simulation
// of the same jobs on the same devices: the latency percentiles and their
// errors, the per-job errors, SLO attainment and utilization, whether the
// simulator ranks the policies at each load as the real runs do, and each
// run against the target (within 10% at P50 and P99 for fifo and edf, the
// ranking preserved). From each run's dispatch.parquet and runs.parquet
// it weighs what the simulator does not model, and names the largest.
//
// # Verdicts that can mean something
//
// A percentile is judged only on a run with at least minBeyond (100)
// completed jobs beyond it: 200 for P50, 10,000 for P99. Below that the
// nearest-rank percentile is one of the few largest latencies, and the
// distribution-free confidence interval of a quantile from order
// statistics (David and Nagaraja, Order Statistics, 2003, §7.1) spans
// more than the 10% the target allows, so a verdict either way would be
// noise; the report says "not judged" with the jobs needed. The mean is
// judged on any run.
//
// A real figure is judged against its prediction band, not against one
// simulation: the range of the figure over the slice simulated with each
// seed of the service-time draws (schedule.real.draws: the simulation's
// own sampling spread, as independent replications give it: Law,
// Simulation Modeling and Analysis, 5th ed., 2015, §9.4), widened below
// and above by how far the first draw's figure moves with every service
// time shorter and longer by the profile's run-to-run variation (the
// schedule artifact's RealRunRow.Variation, measured on repeated timings
// within the profile). The report gives, over every real run, how many
// were judged on each figure, how many lie inside their band (the band's
// coverage), and the signed errors.
//
// The model (model.go: the runs read and set side by side; sources.go:
// the sources of error, with the simulator's contention model replayed
// on the real run's timeline) is apart from the prose (prose.go,
// charts.go) and from the rows it adds to metrics.parquet (rows.go).
package fidelity
