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

// factory builds a stage from the configuration. It fails only on bad
// input the config cannot see by itself (a missing imported file).
type factory func(Config, Runtime) (pipeline.Stage, error)

// registry is the explicit list of stages: one line per stage.
var registry = map[string]factory{
	"generate": generateStage,
	"profile":  profileStage,
	"schedule": scheduleStage,
	"evaluate": evaluateStage,
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
		Name:     "generate",
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
		Name:      "profile",
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
		Name:     "schedule",
		Deps:     []string{"generate", "profile"},
		Config:   cfg.Schedule,
		UsesSeed: true,
		// The fingerprint covers the simulator, the policies and the
		// service model, which the package imports.
		Code: codeVersions["stages/schedule"],
		Run: func(ctx context.Context, env *pipeline.Env) error {
			in := schedule.Inputs{
				Samples: env.Inputs["profile"].Path(profile.SamplesFile),
				Jobs:    env.Inputs["generate"].Path(generate.JobsFile(generate.WorkloadEval)),
			}
			return schedule.Run(ctx, cfg.Schedule, env.Seed, in,
				schedule.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress})
		},
	}, nil
}

func evaluateStage(cfg Config, rt Runtime) (pipeline.Stage, error) {
	code := codeVersions["stages/evaluate"]
	flat, err := configLines(cfg)
	if err != nil {
		return pipeline.Stage{}, err
	}
	// The earlier run compare_to names is read from the store; its
	// metrics' digest enters the key, so the report follows it.
	var previous, previousVersion string
	extern := map[string]string{}
	if v := cfg.Evaluate.CompareTo; v != "" {
		st, err := pipeline.OpenStore(rt.path(cfg.Store))
		if err != nil {
			return pipeline.Stage{}, fmt.Errorf("evaluate.compare_to: %w", err)
		}
		m, err := st.Resolve("evaluate", v)
		if err != nil {
			return pipeline.Stage{}, fmt.Errorf("evaluate.compare_to: %w", err)
		}
		i := slices.IndexFunc(m.Files, func(f pipeline.File) bool { return f.Path == evaluate.MetricsFile })
		if i < 0 {
			return pipeline.Stage{}, fmt.Errorf("evaluate.compare_to: evaluate@%s has no %s", m.Version, evaluate.MetricsFile)
		}
		previous, previousVersion = filepath.Join(st.Dir("evaluate", m.Version), evaluate.MetricsFile), m.Version
		extern["evaluate@"+m.Version+"/"+evaluate.MetricsFile] = m.Files[i].Content
	}
	return pipeline.Stage{
		Name: "evaluate",
		Deps: []string{"generate", "profile", "schedule"},
		// The schedule section, which the load sweep simulates again at
		// other loads, needs no place in the key: every setting of it that
		// could change the sweep changes the schedule stage's output too,
		// which the key holds.
		Config:   cfg.Evaluate,
		UsesSeed: true,
		Extern:   extern,
		// The fingerprint covers the metrics, charts and report packages and
		// the schedule stage, which the sweep runs.
		Code: code,
		Publish: []pipeline.Publish{
			{Glob: "report.*", Dir: "reports"},
			{Glob: evaluate.ChartsDir + "/*.svg", Dir: "reports/" + evaluate.ChartsDir},
		},
		Run: func(ctx context.Context, env *pipeline.Env) error {
			prof := env.Inputs["profile"]
			pm, err := prof.Manifest()
			if err != nil {
				return err
			}
			prov := evaluate.Provenance{
				Versions: []string{"evaluate@" + env.Version},
				Config:   flat,
				Machine:  pm.Notes,
				Commands: []string{
					"mlsched pin profile " + prof.Version + "   # the measured profile this report rests on",
					"mlsched run                                   # with this pipeline.yaml",
				},
			}
			for _, name := range slices.Sorted(maps.Keys(env.Inputs)) {
				prov.Versions = append(prov.Versions, name+"@"+env.Inputs[name].Version)
			}
			in := evaluate.Inputs{
				Schedule: env.Inputs["schedule"].Dir,
				Jobs:     env.Inputs["generate"].Path(generate.JobsFile(generate.WorkloadEval)),
				Samples:  prof.Path(profile.SamplesFile),
				Previous: previous, PreviousVersion: previousVersion,
			}
			return evaluate.Run(ctx, cfg.Evaluate, cfg.Schedule, env.Seed, in, evaluate.Output{
				Dir: env.Dir, Metadata: env.Metadata, Memo: env.Memo, Code: code, Provenance: prov, Progress: env.Progress})
		},
	}, nil
}

// configLines is the configuration as used, one "key = value" line per
// setting, as 'mlsched config' prints it.
func configLines(cfg Config) (string, error) {
	b, err := config.Canonical(cfg)
	if err != nil {
		return "", err
	}
	lines, err := config.Lines("", b)
	if err != nil {
		return "", err
	}
	return strings.Join(lines, "\n") + "\n", nil
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
