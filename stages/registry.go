package stages

//go:generate go run ../cmd/fingerprint -root .. -under stages -o codeversion_gen.go -pkg stages

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// Config is the whole of pipeline.yaml: the global keys and one section per
// stage.
type Config struct {
	// Seed is the global seed every seeded stage derives its randomness from.
	Seed int64 `koanf:"seed"`
	// Store is the artifact store's directory, relative to the config file.
	Store string `koanf:"store"`
	// Remote, if set, is a store shared with other machines
	// (s3://bucket/prefix?endpoint=…, or file:///path): run fetches a
	// version from it rather than compute it, and pushes what it computes;
	// push and pull move versions by hand. Credentials come from the AWS
	// environment, never from here.
	Remote string `koanf:"remote"`
	// Profile is the profile stage's section.
	Profile profilespec.Config `koanf:"profile"`
	// Generate is the generate stage's section.
	Generate generatespec.Config `koanf:"generate"`
	// Train is the train stage's section.
	Train trainspec.Config `koanf:"train"`
	// Schedule is the schedule stage's section.
	Schedule schedulespec.Config `koanf:"schedule"`
	// Evaluate is the evaluate stage's section.
	Evaluate evaluatespec.Config `koanf:"evaluate"`
}

// Runtime holds what the stages need from the command line and the
// process, beyond the config file. None of it enters a cache key.
type Runtime struct {
	// ORTLib is the --ort-lib flag.
	ORTLib string `json:"ort_lib,omitempty"`
	// Environ is the process environment (for ONNXRUNTIME_LIB).
	Environ []string `json:"environ,omitempty"`
	// ConfigDir is the config file's directory: relative paths in the
	// config resolve against it.
	ConfigDir string `json:"config_dir,omitempty"`
	// SearchDirs are where the onnxruntime library that make setup
	// installs is looked for.
	SearchDirs []string `json:"search_dirs,omitempty"`
}

// DefaultConfig returns the configuration used for every key the file does
// not set.
func DefaultConfig() Config {
	return Config{Seed: 1, Store: "data", Profile: profilespec.DefaultConfig(), Generate: generatespec.DefaultConfig(), Train: trainspec.DefaultConfig(), Schedule: schedulespec.DefaultConfig(), Evaluate: evaluatespec.DefaultConfig()}
}

// Validate checks every value; each error is a *config.Error naming its
// full key path, for config.Attribute to name the input that set it.
func (c Config) Validate() error {
	var errs []error
	if c.Store == "" {
		errs = append(errs, &config.Error{Key: "store", Msg: "must name a directory", Err: config.ErrInvalidValue})
	}
	if c.Remote != "" {
		if _, err := remoteurl.Parse(c.Remote); err != nil {
			errs = append(errs, &config.Error{Key: "remote", Msg: err.Error(), Err: config.ErrInvalidValue})
		}
	}
	errs = append(errs, c.Profile.Validate(), c.Generate.Validate(), c.Train.Validate(), c.Schedule.Validate(), c.Evaluate.Validate(),
		c.Evaluate.CheckBaselines(c.Schedule.Policies), c.checkSpan())
	return errors.Join(errs...)
}

// checkSpan bounds the span of the arrivals that schedule simulates (and
// train's rollouts, on the train workload): schedule.load divides the
// workloads' arrival times, and beyond generatespec.MaxSpanS times no
// longer resolve a latency. Each key is checked against its own range
// first; this only looks at valid values.
func (c Config) checkSpan() error {
	load := c.Schedule.Load
	if !(load >= schedulespec.MinLoad && load <= schedulespec.MaxLoad) {
		return nil
	}
	var errs []error
	for _, w := range []struct {
		name string
		w    generatespec.Workload
	}{{generatespec.WorkloadEval, c.Generate.Eval}, {generatespec.WorkloadTrain, c.Generate.Train}} {
		rate, jobs := w.w.Arrival.Rate, w.w.Jobs
		if !(rate >= generatespec.MinRate && rate <= generatespec.MaxRate) || jobs < 1 || jobs > generatespec.MaxJobs {
			continue
		}
		span := float64(jobs) / rate
		if span <= generatespec.MaxSpanS && span/load > generatespec.MaxSpanS {
			errs = append(errs, &config.Error{Key: "schedule.load", Err: config.ErrInvalidValue,
				Msg: fmt.Sprintf("%v stretches the %s workload's %.3g s of arrivals to %.3g s, more than the 1e8 s (about 3 years) within which times resolve a latency; raise it or generate.%s.arrival.rate",
					load, w.name, span, span/load, w.name)})
		}
	}
	return errors.Join(errs...)
}

// Warnings reports settings that are valid but most likely not meant, as
// *config.Error values naming their keys (config.Attribute names the
// input): a device whose memory holds no job of a model in the mix, and a
// model of the mix whose every job fits on no device and will be rejected.
// The config must be valid.
func (c Config) Warnings() error {
	g, s := c.Generate, c.Schedule
	if len(s.Cluster) == 0 {
		return nil
	}
	// The smallest job of a model: the smallest batch of a class that
	// occurs, in the precision that occurs and holds less.
	batch := math.MaxInt
	if g.InteractiveFraction > 0 {
		batch = min(batch, g.Classes.Interactive.BatchMin)
	}
	if g.InteractiveFraction < 1 {
		batch = min(batch, g.Classes.Batch.BatchMin)
	}
	smallest := func(m catalog.Model) (need float64, prec string) {
		need = math.Inf(1)
		for _, p := range []struct {
			fp16 bool
			name string
			on   bool
		}{{false, "fp32", g.FP16Fraction < 1}, {true, "fp16", g.FP16Fraction > 0}} {
			if !p.on {
				continue
			}
			base, per := s.Memory.Token(m, p.fp16)
			if v := base + float64(batch)*per; v < need {
				need, prec = v, p.name
			}
		}
		return need, prec
	}
	largest := 0
	for i, d := range s.Cluster {
		if d.MemoryMiB > s.Cluster[largest].MemoryMiB {
			largest = i
		}
	}
	var errs []error
	warn := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	type need struct {
		model, prec string
		mib         float64
	}
	var needs []need
	for _, name := range slices.Sorted(maps.Keys(g.Models)) {
		m, ok := catalog.Lookup(name)
		if !ok || g.Models[name] <= 0 {
			continue
		}
		mib, prec := smallest(m)
		needs = append(needs, need{name, prec, mib})
		if big := s.Cluster[largest]; mib > big.MemoryMiB {
			warn("generate.models."+name, "every %s job will be rejected: the smallest (batch %d, %s) holds %.4g MiB, more than the largest device, %s, holds (schedule.cluster[%d].memory_mib: %v)",
				name, batch, prec, mib, big.Name, largest, big.MemoryMiB)
		}
	}
	for i, d := range s.Cluster {
		var none []string
		least := math.Inf(1)
		for _, n := range needs {
			if n.mib > d.MemoryMiB {
				none = append(none, n.model)
				least = min(least, n.mib)
			}
		}
		if len(none) > 0 {
			warn(fmt.Sprintf("schedule.cluster[%d].memory_mib", i), "%s's %v MiB holds no job of %s (the smallest of them needs %.4g MiB): they run elsewhere or are rejected",
				d.Name, d.MemoryMiB, strings.Join(none, ", "), least)
		}
	}
	return errors.Join(errs...)
}

// The stages' names: their directories in the store, their sections of
// pipeline.yaml, and how one stage names another among its Deps.
const (
	Profile  = "profile"
	Generate = "generate"
	Train    = "train"
	Schedule = "schedule"
	Evaluate = "evaluate"
)

// factory declares a stage from the configuration: everything the runner
// needs of it but its code, which runs in a worker process (package
// worker). It fails only on bad input the config cannot see by itself (a
// missing imported file).
type factory func(Config, Runtime) (pipeline.Stage, error)

// registry is the explicit list of stages: one line per stage.
var registry = map[string]factory{
	Generate: generateStage,
	Profile:  profileStage,
	Train:    trainStage,
	Schedule: scheduleStage,
	Evaluate: evaluateStage,
}

// Names returns the stages' names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Registry returns mlsched's stages configured by cfg, without their code
// (Stage.Run is nil): the runner gives them to an Executor.
func Registry(cfg Config, rt Runtime) (*pipeline.Registry, error) {
	r := pipeline.NewRegistry()
	for _, name := range Names() {
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

func generateStage(cfg Config, rt Runtime) (pipeline.Stage, error) {
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
		Name:     Generate,
		Config:   cfg.Generate,
		UsesSeed: true,
		Code:     codeVersions["stages/generate"],
		Estimate: generateEstimate{cfg: cfg.Generate, path: rt.Path},
		Extern:   extern,
	}, nil
}

func profileStage(cfg Config, rt Runtime) (pipeline.Stage, error) {
	extern := map[string]string{}
	if pc := cfg.Profile; pc.Import != "" {
		importPath := rt.Path(pc.Import)
		digest, err := fileDigest(importPath, profilespec.MaxImportBytes)
		if err != nil {
			return pipeline.Stage{}, fmt.Errorf("profile.import: %w", err)
		}
		extern[filepath.Base(importPath)] = digest
	}
	return pipeline.Stage{
		Name:      Profile,
		Config:    cfg.Profile,
		UsesSeed:  true,
		Code:      codeVersions["stages/profile"],
		Extern:    extern,
		Exclusive: true, // nothing else may run on the cores while it times
		Publish:   []pipeline.Publish{{Glob: "*.onnx", Dir: "models"}},
	}, nil
}

func trainStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name: Train,
		// It reads generate's train workload, never the eval one: an edit
		// of the eval workload does not retrain.
		Deps:  []string{Generate, Profile},
		Reads: map[string][]string{Generate: {generatespec.JobsFile(generatespec.WorkloadTrain)}},
		// Its own section, and the part of schedule's that its rollouts
		// simulate with.
		Config:   trainspec.KeyedOf(cfg.Train, cfg.Schedule),
		UsesSeed: true,
		// The fingerprint covers the predictor, the network and the
		// labeller, and the simulator they import.
		Code:    codeVersions["stages/train"],
		Publish: []pipeline.Publish{{Glob: trainspec.PredictorFile, Dir: "models"}, {Glob: trainspec.PlacementFile, Dir: "models"}},
	}, nil
}

func scheduleStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name: Schedule,
		// Train's models reach the simulations through the runner, their
		// digests in the key; of generate's output it reads the eval
		// workload alone.
		Deps: []string{Generate, Profile, Train},
		Reads: map[string][]string{
			Generate: {generatespec.JobsFile(generatespec.WorkloadEval)},
			Train:    {trainspec.PredictorFile, trainspec.PlacementFile},
		},
		Config:   cfg.Schedule,
		UsesSeed: true,
		// Its load sweep splits into a part per policy and replication.
		Shards: schedulespec.Shards(cfg.Schedule),
		// The fingerprint covers the simulator, the policies and the
		// service model, which the package imports.
		Code: codeVersions["stages/schedule"],
		// Its real runs time this machine: nothing else may run on the
		// cores meanwhile.
		Exclusive: len(cfg.Schedule.Real.Policies) > 0,
		Estimate:  scheduleEstimate{cfg.Schedule},
	}, nil
}

// CompareTo is the config key of evaluate's reference to an earlier run
// (pipeline.Ref.Key, and Env.Ref's argument).
const CompareTo = "evaluate.compare_to"

func evaluateStage(cfg Config, _ Runtime) (pipeline.Stage, error) {
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
		Code: codeVersions["stages/evaluate"],
		Publish: []pipeline.Publish{
			{Glob: "report.*", Dir: "reports"},
			{Glob: evaluatespec.ChartsDir + "/*.svg", Dir: "reports/" + evaluatespec.ChartsDir},
		},
	}, nil
}

// Payload is what a worker process needs to build the stages' code: the
// configuration as used, every default filled in, and the runtime.
type Payload struct {
	Config  json.RawMessage `json:"config"`
	Runtime Runtime         `json:"runtime"`
}

// EncodePayload writes cfg and rt for a worker (pipeline.Process.Payload).
func EncodePayload(cfg Config, rt Runtime) (json.RawMessage, error) {
	c, err := config.Canonical(cfg)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Payload{Config: c, Runtime: rt})
}

// DecodePayload reads what EncodePayload wrote, and validates the
// configuration as the command line did.
func DecodePayload(b json.RawMessage) (Config, Runtime, error) {
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		return Config{}, Runtime{}, fmt.Errorf("payload: %w", err)
	}
	cfg := DefaultConfig()
	if err := config.Decode("payload", p.Config, &cfg); err != nil {
		return Config{}, Runtime{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, Runtime{}, fmt.Errorf("payload: invalid configuration:\n%w", err)
	}
	return cfg, p.Runtime, nil
}

// Path resolves a path from the config against the config's directory.
func (rt Runtime) Path(p string) string {
	if filepath.IsAbs(p) || rt.ConfigDir == "" {
		return p
	}
	return filepath.Join(rt.ConfigDir, p)
}

// fileDigest is the sha256 of a file's bytes. The file must be a regular
// file of at most limit bytes: a named pipe or /dev/zero given as an
// import is refused before it is opened, rather than blocking or reading
// forever.
func fileDigest(path string, limit int64) (string, error) {
	f, _, err := userfile.Open(path, limit)
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

// ExternFiles lists the files outside the store that cfg names (imported
// profiles and workloads), by the path the config gives, relative to its
// directory, with where each is on this machine: what must travel with a
// stage run on another machine. A file named by an absolute path cannot,
// and is refused, naming its key.
func ExternFiles(cfg Config, rt Runtime) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range []struct{ key, path string }{
		{"profile.import", cfg.Profile.Import},
		{"generate.train.import", cfg.Generate.Train.Import},
		{"generate.eval.import", cfg.Generate.Eval.Import},
	} {
		if f.path == "" {
			continue
		}
		if !filepath.IsLocal(f.path) {
			return nil, fmt.Errorf("%s: %s is not a path inside the config's directory, so it cannot travel to another machine's worker: put the file beside the config and name it relatively", f.key, f.path)
		}
		out[filepath.Clean(f.path)] = rt.Path(f.path)
	}
	return out, nil
}
