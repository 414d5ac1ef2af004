// Package placement trains the migration network of the train stage, scores
// it on held-out decision points against threshold baselines, and exports
// it as ONNX for the schedule stage. It does not label: the labels come
// from the simulator's rollouts, elsewhere; this package fits and scores
// the arrays it is given.
//
// # Network
//
// A decision point is Inputs (10) float32 features, in the order the
// caller names them. The network is the one the migration scheduler
// describes (the seed's ml-migration-scheduler.md):
//
//	u = (asinh(x ⊙ s) − μ)/σₓ
//	p = σ(W₃ · ReLU(W₂ · ReLU(W₁ · u + b₁) + b₂) + b₃)
//
// with hidden layers 64 wide (Options.Hidden) and "migrate" when
// p > Threshold (0.5). The warp asinh(x ⊙ s) (Options.Scale) is linear
// within 1/s of zero and logarithmic beyond, either sign: a decision's
// times span microseconds to minutes, and without it the long tail sets
// the spread, squeezing every short time near zero, where the decisions
// are made. (On the decision points of two runs of the default pipeline
// it cut the held-out log loss from 0.060 and 0.040 to 0.036 and 0.028,
// and the calibration error from 0.012 and 0.010 to 0.003.) μ and σₓ
// standardise the warped features with the training split's mean and
// standard deviation; a feature constant there gets σₓ = 1 and reaches the
// first layer as zero.
//
// # Training
//
// Train minimises the binary cross-entropy, each point's term scaled by
// its optional weight, with Adam (β₁ 0.9, β₂ 0.999, ε 1e-8, step 1e-3 by
// default) on shuffled mini-batches. Hidden layers start from He normal
// weights, the output layer from Glorot uniform ones, biases from zero.
// Holdout sets aside a stratified validation share; after each epoch the
// validation loss is measured, training stops when it has not improved for
// Options.Patience epochs, and the network returned has the weights of the
// best epoch. The curve ([]Epoch) records every epoch's training loss,
// validation loss and validation accuracy and marks the best one.
//
// Training runs in float64 on flat slices, with gonum's assembly axpy and
// dot kernels on 64-wide rows: weights are stored input-major inside the
// trainer, so each active input adds one scaled row, and the inputs ReLU
// zeroed (about half) cost nothing. Each mini-batch's gradient is split
// into a fixed number of parts computed on as many cores as there are and
// summed in a fixed order; with every random draw taken from PCG streams
// keyed by Options.Seed, the same data and seed give the same network bit
// for bit whatever the number of cores (on one architecture: the Go
// compiler may fuse multiply–adds on arm64). 50,000 points × 50 epochs
// take about five seconds.
//
// # Export
//
// Network.ONNX writes the graph with stages/lib/zoo's Graph builder (IR 8,
// opset 17): input "features" [N, 10] float32 with a symbolic batch
// dimension, Mul(scale) and Asinh nodes, Sub(mean) and Div(std) nodes,
// three Gemm layers in
// nn.Linear's layout (transB = 1, as zoo's mlp) with Relu, Relu and
// Sigmoid, and output "p" [N, 1] float32. The standardisation is kept as
// two nodes rather than folded into the first layer (W₁/σₓ and
// b₁ − W₁·μ/σₓ) because the folded bias cancels in float32 when a
// feature's mean is large against its spread, and because the exported
// weights then equal the trained ones. The model's doc string and the
// scale, mean and std initializers' list the feature names in column
// order.
//
// The Network's parameters are float32, the values written to the graph,
// and Predict computes the warp and the standardisation in float32 as the
// graph does and the layers in float64, so onnxruntime and Predict agree to
// about 1e-7.
//
// # Scores
//
// Evaluate scores a scorer's Predictions (a ranking score, a probability
// and a decision per point) on held-out points: accuracy and the confusion
// matrix of the decisions, the AUC exactly from the ranks of the scores
// (ties share their mean rank), the log loss and the calibration (10
// equal-width bins with their mean prediction, observed rate and count,
// and the expected calibration error) of the probabilities, and the ROC
// curve, thinned evenly along its length to at most 200 points.
//
// The baselines are Rules, thresholds on one feature: the hand-written
// rule the simulator uses (NewRule, for example "gain > min_gain") and the
// best single-feature threshold on the training split over every feature
// and both directions (BestRule). A rule's score is its feature's value,
// and its probability the Laplace-smoothed share of training points
// labelled migrate on each side of its threshold, so that all figures mean
// the same for every scorer. The test points must be held out before
// training (Holdout with a seed of their own) and used for nothing else.
//
// Scores.Metrics (long form: scorer, metric, value), Bin, ROCPoint and
// Epoch are rows with parquet tags, for metrics.parquet and the ROC chart.
package placement
