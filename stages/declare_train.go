package stages

import (
	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// trainStage is the train stage: the predictor and the placement network.
var trainStage = declare(Train, func(c *Config) *trainspec.Config { return &c.Train }, trainspec.DefaultConfig, declareTrain)

func declareTrain(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name: Train,
		// It reads generate's train workload, and the holdout one it
		// scores the network on, never the eval one: an edit of the eval
		// workload does not retrain.
		Deps:  []string{Generate, Profile},
		Reads: map[string][]string{Generate: {generatespec.JobsFile(generatespec.WorkloadTrain), generatespec.JobsFile(generatespec.WorkloadHoldout)}},
		// Its own section, and the part of schedule's that its rollouts
		// simulate with.
		Config:   trainspec.KeyedOf(cfg.Train, cfg.Schedule),
		UsesSeed: true,
		// The fingerprint covers the predictor, the network and the
		// labeller, and the simulator they import.
		Publish: []pipeline.Publish{{Glob: trainspec.PredictorFile, Dir: "models"}, {Glob: trainspec.PlacementFile, Dir: "models"}},
	}, nil
}
