// Package learned is the evaluate report's "Learned decisions" section:
// what the placement network's decisions did when schedule simulated a
// learned policy (edf with every migration decision the network's, served
// through onnxruntime). It sets each learned spec against edf with the
// same options, with the Threshold rule and with no migration, paired as
// the baselines are (it is a section.Comparer: section.Analysis.Paired);
// shows each learned run's serving.parquet and the wall-clock figures the
// schedule manifest notes, and says what the simulated clock charged a
// decision and from what (a draw from the profile's timing of the serving
// path, the tight-loop fallback, or a configured duration) beside them;
// and, from studies.parquet, how each policy
// degrades with prediction error and what dearer decisions do.
//
// The model (read.go: the serving files, notes and studies read and
// checked; study.go: the prediction-error study laid out) is apart from
// the prose (prose.go, studyprose.go) and from the rows it adds to
// metrics.parquet (rows.go).
package learned
