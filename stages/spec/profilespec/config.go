package profilespec

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ident"
)

// Config is the profile section of pipeline.yaml.
type Config struct {
	// Measure turns the local measurement on; with it off, the profile holds
	// only the imported rows.
	Measure bool `koanf:"measure"`
	// Models are the models whose inference latency is measured: the
	// zoo's by name, and the user's from ONNX files (Model).
	Models []Model `koanf:"models"`
	// Precisions are tried for every model; a precision the execution
	// provider cannot run is recorded as unsupported, not measured.
	Precisions []string `koanf:"precisions"`
	// BatchSizes are the batch sizes measured for every model that
	// ModelBatchSizes does not name.
	BatchSizes []int `koanf:"batch_sizes"`
	// ModelBatchSizes replaces BatchSizes for the models it names: a
	// microsecond model can afford a denser and wider ladder than a
	// ResNet-50.
	ModelBatchSizes map[string][]int `koanf:"model_batch_sizes"`
	// Threads are the intra-op thread counts measured.
	Threads []int `koanf:"threads"`
	// Warmup runs precede the timed ones and are not kept.
	Warmup int `koanf:"warmup"`
	// Repeats is the number of timed runs of each configuration, and
	// more until the runs have taken MinTime, up to MaxRepeats: a
	// microsecond model's median needs many runs to be steady...
	Repeats    int           `koanf:"repeats"`
	MinTime    time.Duration `koanf:"min_time"`
	MaxRepeats int           `koanf:"max_repeats"`
	// ...and fewer once a configuration has used up MaxTime, after at
	// least MinRepeats runs: big models at big batches would otherwise
	// take minutes on a small machine.
	MinRepeats int           `koanf:"min_repeats"`
	MaxTime    time.Duration `koanf:"max_time"`
	// MatMul measures matrix-multiply throughput.
	MatMul MatMul `koanf:"matmul"`
	// Contention measures k sessions running at once on the cores.
	Contention Contention `koanf:"contention"`
	// Serving times the learned policy's serving path.
	Serving Serving `koanf:"serving"`
	// Operators times each node of the models (Operators); off by
	// default.
	Operators Operators `koanf:"operators"`
	// Provider is the onnxruntime execution provider the models run on:
	// ProviderCPU (this machine's cores) or ProviderCUDA (an NVIDIA GPU,
	// through onnxruntime's CUDA provider library, which must sit beside
	// the library profile.ort_lib names).
	Provider string `koanf:"provider"`
	// Device names the device measured in the samples' device column,
	// which the schedule stage's cluster refers to (profile_device);
	// empty means "cpu" for the CPU provider and "gpu" for CUDA. A GPU
	// profile imported on another machine keeps this name.
	Device string `koanf:"device"`
	// GPU is the ordinal of the GPU that CUDA runs on.
	GPU int `koanf:"gpu"`
	// Import is a Parquet or CSV file of samples in the samples.parquet
	// schema, measured elsewhere (say on a GPU), added to the profile and
	// marked by their source. Relative to the config file.
	Import string `koanf:"import"`
	// ORTLib is the onnxruntime shared library, if not the one make setup
	// installs (the --ort-lib flag and ONNXRUNTIME_LIB take precedence).
	ORTLib string `koanf:"ort_lib"`
}

// Model is one entry of profile.models: a zoo model, written by its name
// alone ("resnet18"), or a model of the user's read from an ONNX file,
// written as a mapping ({name: mynet, file: models/mynet.onnx}). The
// file's graph gives the model's catalog figures (package onnxgraph), and
// its content enters the profile's key, as an imported profile's does.
type Model struct {
	// Name is the model's name in the catalog, the workloads and the
	// report.
	Name string `koanf:"name"`
	// File is the ONNX file, relative to the config file; empty for a zoo
	// model.
	File string `koanf:"file"`
	// BatchAxis is the input's batch axis, needed only where the input has
	// several dynamic axes; the others must then be fixed.
	BatchAxis *int `koanf:"batch_axis"`
}

// ShortForm implements config.Shorthand: a zoo model is its name.
func (m Model) ShortForm() (string, bool) { return m.Name, m.File == "" && m.BatchAxis == nil }

// SetShortForm implements config.Shorthand: a name is a zoo model (or,
// for Validate to say, names none).
func (m *Model) SetShortForm(s string) error {
	if s == "" {
		return errors.New("an empty model name")
	}
	*m = Model{Name: s}
	return nil
}

// ZooModels makes profile.models entries of zoo model names.
func ZooModels(names ...string) []Model {
	ms := make([]Model, len(names))
	for i, n := range names {
		ms[i] = Model{Name: n}
	}
	return ms
}

// ModelNames returns the names of profile.models, in order.
func (c Config) ModelNames() []string {
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Name
	}
	return names
}

// KnownModels are the names the rest of the configuration may use for a
// model: the zoo's, then the files' of profile.models.
func (c Config) KnownModels() []string {
	names := catalog.Zoo().Names()
	for _, m := range c.Models {
		if m.File != "" && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	return names
}

// MatMul configures the matrix-multiply measurement.
type MatMul struct {
	// Sizes are the n of n×n by n×n float32 products.
	Sizes []int `koanf:"sizes"`
	// Repeats is the number of timed products of each size and backend.
	Repeats int `koanf:"repeats"`
}

// Contention configures the contention measurement: Sessions[i] sessions,
// each of one of Models at batch Batch, one intra-op thread each, run at
// once for Repeats runs each, in Rounds rounds that interleave the session
// counts (each round in the order opposite to the one before), so that a
// disturbance of the machine or a drift of its speed lands on every count
// alike rather than on one. Session i of round r runs ModelOf(r, i): the
// sessions of a round mix the models, as a server's lanes do, since a model
// beside another can slow more than beside itself.
type Contention struct {
	Models   []string `koanf:"models"`
	Batch    int      `koanf:"batch"`
	Sessions []int    `koanf:"sessions"`
	Repeats  int      `koanf:"repeats"`
	Rounds   int      `koanf:"rounds"`
}

// ModelOf is the model session i of round r runs: Models[(r + i·s) mod n],
// n models, with the step s = 1 + r/n. Over n² rounds two sessions meet
// every ordered pair of models once, the same model with itself included;
// with one model every session runs it.
func (c Contention) ModelOf(r, i int) string {
	n := len(c.Models)
	return c.Models[(r+i*(1+r/n))%n]
}

// Serving configures the timing of the schedule stage's serving path for
// the learned policy's decisions: package placementnet's Network.Eval,
// one onnxruntime call on the caller's thread, on a network of the
// placement network's shape (placementnet.Synthetic), at each of
// BatchSizes decisions a call. Each size is called Calls times, every
// call timed on its own on the wall clock, the sizes taking turns, so
// that the rows hold the distribution (its tail too), not a tight loop's
// mean: schedule.learned.cost: profile charges each batch of decisions a
// draw from it. Empty BatchSizes turns it off; a CUDA profile skips it
// (the serving path runs on the host's cores, not on the GPU it names).
type Serving struct {
	BatchSizes []int `koanf:"batch_sizes"`
	Calls      int   `koanf:"calls"`
}

// Operators configures the per-node timing of the models
// (operators.parquet), which the train stage fits its per-operator cost
// model to (package opcost) and mlsched predict predicts a model never
// profiled with. After the timed runs of a series (a model, precision and
// thread count), each batch size of BatchSizes the series measured is run
// once more in a session of its own with onnxruntime's profiler on:
// Warmup untimed runs, then Runs whose fastest gives each node's kernel
// time. These runs are apart from the timed ones and add no row to
// samples.parquet. Empty BatchSizes turns it off (the default: it adds
// to every profile's time); the CPU provider only, fp32 only: onnxruntime's
// CPU provider runs an fp16 convolution through kernels of its own that
// name no node of the file, so their time cannot be given to the nodes
// (docs/models.md).
type Operators struct {
	BatchSizes []int `koanf:"batch_sizes"`
	Runs       int   `koanf:"runs"`
}

// OperatorBatchesOf returns the batch sizes model's nodes are timed at:
// those of Operators.BatchSizes that its series measures, in its order.
func (c Config) OperatorBatchesOf(model string) []int {
	var out []int
	for _, b := range c.BatchSizesOf(model) {
		if slices.Contains(c.Operators.BatchSizes, b) {
			out = append(out, b)
		}
	}
	return out
}

// MaxServingBatch bounds profile.serving.batch_sizes: placementnet's
// largest batch.
const MaxServingBatch = 1024

// Bounds of an imported profile (profile.import): a profile holds
// thousands of samples, and these allow a thousand times more while
// keeping a mistaken path (a disk image, a sparse file) from filling the
// memory. The file's size is checked before it is read, the rows as they
// are, and a CSV line (the header first) may be at most MaxImportLine
// bytes long.
const (
	MaxImportBytes = 256 << 20
	MaxImportRows  = 2_000_000
	MaxImportLine  = 64 << 10
)

// The execution providers the profile can measure on.
const (
	ProviderCPU  = "cpu"
	ProviderCUDA = "cuda"
)

// DeviceName returns the name of the measured device in the samples:
// Device, or the provider's default name.
func (c Config) DeviceName() string {
	switch {
	case c.Device != "":
		return c.Device
	case c.Provider == ProviderCUDA:
		return "gpu"
	}
	return "cpu"
}

// The precisions a model can be built in.
const (
	FP32 = "fp32"
	FP16 = "fp16"
)

// DefaultConfig returns the profile that `make run` measures: every model
// at batch sizes 1 to 64, the range of the default workload's jobs, one and
// two threads: minutes on a two-core machine (docs/benchmarks.md).
func DefaultConfig() Config {
	return Config{
		Measure:         true,
		Provider:        ProviderCPU,
		Models:          ZooModels(catalog.Zoo().Names()...),
		Precisions:      []string{FP32, FP16},
		BatchSizes:      []int{1, 2, 4, 8, 16, 32, 64},
		ModelBatchSizes: map[string][]int{},
		Threads:         []int{1},
		Warmup:          2,
		Repeats:         20,
		MinTime:         50 * time.Millisecond,
		MaxRepeats:      1000,
		MinRepeats:      2,
		MaxTime:         time.Second,
		MatMul:          MatMul{Sizes: []int{128, 256, 512, 1024}, Repeats: 5},
		Contention:      Contention{Models: []string{"resnet18", "resnet50", "vit"}, Batch: 2, Sessions: []int{1, 2, 4}, Repeats: 4, Rounds: 9},
		// schedule.learned.batch's default is 32: every size a batch of
		// decisions can have is measured or between two that are.
		Serving: Serving{BatchSizes: []int{1, 2, 4, 8, 16, 32}, Calls: 10_000},
		// Off: the default profile is over its time already.
		Operators: Operators{Runs: 5},
	}
}

// Bounds of the profile's counts and times: far beyond any real use, so
// that a typing slip is refused before it allocates or loops for ever.
const (
	// MaxWarmup bounds profile.warmup and the matmul's and contention's
	// repeats.
	MaxWarmup = 1000
	// MaxRepeats bounds profile.repeats and profile.max_repeats.
	MaxRepeats = 1_000_000
	// MaxSeriesTime bounds profile.min_time and profile.max_time, one
	// configuration's series.
	MaxSeriesTime = time.Hour
)

// Validate reports every invalid setting, each error naming its full key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: "profile." + key, Msg: fmt.Sprintf(format, args...), Err: config.ErrInvalidValue})
	}
	if c.Measure && len(c.Models) == 0 {
		bad("models", "must list at least one model when measure is on")
	}
	known := c.KnownModels()
	for i, m := range c.Models {
		key := fmt.Sprintf("models[%d]", i)
		_, zoo := catalog.Zoo().Lookup(m.Name)
		switch {
		case m.File == "" && !zoo:
			bad(key, "unknown model %q; the zoo has %s, and a model of your own needs a file: {name: %s, file: path/to/model.onnx}",
				m.Name, strings.Join(catalog.Zoo().Names(), ", "), m.Name)
		case m.File == "" && m.BatchAxis != nil:
			bad(key+".batch_axis", "is for a model read from a file; %s is the zoo's", m.Name)
		case m.File != "" && zoo:
			bad(key+".name", "%q is a zoo model's name; name the model of %s otherwise", m.Name, m.File)
		case m.File != "" && slices.Contains(catalog.Reserved, m.Name):
			bad(key+".name", "%q is reserved for the profile's own rows (%s)", m.Name, strings.Join(catalog.Reserved, ", "))
		case m.File != "":
			if err := ident.Check(m.Name); err != nil {
				bad(key+".name", "%v", err)
			}
		}
		if m.BatchAxis != nil && (*m.BatchAxis < 0 || *m.BatchAxis > 31) {
			bad(key+".batch_axis", "must be an axis in [0, 31], got %d", *m.BatchAxis)
		}
		if slices.IndexFunc(c.Models, func(o Model) bool { return o.Name == m.Name }) < i {
			bad(key, "lists %s twice", m.Name)
		}
	}
	if c.Measure && len(c.Precisions) == 0 {
		bad("precisions", "must list at least one of fp32, fp16")
	}
	for i, p := range c.Precisions {
		if p != FP32 && p != FP16 {
			bad(fmt.Sprintf("precisions[%d]", i), "unknown precision %q; want fp32 or fp16", p)
		}
	}
	positive := func(key string, xs []int, limit int) {
		if c.Measure && len(xs) == 0 {
			bad(key, "must not be empty")
		}
		for i, x := range xs {
			if x < 1 || x > limit {
				bad(fmt.Sprintf("%s[%d]", key, i), "must be in [1, %d], got %d", limit, x)
			}
		}
		if dup := duplicate(xs); dup != 0 {
			bad(key, "lists %d twice", dup)
		}
	}
	positive("batch_sizes", c.BatchSizes, 4096)
	for _, m := range slices.Sorted(maps.Keys(c.ModelBatchSizes)) {
		if !slices.Contains(known, m) {
			bad("model_batch_sizes."+m, "unknown model %q; the catalog has %s", m, strings.Join(known, ", "))
		}
		positive("model_batch_sizes."+m, c.ModelBatchSizes[m], 4096)
	}
	positive("threads", c.Threads, 1024)
	positive("matmul.sizes", c.MatMul.Sizes, 8192)
	positive("contention.sessions", c.Contention.Sessions, 256)
	for i, b := range c.Serving.BatchSizes {
		if b < 1 || b > MaxServingBatch {
			bad(fmt.Sprintf("serving.batch_sizes[%d]", i), "must be in [1, %d], got %d", MaxServingBatch, b)
		}
	}
	if dup := duplicate(c.Serving.BatchSizes); dup != 0 {
		bad("serving.batch_sizes", "lists %d twice", dup)
	}
	if len(c.Serving.BatchSizes) > 0 && (c.Serving.Calls < 1 || c.Serving.Calls > 1_000_000) {
		bad("serving.calls", "must be in [1, 1000000] while serving.batch_sizes lists a size, got %d", c.Serving.Calls)
	}
	for i, b := range c.Operators.BatchSizes {
		if b < 1 || b > 4096 {
			bad(fmt.Sprintf("operators.batch_sizes[%d]", i), "must be in [1, 4096], got %d", b)
		}
	}
	if dup := duplicate(c.Operators.BatchSizes); dup != 0 {
		bad("operators.batch_sizes", "lists %d twice", dup)
	}
	if c.Operators.Runs < 1 || c.Operators.Runs > MaxWarmup {
		bad("operators.runs", "must be in [1, %d], got %d", MaxWarmup, c.Operators.Runs)
	}
	if len(c.Operators.BatchSizes) > 0 && c.Provider != ProviderCPU {
		bad("operators.batch_sizes", "times each node on the CPU provider only; provider is %s (leave operators.batch_sizes empty)", c.Provider)
	}
	if c.Warmup < 0 || c.Warmup > MaxWarmup {
		bad("warmup", "must be in [0, %d], got %d", MaxWarmup, c.Warmup)
	}
	if c.Repeats < 1 || c.Repeats > MaxRepeats {
		bad("repeats", "must be in [1, %d], got %d", MaxRepeats, c.Repeats)
	}
	// max_repeats is held to repeats only once repeats is valid: a bad
	// repeats is one error, not two.
	if c.MaxRepeats > MaxRepeats || c.Repeats >= 1 && c.Repeats <= MaxRepeats && c.MaxRepeats < c.Repeats {
		bad("max_repeats", "must be in [repeats=%d, %d], got %d", c.Repeats, MaxRepeats, c.MaxRepeats)
	}
	if c.MinTime < 0 || c.MinTime > MaxSeriesTime {
		bad("min_time", "must be in [0, %s], got %s", MaxSeriesTime, c.MinTime)
	}
	if c.MinRepeats < 1 || c.MinRepeats > c.Repeats {
		bad("min_repeats", "must be in [1, repeats=%d], got %d", c.Repeats, c.MinRepeats)
	}
	if c.MaxTime <= 0 || c.MaxTime > MaxSeriesTime {
		bad("max_time", "must be in (0, %s], got %s", MaxSeriesTime, c.MaxTime)
	}
	if c.MatMul.Repeats < 1 || c.MatMul.Repeats > MaxWarmup {
		bad("matmul.repeats", "must be in [1, %d], got %d", MaxWarmup, c.MatMul.Repeats)
	}
	if len(c.Contention.Models) == 0 {
		bad("contention.models", "must list at least one model")
	}
	for i, m := range c.Contention.Models {
		if !slices.Contains(known, m) {
			bad(fmt.Sprintf("contention.models[%d]", i), "unknown model %q; the catalog has %s", m, strings.Join(known, ", "))
		}
		if slices.Index(c.Contention.Models, m) < i {
			bad(fmt.Sprintf("contention.models[%d]", i), "lists %s twice", m)
		}
	}
	if c.Contention.Batch < 1 || c.Contention.Batch > 4096 {
		bad("contention.batch", "must be in [1, 4096], got %d", c.Contention.Batch)
	}
	if c.Contention.Repeats < 1 || c.Contention.Repeats > MaxWarmup {
		bad("contention.repeats", "must be in [1, %d], got %d", MaxWarmup, c.Contention.Repeats)
	}
	if c.Contention.Rounds < 1 || c.Contention.Rounds > 100 {
		bad("contention.rounds", "must be 1 to 100, got %d", c.Contention.Rounds)
	}
	switch c.Provider {
	case ProviderCPU:
		if c.Device != "" && c.Device != "cpu" {
			// The cluster's measured devices, and the real runs, take
			// this machine's cores to be "cpu".
			bad("device", "must be cpu (or empty) for provider cpu, got %q", c.Device)
		}
	case ProviderCUDA:
		if c.Device == "cpu" {
			bad("device", "names this machine's cores; name the GPU otherwise (say gpu or h100)")
		}
	default:
		bad("provider", "unknown execution provider %q; want %s or %s", c.Provider, ProviderCPU, ProviderCUDA)
	}
	if c.Device != "" {
		if err := ident.Check(c.Device); err != nil {
			bad("device", "%v", err)
		}
	}
	if c.GPU < 0 || c.GPU > 255 {
		bad("gpu", "must be in [0, 255], got %d", c.GPU)
	}
	if !c.Measure && c.Import == "" {
		bad("measure", "is off and nothing is imported: the profile would be empty")
	}
	if c.Import != "" {
		if ext := strings.ToLower(filepath.Ext(c.Import)); ext != ".parquet" && ext != ".csv" {
			bad("import", "want a .parquet or .csv file, got %q", c.Import)
		}
	}
	return errors.Join(errs...)
}

// BatchSizesOf returns the batch sizes measured for model.
func (c Config) BatchSizesOf(model string) []int {
	if b, ok := c.ModelBatchSizes[model]; ok {
		return b
	}
	return c.BatchSizes
}

func duplicate(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return s[i]
		}
	}
	return 0
}
