// Package sim is mlsched's discrete-event simulator: it runs a stream of
// jobs on a virtual cluster under one scheduling policy, on a virtual clock,
// and reports when each job started and finished, where.
//
// # Model
//
// A cluster is a list of devices. A device has lanes (concurrent execution
// streams), a memory capacity, and a speed relative to the profiled device.
// Each device has one queue. When a job arrives, the policy's Placer picks
// the device whose queue it joins; whenever a lane of a device is idle, the
// device starts the first job of its queue in the policy's order (FIFO when
// the policy has no Ranker) whose memory fits beside the running jobs. A
// policy that keeps strict FIFO order (StrictOrder) waits instead when the
// head of the queue does not fit. A job that fits on no device is recorded as
// rejected, not run.
//
// A job's work is its ground-truth service time, drawn from the Service
// model with a uniform variate keyed to the job (Variate): the time the
// batch takes on the profiled device running alone. The same seed gives
// the same job the same variate under every policy (common random
// numbers), so paired comparisons of policies are not blurred by the luck
// of the draw. Lanes that share
// a device slow each other down: while k lanes of device d are busy, each
// progresses at rate speed(d)/contention(d, k). Rates change only when a job
// starts or ends on the device; then the simulator settles every running
// job's remaining work and re-times its completion. This is exact for the
// model (piecewise-constant rates), so small cases can be checked by hand.
//
// Pending events live in an indexed heap with one slot per lane (its
// batch's completion) and one per device (its batching timer). Re-timing a
// completion moves its slot in place, so the heap never holds more entries
// than the cluster has lanes and devices. (Pushing a new event and skipping
// the stale one later piled entries up on the default cluster: a long batch
// on a shared device was re-timed by every short batch beside it, and each
// re-timing left one behind. Replacing that took the whole stage under edf
// from 0.91 to 1.13 M jobs/s, medians on the same machine.)
//
// # Options
//
// Micro-batching (Config.Batching) merges, whenever a lane starts work, the
// job the policy picks with the oldest waiting jobs of the same model,
// precision and class on its device, up to MaxBatch samples and the free
// memory; the batch runs for Service.Time at the merged size. An idle lane
// holds a short batch until the device's oldest waiting job has waited
// Window. Each device keeps a FIFO group per kind of job beside its queue,
// and jobs leave both lazily (a stale stamp), so a batch costs O(its size).
// A GroupPicker policy chooses among the groups directly.
//
// Splitting (Config.Split) hands a job of at least MinBatch samples to the
// policy's Splitter, which sizes one part per device; each part queues like
// a job, and the job's record is written when its last part ends.
//
// Migration (Config.Migration): a device with a free lane, nothing queued
// and nothing in transit to it considers the job that the device with the
// longest backlog would start next; if the Migrator agrees, the job leaves
// that queue and joins this one Cost seconds later. With a Latency, a
// decision takes time, as serving a model does: it is asked with the
// features of that moment, sent to the Migrator with the others asked in
// the same event (or within Window), up to Batch at once, and answered
// Latency(n, u) after a batch of n is sent, u keyed to the seed and the
// batch's ordinal (DecisionVariate); meanwhile the destination holds a
// lane and the memory for the job, and a move answered for a job that has
// started where it waited is dropped. A BatchMigrator answers a batch in
// one call.
//
// Predictions (Config.Predictor, Config.PredictionError): every predicted
// time, a policy's, a backlog's or a running batch's predicted end, comes
// from the Predictor, or the Service's own means without one, scaled by
// the job's prediction error; the ground truth is the Service's draws.
//
// # Stepping and forking
//
// New and Sim.Step drive a simulation one event at a time (Run is that
// loop), so a caller can look at its State between events. Sim.Fork copies
// a simulation between steps into an independent one, every job it holds
// included, that runs on exactly as the original would unless its
// migration rule is replaced: a counterfactual branch, such as a migration
// decision played both ways. Policies and Migrators with state fork
// themselves (PolicyForker, MigratorForker); the Service model is shared.
//
// # Real execution
//
// With a Machine (Config.Machine) the same code schedules real work: the
// policies, queues, batching, splitting, migrations and memory tokens
// decide exactly as in a simulation, while time is the machine's clock
// and a batch ends when the machine says it has run. The seam is that
// small on purpose: Step waits on the machine for the next event due
// (an arrival, a batching timer, a migration landing) or a batch's end,
// whichever comes first, and start hands the batch to the machine instead
// of drawing its time. A test runs the simulator on a machine that times
// batches as the Service would and checks that the records are the
// simulation's, so a real run and a simulation differ only in time.
//
// # Determinism
//
// Time is virtual (without a Machine); nothing reads the wall clock. Events at the same time are
// handled in a fixed order: completions and batching timers first, in the
// order they were last set, then migrated jobs arriving, then new jobs.
// Arrivals are handled in input order. Ties between devices in a policy's
// choice go to the lowest index. Every ground-truth draw is a hash of the
// caller's seed and the job, so the same inputs give the same records.
package sim
