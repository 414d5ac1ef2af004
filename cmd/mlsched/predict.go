package main

import (
	"github.com/spf13/cobra"
)

// Prediction is one row of mlsched predict's answer: a configuration of
// the model and what each predictor says of it (--json prints a list).
type Prediction struct {
	Device    string `json:"device"`
	Threads   int    `json:"threads"`
	Precision string `json:"precision"`
	Batch     int    `json:"batch"`
	// PredictedS is the train stage's predictor's latency in seconds;
	// null where it has none (the table kind knows only what the profile
	// measured).
	PredictedS *float64 `json:"predicted_s"`
	// OpLevelS is the per-operator cost model's, null where train fitted
	// none for the configuration's device, precision and thread count.
	OpLevelS *float64 `json:"op_level_s"`
}

// predictFlags are mlsched predict's flags.
type predictFlags struct {
	name string
	// axis is --batch-axis, nil when not given.
	axis    *int
	batches []int
	// batchSet says --batch was given: profile.batch_sizes otherwise.
	batchSet bool
	asJSON   bool
}

// predictCmd is mlsched predict in both builds. It links the predictors'
// code, which would slow the start of every command of the lean build (a
// cached run included) by about a millisecond: the lean build hands it to
// the full one, as it does diff (see lean.go).
func (a *app) predictCmd() *cobra.Command {
	var pf predictFlags
	var batchAxis int
	cmd := &cobra.Command{
		Use:   "predict MODEL.onnx",
		Short: "Predict an ONNX model's latency from its graph, with the trained predictor, without running it",
		Long: `Predict reads an ONNX file, derives what the profile's catalog would hold of
it (FLOPs, parameters, bytes per sample, batch axis) from its graph, and
prints the latency the current train version's predictor gives it at each
batch size of profile.batch_sizes (or --batch), on each device and thread
count the profile measured, in the precision the file holds. Nothing is
timed. Where the profile timed each node (profile.operators), the
per-operator cost model's prediction is printed beside (op-level).`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("batch-axis") {
				pf.axis = &batchAxis
			}
			pf.batchSet = cmd.Flags().Changed("batch")
			return a.predict(args[0], pf)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&pf.name, "name", "", "the model's `name` in the output (default: the file's base name)")
	f.IntVar(&batchAxis, "batch-axis", 0, "the input's batch `axis`, where it has several dynamic ones (as profile.models' batch_axis)")
	f.IntSliceVar(&pf.batches, "batch", nil, "batch `sizes` to predict (default: profile.batch_sizes)")
	f.BoolVar(&pf.asJSON, "json", false, "print a JSON list of {device, threads, precision, batch, predicted_s, op_level_s}")
	return cmd
}
