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
// model with a uniform variate from the simulator's seeded generator: the
// time the batch takes on the profiled device running alone. Lanes that share
// a device slow each other down: while k lanes of device d are busy, each
// progresses at rate speed(d)/contention(d, k). Rates change only when a job
// starts or ends on the device; then the simulator settles every running
// job's remaining work and re-times its completion. This is exact for the
// model (piecewise-constant rates), so small cases can be checked by hand.
//
// # Determinism
//
// Time is virtual; nothing reads the wall clock. Events at the same time are
// handled in a fixed order: completions before arrivals, and among
// completions in the order they were scheduled. Arrivals are handled in input
// order. Ties between devices in a policy's choice go to the lowest index.
// Every random draw comes from one PCG generator seeded by the caller, in
// event order, so the same inputs give the same records.
package sim
