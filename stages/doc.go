// Package stages assembles mlsched's pipeline: the whole configuration file
// (Config), and the registry that declares each stage to the runner as a
// pipeline.Stage: its name, dependencies, config section, code version,
// references and outputs to publish, but not its code.
//
// # Layout
//
// The folders below stages/ say what each package is:
//
//	stages/<stage>/   profile, generate, train, schedule, evaluate: a stage's
//	                  code and its private packages (train/label,
//	                  schedule/ortmachine, evaluate/chart, ...)
//	stages/spec/      each stage's declaration: its config section, file
//	                  names and row types (profilespec, generatespec, ...)
//	stages/lib/       libraries the stages share: the simulator (sim), the
//	                  policies, the virtual cluster, ground-truth service
//	                  times (servicetime), metrics, the predictor's model,
//	                  the placement network's serving (placementnet), the
//	                  model zoo, onnxruntime (ort), the catalog
//
// A stage imports libraries, specs and pipeline/, never another stage; a
// library or a spec imports no stage (TestNoStageImportsAnother). A
// stage's code version covers its import closure (package codeversion),
// so an edit reruns only the stages whose code it is
// (TestCodeVersionsAreNarrow).
//
// # Declarations and code
//
// The code runs elsewhere: the mlsched-worker program (cmd/mlsched-worker)
// maps each stage to it, and runs it when a stage must run. The declarations
// need only each stage's spec, so the mlsched command links the runner and
// these declarations and none of the stages' dependencies (onnxruntime,
// gonum/plot, goldmark, parquet-go): it starts at once, and a run that
// finds everything cached is over in a few milliseconds. Payload carries
// the configuration to the worker.
package stages
