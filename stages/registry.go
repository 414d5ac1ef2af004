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
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
	"github.com/mlsched/mlsched/pipeline/userfile"
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

// Retired are the keys pipeline.yaml once had, each with what to do
// instead (config.Options.Retired), so that an old config's error says
// how to mend it.
var Retired = map[string]string{
	"evaluate.bootstrap": "the report's intervals come from schedule.replications now, not a bootstrap over jobs; " +
		"set their coverage with evaluate.confidence (go doc ./stages/lib/outputanalysis)",
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
// not set: each stage's section as its declaration defaults it.
func DefaultConfig() Config {
	c := Config{Seed: 1, Store: "data"}
	for _, d := range declarations {
		d.setDefault(&c)
	}
	return c
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
	for _, d := range declarations {
		errs = append(errs, d.validate(c))
	}
	// The checks across sections.
	errs = append(errs, c.Evaluate.CheckBaselines(c.Schedule.Policies), c.checkSpan(), c.checkModels())
	return errors.Join(errs...)
}

// checkModels checks that every model the other sections name is one the
// profile's catalog will hold: a zoo model, or a file of profile.models.
func (c Config) checkModels() error {
	known := c.Profile.KnownModels()
	var errs []error
	for _, m := range []struct {
		key    string
		models map[string]float64
	}{{"generate.models", c.Generate.Models}, {"schedule.memory.base_mib", c.Schedule.Memory.BaseMiB},
		{"schedule.memory.per_sample_mib", c.Schedule.Memory.PerSampleMiB}} {
		for _, name := range slices.Sorted(maps.Keys(m.models)) {
			if !slices.Contains(known, name) {
				errs = append(errs, &config.Error{Key: m.key + "." + name, Err: config.ErrInvalidValue,
					Msg: fmt.Sprintf("unknown model; the catalog has %s (a model of your own is named in profile.models with its file)", strings.Join(known, ", "))})
			}
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

// declarations is the explicit list of stages: one line per stage, each
// declared in a file of its own.
var declarations = []Declaration{
	profileStage,
	generateStage,
	trainStage,
	scheduleStage,
	evaluateStage,
}

// Names returns the stages' names, sorted.
func Names() []string {
	names := make([]string, len(declarations))
	for i, d := range declarations {
		names[i] = d.Name
	}
	return slices.Sorted(slices.Values(names))
}

// CodeVersions returns each stage's code version, by name: what this
// build runs, and what a task's key must name for this build to run it.
func CodeVersions() map[string]string {
	out := make(map[string]string, len(declarations))
	for _, d := range declarations {
		out[d.Name] = codeVersions["stages/"+d.Name]
	}
	return out
}

// Registry returns mlsched's stages configured by cfg, without their code
// (Stage.Run is nil): the runner gives them to an Executor.
func Registry(cfg Config, rt Runtime) (*pipeline.Registry, error) {
	r := pipeline.NewRegistry()
	for _, d := range slices.SortedFunc(slices.Values(declarations), func(a, b Declaration) int { return strings.Compare(a.Name, b.Name) }) {
		s, err := d.Declare(cfg, rt)
		if err != nil {
			return nil, err
		}
		if err := r.Register(s); err != nil {
			return nil, err
		}
	}
	return r, nil
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

// importName is what of an imported file's path enters its stage's key:
// the file's base name (its format, .csv or .parquet, and the name people
// know it by), not the folders that lead to it. Its content enters by its
// digest (pipeline.Stage.Extern). The same file named by an absolute
// path, a relative one or another relative one from elsewhere then keeps
// the stage's version, and so does a worker's copy (ShipImports).
func importName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

// importKey is a key of a config that names a file outside the store.
type importKey struct {
	key  string
	path *string // the key's value in the config
}

// imports lists the keys of cfg that name files outside the store. The
// model entries are copied first: their files are rewritten in place, and
// cfg's list may share its array with the caller's.
func imports(cfg *Config) []importKey {
	out := []importKey{{"profile.import", &cfg.Profile.Import}}
	cfg.Profile.Models = slices.Clone(cfg.Profile.Models)
	for i, m := range cfg.Profile.Models {
		out = append(out, importKey{"profile.models." + m.Name + ".file", &cfg.Profile.Models[i].File})
	}
	for _, w := range cfg.Generate.Workloads() {
		out = append(out, importKey{"generate." + w.Name + ".import", &w.W.Import})
	}
	return out
}

// ShipImports readies cfg for a worker on another machine: it returns the
// files outside the store that cfg names (imported profiles and
// workloads), each by a path relative to the config's directory that
// names its key and its file (imports/profile.import/samples.csv), with
// where each is on this machine; and cfg with each import's path replaced
// by that one. The worker puts each file at its path below a directory it
// gives the stage as the config's. Where the file is here (an absolute
// path, one through .., a link) travels nowhere, as it enters no key
// (importName).
func ShipImports(cfg Config, rt Runtime) (Config, map[string]string) {
	files := map[string]string{}
	for _, im := range imports(&cfg) {
		if *im.path == "" {
			continue
		}
		shipped := "imports/" + im.key + "/" + importName(*im.path)
		files[shipped] = rt.Path(*im.path)
		*im.path = shipped
	}
	return cfg, files
}
