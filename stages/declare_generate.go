package stages

import (
	"errors"
	"fmt"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// generateStage is the generate stage: seeded workloads, or imported ones.
var generateStage = declare(Generate, func(c *Config) *generatespec.Config { return &c.Generate }, generatespec.DefaultConfig, declareGenerate)

func declareGenerate(cfg Config, rt Runtime) (pipeline.Stage, error) {
	// An imported workload's content enters the key, under its key.
	extern := map[string]string{}
	for _, w := range []struct {
		name string
		w    generatespec.Workload
	}{{generatespec.WorkloadTrain, cfg.Generate.Train}, {generatespec.WorkloadEval, cfg.Generate.Eval}} {
		if w.w.Import == "" {
			continue
		}
		key := "generate." + w.name + ".import"
		path := rt.Path(w.w.Import)
		digest, err := fileDigest(path, -1) // streamed: any size
		if err != nil {
			return pipeline.Stage{}, fmt.Errorf("%s: %w", key, err)
		}
		extern[key] = digest
	}
	if t, e := extern["generate.train.import"], extern["generate.eval.import"]; t != "" && t == e {
		return pipeline.Stage{}, errors.New("generate.train.import and generate.eval.import hold the same jobs: " +
			"the learned models would be judged on the jobs they learned from; import a separate eval workload")
	}
	return pipeline.Stage{
		Name: Generate,
		// Its own section, and how many eval workloads schedule's
		// replications need.
		Config:   generatespec.KeyedOf(cfg.Generate, cfg.Schedule.Replications),
		UsesSeed: true,
		Estimate: generateEstimate{cfg: cfg.Generate, reps: cfg.Schedule.Replications, path: rt.Path},
		Extern:   extern,
	}, nil
}
