package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Sentinel errors. Callers test for them with errors.Is.
var (
	// ErrNotFound reports a stage, version or file that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCycle reports a dependency cycle among stages.
	ErrCycle = errors.New("dependency cycle")
	// ErrLockMismatch reports that a run with --locked would produce versions
	// other than those recorded in pipeline.lock.
	ErrLockMismatch = errors.New("versions differ from pipeline.lock")
	// ErrStoreBusy reports that another process holds the store's lock.
	ErrStoreBusy = errors.New("store is locked by another process")
	// ErrReadOnly reports a store this process may not write: its writer
	// lock cannot be taken, and only what reads it (a run that finds
	// everything cached, under ReadLock) can use it.
	ErrReadOnly = errors.New("read-only")
)

// Stage is one node of the pipeline: what it depends on, everything that
// determines its output, and the function that produces that output.
type Stage struct {
	// Name identifies the stage; it is also its directory in the store.
	Name string
	// Deps names the upstream stages whose outputs this stage reads.
	Deps []string
	// Reads, for an upstream it names, lists the files of that upstream's
	// output the stage reads (slash-separated paths): only their contents
	// enter the stage's key, and only they are its Input's Files, so that
	// a change to the upstream's other files (another workload it also
	// writes) does not rerun the stage. An upstream it does not name is
	// read whole.
	Reads map[string][]string
	// Config is the stage's typed configuration section as it will be used.
	// Its canonical JSON form is part of the cache key, so reformatting the
	// YAML file changes nothing.
	Config any
	// UsesSeed says whether the pipeline's global seed influences the output;
	// only then is the seed part of the key.
	UsesSeed bool
	// Code is the stage's code version: a fingerprint of its Go source and
	// that of the project packages it imports.
	Code string
	// Salt is an optional manual salt, bumped to force a rerun when output
	// depends on something the fingerprint cannot see.
	Salt string
	// Extern maps the names of files outside the store that the stage reads
	// (an imported profile, say) to their content digests, which enter the
	// key: editing such a file reruns the stage.
	Extern map[string]string
	// Refs are stored versions the stage reads besides its upstreams'
	// current outputs (an earlier run to compare with, say). The runner
	// resolves them in its store, keys the stage on their content, keeps
	// them through gc while a version that read them is kept, and gives
	// them to the running stage (Env.Ref).
	Refs []Ref
	// ShowsUpstreams says that the stage's output names the versions of
	// its upstreams (a report's provenance, say). Their versions then
	// enter its key beside their output digests, so that a stored output
	// never names versions other than those it was made from; such a stage
	// gives up early cutoff.
	ShowsUpstreams bool
	// Exclusive stages run alone: no other stage runs while they do, so that
	// measurements are not disturbed.
	Exclusive bool
	// Measures says that the stage's output holds measurements of the
	// machine that ran it (timings): two runs of one version differ, and
	// its manifest says so (Manifest.Measured). Every other stage's output
	// is a function of its key, and two outputs of one version are a
	// conflict (ConflictError).
	Measures bool
	// Publish copies some of the stage's outputs into project folders
	// (models/, reports/) after every successful run, cached or not.
	Publish []Publish
	// Estimate, if set, tells before the stage runs about how many bytes
	// its output will take; the runner refuses to start a stage whose
	// estimate exceeds the store's free space (a typo such as a trillion
	// jobs fails at once, naming both, rather than filling the disk).
	Estimate OutputEstimator
	// Shards, when over 1, is how many independent parts the stage's work
	// splits into (see Shard): an executor with many machines may run the
	// parts first, each anywhere, and then the stage itself, which finds
	// every part's units in its memo. Where the stage runs does not change
	// what it makes.
	Shards int
	// Run produces the stage's output files in env.Dir. It may be nil in
	// a program that declares the stage but runs its code elsewhere
	// (Pipeline.Executor).
	Run RunFunc
}

// OutputEstimator estimates the size of a stage's output before it runs.
type OutputEstimator interface {
	// EstimateOutput returns about how many bytes the stage will write
	// into the store (its version and its memo entries), given the
	// manifests of its upstreams' outputs by stage name (their row counts,
	// say), and how the figure was reached, for messages.
	EstimateOutput(inputs map[string]*Manifest) (bytes int64, basis string)
}

// Ref names a file of a stored version that a stage reads.
type Ref struct {
	// Key says where the reference is set, for messages and for Env.Ref:
	// a config key such as "evaluate.compare_to".
	Key string
	// Stage and Version name the version; Version may be a unique prefix.
	Stage, Version string
	// File is the file of that version the stage reads.
	File string
}

// Publish names outputs to copy out of the store: the files of a version
// whose names match Glob (path.Match syntax) go into Dir, relative to the
// pipeline's project root.
type Publish struct {
	Glob, Dir string
}

// RunFunc produces a stage's outputs. It writes files only below env.Dir and
// returns promptly with ctx.Err() when ctx is cancelled.
type RunFunc func(ctx context.Context, env *Env) error

// Env is what a running stage is given.
type Env struct {
	// Stage and Version name the artifact being produced.
	Stage, Version string
	// Dir is the staging directory; everything written here becomes the
	// artifact once Run returns nil, and is discarded otherwise.
	Dir string
	// Seed is the pipeline's global seed.
	Seed int64
	// Inputs holds the upstream artifacts by stage name; Input reads one
	// with an error naming what is missing.
	Inputs map[string]Input
	// Refs holds the versions the stage's Refs name, by Ref.Key.
	Refs map[string]Input
	// Metadata is the provenance every Parquet file should carry in its
	// footer: stage, version and upstream versions.
	Metadata map[string]string
	// Progress reports work done out of total; it may be called from any
	// goroutine and is never nil.
	Progress func(done, total int64)
	// Notes is recorded in the manifest: facts about the run that are not
	// outputs (for example the machine a profile was measured on). The stage
	// may fill it from its own goroutine.
	Notes map[string]string
	// Memo keeps intermediate results across runs of the stage, by key.
	Memo *Memo
	// Shard, when set, asks the stage for one part of its work alone: the
	// memo units of part Index of Count (Stage.Shards), leaving them in its
	// memo for the stage's own run; its files are discarded.
	Shard *Shard
}

// Shard names one part of a stage's work (Stage.Shards).
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Mine says whether the i-th of a stage's independent units belongs to
// this part.
func (s *Shard) Mine(i int) bool { return s == nil || i%s.Count == s.Index }

// Input returns the artifact of the upstream stage, or an error naming the
// stage and the upstreams it does have: a stage that reads an input it did
// not declare among its Deps.
func (env *Env) Input(stage string) (Input, error) {
	in, ok := env.Inputs[stage]
	if !ok {
		return Input{}, fmt.Errorf("stage %s has no input from stage %s (its inputs: %s): %w", env.Stage, stage, strings.Join(slices.Sorted(maps.Keys(env.Inputs)), ", "), ErrNotFound)
	}
	return in, nil
}

// Ref returns the version a Ref with the given Key names, or an error
// naming the key.
func (env *Env) Ref(key string) (Input, error) {
	in, ok := env.Refs[key]
	if !ok {
		return Input{}, fmt.Errorf("stage %s has no reference %s: %w", env.Stage, key, ErrNotFound)
	}
	return in, nil
}

// Input is an upstream artifact as seen by a running stage.
type Input struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Dir is the absolute path of the artifact's version directory.
	Dir   string `json:"dir"`
	Files []File `json:"files"`
}

// Path returns the absolute path of one of the input's files.
func (in Input) Path(name string) string { return filepath.Join(in.Dir, filepath.FromSlash(name)) }

// Manifest reads the input's manifest: its provenance and the notes its
// stage recorded.
func (in Input) Manifest() (*Manifest, error) { return readManifest(in.Dir, in.Stage, in.Version) }

// StageError is the error of one stage; the runner wraps every stage failure
// in it so that messages name the stage at fault.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return fmt.Sprintf("stage %s: %v", e.Stage, e.Err) }

// Unwrap returns the underlying error.
func (e *StageError) Unwrap() error { return e.Err }
