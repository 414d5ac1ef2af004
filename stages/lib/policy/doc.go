// Package policy holds mlsched's scheduling policies, one file each, and the
// registry that names them. A policy is a sim.Placer (which device queue an
// arriving job joins) and optionally a sim.Ranker (the order of a device's
// queue; FIFO without one), a sim.StrictOrder (whether a job may overtake
// one that waits for memory), a sim.GroupPicker (which group of compatible
// jobs a device batches next, chosen afresh each time) and a sim.Splitter
// (how a large job divides across devices).
//
//	policy       placement                              next on a device              overtaking
//	fifo         earliest predicted finish of the job   arrival order                 no
//	round_robin  devices in turn                        arrival order                 no
//	random       uniformly at random (seeded)           arrival order                 no
//	greedy       earliest predicted finish of the job   arrival order                 yes
//	edf          earliest predicted finish of the job   interactive first, then       yes
//	                                                    earliest deadline
//	batch_aware  earliest predicted finish, counting    the group with the most       yes
//	             what the job adds to a waiting batch   samples to batch
//	dynamic      as batch_aware                         the best weighted score of    yes
//	                                                    class, urgency, batchability,
//	                                                    service time and memory
//
// Placement and order are separate choices. Every policy that places
// does so by the job's earliest predicted finish, of two devices that tie
// the one that runs the job faster (never the first by its place in the
// list), so that two policies compared differ in their order and not in a
// handicap of placement. A Spec may give such a policy a naive placement
// instead, after @ (Placements): "fifo@backlog" places by the predicted
// backlog alone (the earliest free lane, blind to how long the job runs
// there), "edf@round_robin" deals devices in turn, "edf@random" draws
// them; round_robin and random are these placements with arrival order.
//
// A Spec adds options to a policy ("edf+batch", "greedy+split+migrate"):
// +batch turns on the simulator's micro-batching (batch_aware and dynamic
// always batch), +split divides large jobs across devices so that the parts
// are predicted to end together (greedy, edf, batch_aware and dynamic split),
// and +migrate lets a device with an idle lane take the job another would run
// next, by the Threshold rule.
//
// Predictions are the Service model's expected times (sim.State.Predict,
// PredictBatch and Backlog), never the ground truth a job will draw.
package policy
