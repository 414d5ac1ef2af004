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
// The model (model.go: the runs read and set side by side; sources.go:
// the sources of error, with the simulator's contention model replayed
// on the real run's timeline) is apart from the prose (prose.go,
// charts.go) and from the rows it adds to metrics.parquet (rows.go).
package fidelity
