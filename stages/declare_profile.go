package stages

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// profileStage is the profile stage: it measures this machine, or imports
// a profile measured elsewhere.
var profileStage = declare(Profile, func(c *Config) *profilespec.Config { return &c.Profile }, profilespec.DefaultConfig, declareProfile)

func declareProfile(cfg Config, rt Runtime) (pipeline.Stage, error) {
	extern := map[string]string{}
	keyed := cfg.Profile
	keyed.Import = importName(keyed.Import)
	if pc := cfg.Profile; pc.Import != "" {
		importPath := rt.Path(pc.Import)
		digest, err := fileDigest(importPath, profilespec.MaxImportBytes)
		if err != nil {
			return pipeline.Stage{}, &config.Error{Key: "profile.import", Msg: err.Error(), Err: errors.Join(config.ErrInvalidValue, err)}
		}
		extern[filepath.Base(importPath)] = digest
	}
	// A model file's content enters the key as an import's does, and its
	// path by its base name alone.
	keyed.Models = slices.Clone(keyed.Models)
	for i, m := range keyed.Models {
		if m.File == "" {
			continue
		}
		digest, err := fileDigest(rt.Path(m.File), onnxgraph.MaxModelBytes)
		if err != nil {
			return pipeline.Stage{}, &config.Error{Key: fmt.Sprintf("profile.models[%d].file", i), Msg: err.Error(), Err: errors.Join(config.ErrInvalidValue, err)}
		}
		keyed.Models[i].File = importName(m.File)
		extern[fmt.Sprintf("%s (model %s)", keyed.Models[i].File, m.Name)] = digest
	}
	return pipeline.Stage{
		Name:      Profile,
		Config:    keyed,
		UsesSeed:  true,
		Extern:    extern,
		Exclusive: true, // nothing else may run on the cores while it times
		Measures:  cfg.Profile.Measure,
		Publish:   []pipeline.Publish{{Glob: "*.onnx", Dir: "models"}},
	}, nil
}
