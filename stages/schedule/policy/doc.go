// Package policy holds mlsched's scheduling policies, one file each, and the
// registry that names them. A policy is a sim.Placer (which device queue an
// arriving job joins), optionally a sim.Ranker (the order of a device's
// queue; FIFO without one) and a sim.StrictOrder (whether a job may overtake
// one that waits for memory).
//
//	policy       placement                              queue order                   overtaking
//	fifo         earliest predicted free lane           arrival                       no
//	round_robin  devices in turn                        arrival                       no
//	random       uniformly at random (seeded)           arrival                       no
//	greedy       earliest predicted finish of the job   arrival                       yes
//	edf          earliest predicted finish of the job   interactive first, then       yes
//	                                                    earliest deadline
//
// Predictions are the Service model's expected times (sim.State.Predict and
// Backlog), never the ground truth a job will draw.
package policy
