// Package cluster is the virtual cluster that schedule.cluster describes,
// as the simulator sees it, and the one place where a simulation of it is
// configured. The schedule stage simulates the eval workload on it, and the
// train stage's rollouts simulate the train workload on the same cluster,
// so that what train learns holds where schedule uses it; neither stage
// imports the other, both import this library.
//
// A Cluster (New, Open) holds each device's service-time curves from the
// profile (package servicetime), its contention factors, the memory token
// model, and the policies' predictions: the curves' means, or train's
// predictor tabulated (UsePredictor). It is the simulator's sim.Service.
// Curves are resolved by need (Resolve), for the (model, precision) pairs
// the workload holds, by the pass over the jobs that computes their lower
// bounds (Bounds), before any simulation starts; from then on the cluster
// is read-only and shared by concurrent simulations.
//
// JobReader streams a jobs-<workload>.parquet file as sim.Jobs, a page at
// a time, in bounded memory; Load reads a whole workload for the train
// stage.
//
// Build turns a Simulation (a policy spec, seeds, the predictions, a
// dearer decision cost, slower service, a real machine) into the
// simulator's configuration, with the options' settings from schedule's
// configuration. The learned policy's decisions are served by what the
// schedule stage hands Serve: this package knows nothing of the placement
// network or onnxruntime.
package cluster
