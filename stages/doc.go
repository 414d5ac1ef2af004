// Package stages assembles mlsched's pipeline: the whole configuration file
// (Config), and the registry that declares each stage to the runner as a
// pipeline.Stage: its name, dependencies, config section, code version,
// references and outputs to publish, but not its code.
//
// The code runs elsewhere: the mlsched-worker program (cmd/mlsched-worker)
// maps each stage to it, and runs it when a stage must run. The declarations
// need only each stage's configuration, which lives in a small package of
// its own (profilespec, generatespec, schedulespec, evaluatespec), so the
// mlsched command links the runner and these declarations and none of the
// stages' dependencies (onnxruntime, gonum/plot, goldmark, parquet-go):
// it starts at once, and a run that finds everything cached is over in a
// few milliseconds. Payload carries the configuration to the worker.
package stages
