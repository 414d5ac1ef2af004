// Package train is the train stage: it learns the two models the learned
// half of the scheduler stands on, and judges each only on data it never
// saw, against the simple thing it replaces.
//
//	profile samples ──> predictor: candidates on grouped k-fold, leave one
//	                    batch size out, leave one model out ──> predictor.json, cv.parquet
//	generate's train workload ──> label: rollouts, move against stay
//	                    ──> placement: 10-64-64-1 network ──> placement.onnx, decisions.parquet
//	                                                  both ──> metrics.parquet
//
// It reads generate's train workload, never the eval one, which schedule
// simulates and evaluate reports on: nothing learned here has seen the jobs
// it is judged on in the report.
//
// # The service-time predictor
//
// Package predictor fits every candidate (the profile table as the
// simulator uses it, golearn's CART, a bagged forest, log-linear least
// squares, boosting) on the same folds and keeps the best by grouped k-fold
// MAPE, or train.predictor.kind. cv.parquet holds every held-out
// configuration with each candidate's prediction, so any reader can
// recompute every score.
//
// # The placement network
//
// Package label runs the simulator on the train workload under edf+migrate
// with some random moves, and at sampled moments forks the simulation to
// play the next migration decision both ways; the branch with the lower
// objective gives the label. Decision points are split into training and
// test in blocks of consecutive points (blockSize), since neighbours share
// most of their state; the network holds out its validation points among
// the training ones for early stopping. Package placement trains the
// network and exports it as ONNX; its inputs are built by sim's
// MigrationFeatures.Vector, the same code that serves it in the simulator.
// The test points score the network, the Threshold rule of schedule's
// +migrate (gain above schedule.migration.min_gain) and the best single
// feature threshold chosen on the training points.
//
// How a fork is judged is a choice (train.placement.horizon, and
// train.placement.arrivals: whether the jobs arriving after the decision
// count), and the labels are only as good as it. So a seeded sample of
// about 400 points is judged other ways too, from the same forks: with the
// other choice of arrivals, and at half and twice the horizon; the
// agreement rows of metrics.parquet say on how many of them each way
// labels as the configured one does, with a block-bootstrap interval, and
// the report's Placement network section shows them.
//
// # Determinism
//
// Every file is a function of the configuration, the seed and the inputs.
// The measured timings (the predictor's fits and predictions, the
// rollouts' rate, the network's training time) go to the manifest's notes
// instead, so that the files stay byte-identical.
package train
