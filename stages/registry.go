package stages

//go:generate go run ../cmd/fingerprint -root .. -under stages -o codeversion_gen.go -pkg stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/evaluate"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/ort"
	"github.com/mlsched/mlsched/stages/profile"
	"github.com/mlsched/mlsched/stages/schedule"
)

// Config is the whole of pipeline.yaml: the global keys and one section per
// stage.
type Config struct {
	// Seed is the global seed every seeded stage derives its randomness from.
	Seed int64 `koanf:"seed"`
	// Store is the artifact store's directory, relative to the config file.
	Store string `koanf:"store"`
	// Profile is the profile stage's section.
	Profile profile.Config `koanf:"profile"`
	// Generate is the generate stage's section.
	Generate generate.Config `koanf:"generate"`
	// Schedule is the schedule stage's section.
	Schedule schedule.Config `koanf:"schedule"`
	// Evaluate is the evaluate stage's section.
	Evaluate evaluate.Config `koanf:"evaluate"`
}

// Runtime holds what the stages need from the command line and the
// process, beyond the config file. None of it enters a cache key.
type Runtime struct {
	// ORTLib is the --ort-lib flag.
	ORTLib string
	// Environ is the process environment (for ONNXRUNTIME_LIB).
	Environ []string
	// ConfigDir is the config file's directory: relative paths in the
	// config resolve against it.
	ConfigDir string
	// SearchDirs are where the onnxruntime library that make setup
	// installs is looked for.
	SearchDirs []string
}

// DefaultConfig returns the configuration used for every key the file does
// not set.
func DefaultConfig() Config {
	return Config{Seed: 1, Store: "data", Profile: profile.DefaultConfig(), Generate: generate.DefaultConfig(), Schedule: schedule.DefaultConfig(), Evaluate: evaluate.DefaultConfig()}
}

// Validate checks every value; each error names its full key path.
func (c Config) Validate() error {
	var errs []error
	if c.Store == "" {
		errs = append(errs, errors.New("store: must name a directory"))
	}
	errs = append(errs, c.Profile.Validate(), c.Generate.Validate(), c.Schedule.Validate(), c.Evaluate.Validate(),
		c.Evaluate.CheckBaselines(c.Schedule.Policies))
	return errors.Join(errs...)
}

// The stages' names: their directories in the store, their sections of
// pipeline.yaml, and how one stage names another among its Deps.
const (
	Profile  = "profile"
	Generate = "generate"
	Schedule = "schedule"
	Evaluate = "evaluate"
)

// factory builds a stage from the configuration. It fails only on bad
// input the config cannot see by itself (a missing imported file).
type factory func(Config, Runtime) (pipeline.Stage, error)

// registry is the explicit list of stages: one line per stage.
var registry = map[string]factory{
	Generate: generateStage,
	Profile:  profileStage,
	Schedule: scheduleStage,
	Evaluate: evaluateStage,
}

// Registry returns mlsched's stages configured by cfg.
func Registry(cfg Config, rt Runtime) (*pipeline.Registry, error) {
	r := pipeline.NewRegistry()
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		s, err := registry[name](cfg, rt)
		if err != nil {
			return nil, err
		}
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

func generateStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name:     Generate,
		Config:   cfg.Generate,
		UsesSeed: true,
		Code:     codeVersions["stages/generate"],
		Run: func(ctx context.Context, env *pipeline.Env) error {
			return generate.Run(ctx, cfg.Generate, env.Seed, generate.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress})
		},
	}, nil
}

func profileStage(cfg Config, rt Runtime) (pipeline.Stage, error) {
	pc := cfg.Profile
	var importPath string
	extern := map[string]string{}
	if pc.Import != "" {
		importPath = rt.path(pc.Import)
		digest, err := fileDigest(importPath)
		if err != nil {
			return pipeline.Stage{}, fmt.Errorf("profile.import: %w", err)
		}
		extern[filepath.Base(importPath)] = digest
	}
	return pipeline.Stage{
		Name:      Profile,
		Config:    pc,
		UsesSeed:  true,
		Code:      codeVersions["stages/profile"],
		Extern:    extern,
		Exclusive: true, // nothing else may run on the cores while it times
		Publish:   []pipeline.Publish{{Glob: "*.onnx", Dir: "models"}},
		Run: func(ctx context.Context, env *pipeline.Env) error {
			lib := profile.Library{}
			if pc.Measure {
				configured := ""
				if pc.ORTLib != "" {
					configured = rt.path(pc.ORTLib)
				}
				path, src, err := ort.Locate(rt.ORTLib, configured, rt.Environ, rt.SearchDirs)
				if err != nil {
					return err
				}
				lib = profile.Library{Path: path, Source: src}
			}
			return profile.Run(ctx, pc, env.Seed, lib, importPath,
				profile.Output{Dir: env.Dir, Metadata: env.Metadata, Notes: env.Notes, Progress: env.Progress})
		},
	}, nil
}

func scheduleStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name:     Schedule,
		Deps:     []string{Generate, Profile},
		Config:   cfg.Schedule,
		UsesSeed: true,
		// The fingerprint covers the simulator, the policies and the
		// service model, which the package imports.
		Code: codeVersions["stages/schedule"],
		Run: func(ctx context.Context, env *pipeline.Env) error {
			prof, err := env.Input(Profile)
			if err != nil {
				return err
			}
			gen, err := env.Input(Generate)
			if err != nil {
				return err
			}
			in := schedule.Inputs{
				Samples: prof.Path(profile.SamplesFile),
				Jobs:    gen.Path(generate.JobsFile(generate.WorkloadEval)),
			}
			return schedule.Run(ctx, cfg.Schedule, env.Seed, in,
				schedule.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress, Memo: env.Memo})
		},
	}, nil
}

// compareTo is the config key of evaluate's reference to an earlier run.
const compareTo = "evaluate.compare_to"

func evaluateStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
	var refs []pipeline.Ref
	if v := cfg.Evaluate.CompareTo; v != "" {
		refs = []pipeline.Ref{{Key: compareTo, Stage: Evaluate, Version: v, File: evaluate.MetricsFile}}
	}
	return pipeline.Stage{
		Name: Evaluate,
		Deps: []string{Generate, Profile, Schedule},
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
		Code: codeVersions["stages/evaluate"],
		Publish: []pipeline.Publish{
			{Glob: "report.*", Dir: "reports"},
			{Glob: evaluate.ChartsDir + "/*.svg", Dir: "reports/" + evaluate.ChartsDir},
		},
		Run: func(ctx context.Context, env *pipeline.Env) error {
			ins := map[string]pipeline.Input{}
			for _, name := range []string{Generate, Profile, Schedule} {
				in, err := env.Input(name)
				if err != nil {
					return err
				}
				ins[name] = in
			}
			prov, err := provenance(env, cfg.Evaluate)
			if err != nil {
				return err
			}
			in := evaluate.Inputs{
				Schedule: ins[Schedule].Dir,
				Jobs:     ins[Generate].Path(generate.JobsFile(generate.WorkloadEval)),
				Samples:  ins[Profile].Path(profile.SamplesFile),
			}
			if len(refs) > 0 {
				prev, err := env.Ref(compareTo)
				if err != nil {
					return err
				}
				in.Previous, in.PreviousVersion = prev.Path(evaluate.MetricsFile), prev.Version
			}
			return evaluate.Run(ctx, cfg.Evaluate, env.Seed, in, evaluate.Output{
				Dir: env.Dir, Metadata: env.Metadata, Provenance: prov, Progress: env.Progress})
		},
	}, nil
}

// provenance is what the report says of the run: the versions it rests on,
// the profiled machine, the configuration as each upstream's manifest
// records it (with evaluate's own section and the seed), and the commands
// that reproduce it. All of it is in evaluate's key, through its upstreams'
// versions (Stage.ShowsUpstreams).
func provenance(env *pipeline.Env, own evaluate.Config) (evaluate.Provenance, error) {
	prov := evaluate.Provenance{Versions: []string{Evaluate + "@" + env.Version}}
	var lines []string
	seed := fmt.Sprintf("seed = %d", env.Seed)
	for _, name := range slices.Sorted(maps.Keys(env.Inputs)) {
		in := env.Inputs[name]
		prov.Versions = append(prov.Versions, name+"@"+in.Version)
		m, err := in.Manifest()
		if err != nil {
			return prov, err
		}
		if name == Profile {
			prov.Machine = m.Notes
			prov.Commands = append(prov.Commands, "mlsched pin profile "+in.Version+"   # the measured profile this report rests on")
		}
		l, err := config.Lines(name+".", m.Inputs.Config)
		if err != nil {
			return prov, fmt.Errorf("%s@%s: config in manifest: %w", name, in.Version, err)
		}
		lines = append(lines, l...)
	}
	b, err := config.Canonical(own)
	if err != nil {
		return prov, err
	}
	l, err := config.Lines(Evaluate+".", b)
	if err != nil {
		return prov, err
	}
	lines = append(append(lines, l...), seed)
	slices.Sort(lines)
	prov.Config = strings.Join(lines, "\n") + "\n"
	prov.Commands = append(prov.Commands, "mlsched run                                   # with this pipeline.yaml")
	return prov, nil
}

// path resolves a path from the config against the config's directory.
func (rt Runtime) path(p string) string {
	if filepath.IsAbs(p) || rt.ConfigDir == "" {
		return p
	}
	return filepath.Join(rt.ConfigDir, p)
}

// fileDigest is the sha256 of a file's bytes.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
