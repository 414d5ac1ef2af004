package stages

//go:generate go run ../cmd/fingerprint -root .. -under stages -o codeversion_gen.go -pkg stages

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/generate"
)

// Config is the whole of pipeline.yaml: the global keys and one section per
// stage.
type Config struct {
	// Seed is the global seed every seeded stage derives its randomness from.
	Seed int64 `koanf:"seed"`
	// Store is the artifact store's directory, relative to the config file.
	Store string `koanf:"store"`
	// Generate is the generate stage's section.
	Generate generate.Config `koanf:"generate"`
}

// DefaultConfig returns the configuration used for every key the file does
// not set.
func DefaultConfig() Config {
	return Config{Seed: 1, Store: "data", Generate: generate.DefaultConfig()}
}

// Validate checks every value; each error names its full key path.
func (c Config) Validate() error {
	var errs []error
	if c.Store == "" {
		errs = append(errs, errors.New("store: must name a directory"))
	}
	errs = append(errs, c.Generate.Validate())
	return errors.Join(errs...)
}

// factory builds a stage from the configuration.
type factory func(Config) pipeline.Stage

// registry is the explicit list of stages: one line per stage.
var registry = map[string]factory{
	"generate": generateStage,
}

// Registry returns mlsched's stages configured by cfg.
func Registry(cfg Config) (*pipeline.Registry, error) {
	r := pipeline.NewRegistry()
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		s := registry[name](cfg)
		if s.Name != name {
			return nil, fmt.Errorf("registry entry %q builds stage %q", name, s.Name)
		}
		if s.Code == "" {
			return nil, fmt.Errorf("stage %s has no code version: run 'make build' to refresh stages/codeversion_gen.go", name)
		}
		if err := r.Register(s); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func generateStage(cfg Config) pipeline.Stage {
	return pipeline.Stage{
		Name:     "generate",
		Config:   cfg.Generate,
		UsesSeed: true,
		Code:     codeVersions["stages/generate"],
		Run: func(ctx context.Context, env *pipeline.Env) error {
			return generate.Run(ctx, cfg.Generate, env.Seed, generate.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress})
		},
	}
}
