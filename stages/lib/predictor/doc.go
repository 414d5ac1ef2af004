// Package predictor is the service-time predictor's model: a
// self-describing JSON model file (File) that the train stage fits and
// writes (package predictorfit, below stages/train) and the simulations
// load and query (Load, Model.Predict): how long a batch of a catalog
// model takes on a device, from the profile's measured samples.
//
// # Features
//
// Every feature is numeric (golearn's trees ignore categorical attributes
// without a word). In order, with the catalog's fp32 byte figures scaled
// by the precision's element width (4 for fp32, 2 for fp16):
//
//	log_flops_batch             ln(flops_per_sample × batch)
//	log_flops                   ln(flops_per_sample)
//	log_params                  ln(params)
//	log_weight_bytes            ln(weight bytes)
//	log_activation_bytes_batch  ln(activation bytes per sample × batch)
//	log_input_bytes_batch       ln(input bytes per sample × batch)
//	log_intensity               ln(flops × batch / footprint bytes)
//	batch, log_batch, threads, log_threads
//	bytes_per_element           4 or 2
//	device=<name>               one-hot, one column per training device
//
// The device columns come from the training data, sorted. A query for a
// device the model was not trained on has no prediction (Predict returns
// false): an all-zero one-hot row would silently take whichever device a
// tree lumps it with. The learned candidates predict ln(latency in
// seconds) and return its exponential, so an error of a microsecond MLP
// weighs as much as one of a second-long ResNet. The model file lists the
// features with their encodings; Load refuses a file whose list is not
// the one this package computes.
//
// # The file
//
// A File names its format, its kind (one of Kinds, the candidates the
// train stage fits; package predictorfit describes each), the target
// (ln seconds for the learned kinds), its feature list, its training
// devices, the catalog of the models whose figures the features are
// computed from (the profile's, models.parquet), and the parameters of
// its kind: a linear fit, trees (flat
// arrays: feature, threshold, left, right, value, children after their
// parent), the table's measured latencies, or the affine kind's series.
// Load checks every field and names the one at fault; NewModel does the
// same for a File built in memory.
package predictor
