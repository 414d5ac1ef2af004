package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages"
	"github.com/mlsched/mlsched/stages/evaluate"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/profile"
	"github.com/mlsched/mlsched/stages/schedule"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
	"github.com/mlsched/mlsched/stages/train"
)

// The stages' code, one line per stage in codes, as the stages' registry
// (package stages) declares each. It lives here, not below stages, because
// it is glue between the runner and the stages, like the registry: the
// stages' code versions cover their own packages.

// warn tells the user, on the standard error mlsched shares with its
// workers, what a stage found that they should know before reading its
// results.
func warn(msg string) { fmt.Fprintf(os.Stderr, "mlsched: warning: %s\n", msg) }

// code builds one stage's code from the configuration.
type code func(stages.Config, stages.Runtime) pipeline.RunFunc

// codes is the explicit list of the stages' code: one line per stage.
var codes = map[string]code{
	stages.Generate: generateCode,
	stages.Profile:  profileCode,
	stages.Train:    trainCode,
	stages.Schedule: scheduleCode,
	stages.Evaluate: evaluateCode,
}

// Names returns the stages this package has code for, sorted.
func Names() []string { return slices.Sorted(maps.Keys(codes)) }

// Code returns the code of the named stage configured by cfg.
func Code(stage string, cfg stages.Config, rt stages.Runtime) (pipeline.RunFunc, error) {
	c, ok := codes[stage]
	if !ok {
		return nil, fmt.Errorf("this worker has no code for stage %q (it has %s)", stage, strings.Join(Names(), ", "))
	}
	return c(cfg, rt), nil
}

// Attach gives every stage of reg its code, so that a pipeline over reg
// runs the stages in this process (pipeline.Inline).
func Attach(reg *pipeline.Registry, cfg stages.Config, rt stages.Runtime) error {
	for _, name := range stages.Names() {
		run, err := Code(name, cfg, rt)
		if err != nil {
			return err
		}
		if err := reg.SetRun(name, run); err != nil {
			return err
		}
	}
	return nil
}

// serve reads one stage's task from r, runs it and answers on w
// (pipeline.Serve): the whole of mlsched-worker's work.
func serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return pipeline.Serve(ctx, r, w, func(t *pipeline.Task) (pipeline.RunFunc, error) {
		if err := pipeline.CheckCode(t, stages.CodeVersions()[t.Stage], "mlsched-worker"); err != nil {
			return nil, err
		}
		cfg, rt, err := stages.DecodePayload(t.Payload)
		if err != nil {
			return nil, err
		}
		return Code(t.Stage, cfg, rt)
	})
}

func generateCode(cfg stages.Config, rt stages.Runtime) pipeline.RunFunc {
	gc := cfg.Generate
	// Imported workloads' paths are relative to the config's directory.
	for _, w := range gc.Workloads() {
		if w.W.Import != "" {
			w.W.Import = rt.Path(w.W.Import)
		}
	}
	return func(ctx context.Context, env *pipeline.Env) error {
		prof, err := env.Input(stages.Profile)
		if err != nil {
			return err
		}
		cat, err := catalog.Read(prof.Path(catalog.File))
		if err != nil {
			return fmt.Errorf("generate: profile's catalog: %w", err)
		}
		return generate.Run(ctx, gc, env.Seed, cat, generate.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress,
			EvalReplications: cfg.Schedule.Replications})
	}
}

// locateORT finds the onnxruntime library as every stage that runs models
// does: --ort-lib, ONNXRUNTIME_LIB, profile.ort_lib, then make setup's.
func locateORT(cfg stages.Config, rt stages.Runtime) (string, ort.Source, error) {
	configured := ""
	if cfg.Profile.ORTLib != "" {
		configured = rt.Path(cfg.Profile.ORTLib)
	}
	return ort.Locate(rt.ORTLib, configured, rt.Environ, rt.SearchDirs)
}

func profileCode(cfg stages.Config, rt stages.Runtime) pipeline.RunFunc {
	pc := cfg.Profile
	// Model files' paths are relative to the config's directory.
	pc.Models = slices.Clone(pc.Models)
	for i, m := range pc.Models {
		if m.File != "" {
			pc.Models[i].File = rt.Path(m.File)
		}
	}
	return func(ctx context.Context, env *pipeline.Env) error {
		importPath := ""
		if pc.Import != "" {
			importPath = rt.Path(pc.Import)
		}
		lib := profile.Library{}
		if pc.Measure {
			path, src, err := locateORT(cfg, rt)
			if err != nil {
				return err
			}
			lib = profile.Library{Path: path, Source: src}
		}
		return profile.Run(ctx, pc, env.Seed, lib, importPath,
			profile.Output{Dir: env.Dir, Metadata: env.Metadata, Notes: env.Notes, Progress: env.Progress})
	}
}

func trainCode(cfg stages.Config, _ stages.Runtime) pipeline.RunFunc {
	return func(ctx context.Context, env *pipeline.Env) error {
		prof, err := env.Input(stages.Profile)
		if err != nil {
			return err
		}
		gen, err := env.Input(stages.Generate)
		if err != nil {
			return err
		}
		in := train.Inputs{
			Models:  prof.Path(catalog.File),
			Samples: prof.Path(profilespec.SamplesFile),
			Jobs:    gen.Path(generatespec.JobsFile(generatespec.WorkloadTrain)),
			Holdout: gen.Path(generatespec.JobsFile(generatespec.WorkloadHoldout)),
		}
		// The nodes' times are there where profile.operators measured
		// them.
		ops := prof.Path(profilespec.OperatorsFile)
		switch _, err := os.Stat(ops); {
		case err == nil:
			in.Operators = ops
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		return train.Run(ctx, cfg.Train, trainspec.SimulationOf(cfg.Schedule), env.Seed, in,
			train.Output{Dir: env.Dir, Metadata: env.Metadata, Notes: env.Notes, Progress: env.Progress})
	}
}

func scheduleCode(cfg stages.Config, rt stages.Runtime) pipeline.RunFunc {
	return func(ctx context.Context, env *pipeline.Env) error {
		prof, err := env.Input(stages.Profile)
		if err != nil {
			return err
		}
		gen, err := env.Input(stages.Generate)
		if err != nil {
			return err
		}
		tr, err := env.Input(stages.Train)
		if err != nil {
			return err
		}
		in := schedule.Inputs{
			Models:    prof.Path(catalog.File),
			Samples:   prof.Path(profilespec.SamplesFile),
			Jobs:      gen.Path(generatespec.JobsFile(generatespec.WorkloadEval)),
			Workloads: evalWorkloads(cfg, gen),
			Predictor: tr.Path(trainspec.PredictorFile),
			Placement: tr.Path(trainspec.PlacementFile),
		}
		if schedule.NeedsRuntime(cfg.Schedule) {
			if in.ORTLib, in.ORTSource, err = locateORT(cfg, rt); err != nil {
				return err
			}
		}
		out := schedule.Output{Dir: env.Dir, Metadata: env.Metadata, Progress: env.Progress, Memo: env.Memo, Notes: env.Notes, Warn: warn}
		if env.Shard != nil {
			out.Shard = &schedule.Shard{Index: env.Shard.Index, Count: env.Shard.Count}
		}
		return schedule.Run(ctx, cfg.Schedule, env.Seed, in, out)
	}
}

func evaluateCode(cfg stages.Config, _ stages.Runtime) pipeline.RunFunc {
	return func(ctx context.Context, env *pipeline.Env) error {
		ins := map[string]pipeline.Input{}
		for _, name := range []string{stages.Generate, stages.Profile, stages.Train, stages.Schedule} {
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
		// The schedule manifest's notes hold the learned simulations'
		// wall-clock serving figures, which no file of the artifact does.
		sm, err := ins[stages.Schedule].Manifest()
		if err != nil {
			return err
		}
		in := evaluate.Inputs{
			Schedule:      ins[stages.Schedule].Dir,
			Jobs:          ins[stages.Generate].Path(generatespec.JobsFile(generatespec.WorkloadEval)),
			Workloads:     evalWorkloads(cfg, ins[stages.Generate]),
			Samples:       ins[stages.Profile].Path(profilespec.SamplesFile),
			Machine:       ins[stages.Profile].Path(profilespec.MachineFile),
			Train:         ins[stages.Train].Dir,
			ScheduleNotes: sm.Notes,
		}
		if cfg.Evaluate.CompareTo != "" {
			prev, err := env.Ref(stages.CompareTo)
			if err != nil {
				return err
			}
			in.Previous, in.PreviousVersion = prev.Path(evaluate.MetricsFile), prev.Version
		}
		return evaluate.Run(ctx, cfg.Evaluate, env.Seed, in, evaluate.Output{
			Dir: env.Dir, Metadata: env.Metadata, Provenance: prov, Progress: env.Progress})
	}
}

// evalWorkloads are the paths of each replication's eval workload in
// generate's output.
func evalWorkloads(cfg stages.Config, gen pipeline.Input) []string {
	files := generatespec.EvalReplicationFiles(cfg.Generate, cfg.Schedule.Replications)
	for i, f := range files {
		files[i] = gen.Path(f)
	}
	return files
}

// provenance reads what the report says it rests on from the upstreams'
// manifests.
func provenance(env *pipeline.Env, own evaluate.Config) (evaluate.Provenance, error) {
	var ups []evaluate.Upstream
	for _, name := range slices.Sorted(maps.Keys(env.Inputs)) {
		in := env.Inputs[name]
		m, err := in.Manifest()
		if err != nil {
			return evaluate.Provenance{}, err
		}
		ups = append(ups, evaluate.Upstream{Stage: name, Version: in.Version, Config: m.Inputs.Config, Notes: m.Notes})
	}
	return evaluate.NewProvenance(env.Version, env.Seed, own, ups)
}
