// Package stages assembles mlsched's pipeline: the whole configuration file
// (Config), and the registry that turns each stage package into a
// pipeline.Stage with its code version, config section and dependencies.
//
// Each stage lives in its own package below this one (stages/generate, ...)
// and knows nothing of the runner; the small adapters here translate the
// runner's pipeline.Env into each stage's own arguments, so that editing the
// runner does not change any stage's code version.
package stages
