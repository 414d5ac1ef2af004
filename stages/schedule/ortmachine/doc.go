// Package ortmachine runs batches for real: it is the sim.Machine that turns
// the simulator into a scheduler of this machine's onnxruntime, so that
// the simulator can be measured against what it simulates.
//
// Each lane of a device is a worker goroutine locked to its own OS thread
// for the machine's life, with its own onnxruntime session per model and
// precision, at the intra-op threads the cluster configures, and tensors
// bound once per batch size (ort.Session.Bind); the lane makes, warms and
// runs them all on its thread, as a server's worker would. A batch is a
// real batch: the jobs' inputs, seeded samples of each model's input, are
// concatenated into the binding's input tensor and the model runs once.
// The models are the profile's own .onnx files, the very bytes it timed.
// Machine.Prepare makes the sessions and the tensors of the sizes a run
// will see before its clock starts (writing each tensor once, so that its
// pages are mapped before a batch fills it), and runs each session once;
// a size not prepared is bound when first needed, and the batch says so
// (Batch.Bound).
//
// A run measures a warm server, as the profile times warm runs. Before
// its clock starts, Begin runs each session at its largest prepared batch
// size until a run faults no page in (at most maxWarmRuns runs; Warmup
// says what it did): onnxruntime faults new memory in on a shape's first
// run (and for some models its second), and a smaller shape then reuses
// that memory. Without it, the first real runs ran well over the
// profile's latencies, the lanes' threads faulting pages in within their
// batches (docs/fidelity.md, "Page faults", has the figures). Each batch
// records the pages its Run still faulted in (Batch.Faults).
//
// A device whose profile was measured through onnxruntime's CUDA provider
// runs on CUDA lanes (Device.Provider), on GPU 0: each keeps a session
// per model, precision and batch size, as the profile times a GPU, since
// a CUDA session sets its convolutions up again whenever its input shape
// changes; Begin runs each new one twice, its first run choosing its
// convolutions' algorithms.
//
// Every batch keeps its moments on the run's clock: handed to the
// machine, taken by its lane, inputs concatenated and Run begun, Run
// returned, and heard of by the scheduler; and the machine keeps how
// late each event due at a time was handled. They are the dispatch
// overheads that the simulator's trace cannot show. An event is handled
// within tens of microseconds of its time: the machine sleeps its last
// 1.5 ms before it on the kernel's high-resolution timer, since a Go
// timer fires up to a millisecond late (Machine.Wait).
//
// # Where the real run lives
//
// The schedule stage runs it, as the optional schedule.real, not a sixth
// stage: a real run needs exactly what the simulations need (the eval
// workload, the profile, the policies with train's predictor) and
// nothing they do not, and its point is to be set beside a simulation of
// the same jobs under the same code, which the stage runs right after.
// The stage runs its real runs before any simulation, one at a time, and
// is declared Exclusive while it has any, so nothing else uses the cores
// as they run. A real run is a measurement, not a function of its inputs:
// each is a unit in the stage's memo, keyed by its inputs (the config
// part the simulations depend on, the policy, the load, the slice, the
// upstream digests and the code), so an unrelated edit (another sweep
// load, a new policy to simulate) reuses it, and a pinned schedule
// version keeps it.
//
// Each real run is set beside two simulations of its jobs: the plain one,
// its batches' times drawn from the profile, and a replay (sim.Replay),
// the same simulator whose batches take exactly the times the real run
// measured. The replay separates the simulator's two models: what its
// queues, decisions and clock make of given times (the replay's error)
// and the service-time model, the profile's latencies and contention
// factors (the plain simulation's error beyond the replay's).
//
// Three more views bound what the comparison can show. With
// schedule.real.sensitivity, each slice is simulated again with every
// service time that fraction shorter and longer: how far the simulation
// moves for a service-time model off by that much (near capacity, a few
// percent moves a queue's percentiles far more; docs/fidelity.md).
// With schedule.real.draws, each slice is simulated with that many seeds
// of the service-time draws (the sweep's replications): how far the
// simulation moves with its own randomness. With schedule.real.repeats,
// each slice runs for real again after every slice's first run: how far
// two real runs of the same jobs fall apart.
package ortmachine
