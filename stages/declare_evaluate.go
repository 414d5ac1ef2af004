package stages

import (
	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
)

// evaluateStage is the evaluate stage: metrics and the report.
var evaluateStage = declare(Evaluate, func(c *Config) *evaluatespec.Config { return &c.Evaluate }, evaluatespec.DefaultConfig, declareEvaluate)

// CompareTo is the config key of evaluate's reference to an earlier run
// (pipeline.Ref.Key, and Env.Ref's argument).
const CompareTo = "evaluate.compare_to"

func declareEvaluate(cfg Config, _ Runtime) (pipeline.Stage, error) {
	var refs []pipeline.Ref
	if v := cfg.Evaluate.CompareTo; v != "" {
		refs = []pipeline.Ref{{Key: CompareTo, Stage: Evaluate, Version: v, File: evaluatespec.MetricsFile}}
	}
	return pipeline.Stage{
		Name: Evaluate,
		Deps: []string{Generate, Profile, Train, Schedule},
		// Evaluate reads what it says of the simulations (policies,
		// replications, cluster, sweep) from schedule's artifact, so its
		// own section is all of the config its key needs.
		Config:   cfg.Evaluate,
		UsesSeed: true,
		Refs:     refs,
		// The report names its upstreams' versions and shows their
		// configs as their manifests record them: the versions enter the
		// key, so what it shows is what its key covers.
		ShowsUpstreams: true,
		// The fingerprint covers the metrics, charts and report packages.
		Publish: []pipeline.Publish{
			{Glob: "report.*", Dir: "reports"},
			{Glob: evaluatespec.ChartsDir + "/*.svg", Dir: "reports/" + evaluatespec.ChartsDir},
		},
	}, nil
}
