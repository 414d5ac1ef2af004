package stages

import (
	"errors"
	"fmt"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// generateStage is the generate stage: seeded workloads, or imported ones.
var generateStage = declare(Generate, func(c *Config) *generatespec.Config { return &c.Generate }, generatespec.DefaultConfig, declareGenerate)

func declareGenerate(cfg Config, rt Runtime) (pipeline.Stage, error) {
	// An imported workload's content enters the key, under its key.
	extern := map[string]string{}
	gc := cfg.Generate
	var keys []string
	for _, w := range gc.Workloads() {
		if w.W.Import == "" {
			continue
		}
		key := "generate." + w.Name + ".import"
		digest, err := fileDigest(rt.Path(w.W.Import), -1) // streamed: any size
		if err != nil {
			return pipeline.Stage{}, &config.Error{Key: key, Msg: err.Error(), Err: errors.Join(config.ErrInvalidValue, err)}
		}
		// Two workloads of the same jobs: the learned models would be
		// judged on what they learned from.
		for _, k := range keys {
			if extern[k] == digest {
				return pipeline.Stage{}, &config.Error{Key: key, Err: config.ErrInvalidValue,
					Msg: fmt.Sprintf("holds the same jobs as %s: the learned models would be judged on the jobs they learned from; import a separate workload", k)}
			}
		}
		extern[key] = digest
		keys = append(keys, key)
	}
	keyed := cfg.Generate
	for _, w := range keyed.Workloads() {
		w.W.Import = importName(w.W.Import)
	}
	return pipeline.Stage{
		Name: Generate,
		// Its jobs are of the profile's models: of the profile's output it
		// reads the catalog alone, so that a new measurement of the same
		// models does not regenerate the workloads.
		Deps:  []string{Profile},
		Reads: map[string][]string{Profile: {catalog.File}},
		// Its own section, and how many eval workloads schedule's
		// replications need.
		Config:   generatespec.KeyedOf(keyed, cfg.Schedule.Replications),
		UsesSeed: true,
		Estimate: generateEstimate{cfg: cfg.Generate, reps: cfg.Schedule.Replications, path: rt.Path},
		Extern:   extern,
	}, nil
}
