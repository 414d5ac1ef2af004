package stages

import (
	"fmt"

	"github.com/mlsched/mlsched/pipeline"
)

// Declaration is one stage as mlsched declares it to the runner: its name,
// its section of pipeline.yaml with the section's defaults and checks, and
// the pipeline.Stage it declares from the whole configuration, everything
// but its code (which runs in a worker process, cmd/mlsched-worker). Each
// stage is one Declaration value in a file of its own here (declare_<stage>.go), and one line
// in the list of stages (declarations).
type Declaration struct {
	// Name is the stage's name: its directory in the store, its section of
	// pipeline.yaml, and how one stage names another among its Deps.
	Name string
	// setDefault and validate act on the stage's section of a Config.
	setDefault func(*Config)
	validate   func(Config) error
	// declare builds the stage from the configuration. It fails only on
	// bad input the config cannot see by itself (a missing imported file).
	declare func(Config, Runtime) (pipeline.Stage, error)
}

// section is what a stage's section of the configuration (its spec
// package's Config) offers: its own checks, each error a *config.Error
// naming its key within the section.
type section interface{ Validate() error }

// declare makes a stage's Declaration from its section's place in a Config
// (field), the section's defaults (def) and its declaring function.
func declare[S section](name string, field func(*Config) *S, def func() S, d func(Config, Runtime) (pipeline.Stage, error)) Declaration {
	return Declaration{
		Name:       name,
		setDefault: func(c *Config) { *field(c) = def() },
		validate:   func(c Config) error { return (*field(&c)).Validate() },
		declare:    d,
	}
}

// Declare builds the stage from the configuration, with its code version
// (the fingerprint of stages/<name> and the packages it imports) and no
// code (Stage.Run is nil).
func (d Declaration) Declare(cfg Config, rt Runtime) (pipeline.Stage, error) {
	s, err := d.declare(cfg, rt)
	if err != nil {
		return pipeline.Stage{}, err
	}
	if s.Name != d.Name {
		return pipeline.Stage{}, fmt.Errorf("the declaration of %q builds stage %q", d.Name, s.Name)
	}
	if s.Code = codeVersions["stages/"+d.Name]; s.Code == "" {
		return pipeline.Stage{}, fmt.Errorf("stage %s has no code version: run 'make build' to refresh stages/codeversion_gen.go", d.Name)
	}
	return s, nil
}
