package generatespec

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
)

// Arrival process names, the values of generate.<workload>.arrival.process.
// JobsFile returns the name of the file holding workload's jobs.
func JobsFile(workload string) string { return "jobs-" + workload + ".parquet" }

// Workload names; each names its output file (JobsFile) and its random
// streams.
const (
	WorkloadTrain   = "train"
	WorkloadEval    = "eval"
	WorkloadHoldout = "holdout"
)

// HoldoutOrdinal places the holdout workload's job ids (ordinal·MaxJobs
// on) past every eval replication's, so that no two jobs of a run share
// an id.
const HoldoutOrdinal = 1 << 16

// Job classes.
const (
	ClassInteractive = "interactive"
	ClassBatch       = "batch"
)

// Job precisions.
const (
	PrecisionFP32 = "fp32"
	PrecisionFP16 = "fp16"
)

const (
	ProcessPoisson = "poisson"
	ProcessBursty  = "bursty"
	ProcessDiurnal = "diurnal"
)

// Bursty model names, the values of generate.<workload>.arrival.bursty.model.
const (
	BurstyGamma = "gamma"
	BurstyMMPP  = "mmpp"
)

// Limits enforced by Validate.
const (
	// MaxJobs is the most jobs one workload may hold: job ids are the
	// workload's ordinal times MaxJobs plus a sequence number, which keeps
	// the workloads' id ranges disjoint (see the package doc).
	MaxJobs = 1 << 40
	// MaxBatchSize bounds the batch-size ranges; larger batches are not
	// inference or single-task workloads any more.
	MaxBatchSize = 1 << 16
	// MaxGammaCV bounds the gamma process's coefficient of variation. Its
	// shape is 1/cv², and below a shape of 0.01 most gaps underflow to zero.
	MaxGammaCV = 10
	// MinGammaCV bounds it below: a shape of 10⁴ is as regular as arrivals
	// get; beyond, the process is a clock.
	MinGammaCV = 0.01
	// MinRate and MaxRate bound a workload's arrival rate, in jobs per
	// second.
	MinRate = 1e-3
	MaxRate = 1e9
	// MaxSpanS bounds the span of a workload's arrivals, jobs/rate, in
	// seconds (about three years), and schedule.load's stretch of it. Times
	// are float64 seconds: at 10⁸ s they resolve 15 ns, and far beyond, a
	// job's latency rounds to zero (a rate of 1e-9 did that).
	MaxSpanS = 1e8
	// MaxWeight bounds a model's weight in the mix: weights are relative,
	// and a sum of huge weights would overflow.
	MaxWeight = 1e6
)

// Config is the generate section of pipeline.yaml.
type Config struct {
	// Train is the workload the train stage learns from.
	Train Workload `koanf:"train"`
	// Eval is the workload the schedule stage simulates; it never shares a
	// job with Train.
	Eval Workload `koanf:"eval"`
	// Holdout is the workload the train stage scores its placement
	// network on and never learns from: by default from another seed and
	// another arrival process than Train's (and Eval's), so that the
	// network is judged on data it never saw.
	Holdout Workload `koanf:"holdout"`
	// InteractiveFraction is the probability that a job is interactive
	// rather than batch.
	InteractiveFraction float64 `koanf:"interactive_fraction"`
	// Models weighs the catalog models in the job mix; weights are relative
	// and a weight of 0 drops a model.
	Models map[string]float64 `koanf:"models"`
	// FP16Fraction is the probability that a job runs in fp16 rather than fp32.
	FP16Fraction float64 `koanf:"fp16_fraction"`
	// FP16BytesFactor scales an fp16 job's bytes (memory need and bytes
	// moved) relative to fp32: 0.5 when weights and activations are both
	// half width.
	FP16BytesFactor float64 `koanf:"fp16_bytes_factor"`
	// Classes holds the per-class SLO and batch-size settings.
	Classes Classes `koanf:"classes"`
}

// Workload configures one named workload.
type Workload struct {
	// Import, when not empty, is a .csv or .parquet file of the
	// workload's jobs (the user's own trace, relative to the config
	// file), read instead of generating them: Jobs, Seed and Arrival are
	// then ignored (but still validated). The package doc of package
	// generate gives the format; the file's content enters the cache key.
	Import string `koanf:"import"`
	// Jobs is the number of jobs to generate.
	Jobs int64 `koanf:"jobs"`
	// Seed is mixed with the pipeline's global seed and the workload's name
	// into the workload's random streams.
	Seed int64 `koanf:"seed"`
	// Arrival is the arrival process.
	Arrival Arrival `koanf:"arrival"`
}

// Arrival configures an arrival process. Every process has mean rate Rate;
// the Bursty and Diurnal sections shape it when Process selects them.
type Arrival struct {
	// Process is ProcessPoisson, ProcessBursty or ProcessDiurnal.
	Process string `koanf:"process"`
	// Rate is the long-run mean arrival rate in jobs per second.
	Rate float64 `koanf:"rate"`
	// Bursty shapes the bursty process.
	Bursty Bursty `koanf:"bursty"`
	// Diurnal shapes the diurnal process.
	Diurnal Diurnal `koanf:"diurnal"`
}

// Bursty configures a bursty arrival process with the mean rate preserved.
type Bursty struct {
	// Model is BurstyGamma (a gamma renewal process) or BurstyMMPP (a
	// two-state Markov-modulated Poisson process).
	Model string `koanf:"model"`
	// CV is the gamma model's coefficient of variation of inter-arrival
	// times: 1 is Poisson, larger is burstier.
	CV float64 `koanf:"cv"`
	// HighFraction is the MMPP's long-run fraction of time in the high state.
	HighFraction float64 `koanf:"high_fraction"`
	// RateRatio is the MMPP's high-state rate over its low-state rate.
	RateRatio float64 `koanf:"rate_ratio"`
	// MeanBurst is the MMPP's mean time in the high state.
	MeanBurst time.Duration `koanf:"mean_burst"`
}

// Diurnal configures a sinusoidal rate λ(t) = Rate·(1 + Amplitude·sin(2πt/Period)).
type Diurnal struct {
	// Amplitude is the relative swing of the rate, in [0, 1].
	Amplitude float64 `koanf:"amplitude"`
	// Period is the length of one cycle.
	Period time.Duration `koanf:"period"`
}

// Classes holds the settings of the two job classes.
type Classes struct {
	// Interactive jobs are latency-sensitive requests.
	Interactive Class `koanf:"interactive"`
	// Batch jobs are throughput work with a looser SLO.
	Batch Class `koanf:"batch"`
}

// Class configures one job class. Batch sizes are drawn log-uniformly from
// the integers in [BatchMin, BatchMax]: P(b) ∝ ln((b+1)/b), so each doubling
// of the size is about equally likely, as in real request mixes.
type Class struct {
	// SLO is the latency objective; a job's deadline is its arrival plus SLO.
	SLO time.Duration `koanf:"slo"`
	// BatchMin is the smallest batch size.
	BatchMin int `koanf:"batch_min"`
	// BatchMax is the largest batch size.
	BatchMax int `koanf:"batch_max"`
}

// DefaultConfig returns the configuration the pipeline uses when
// pipeline.yaml leaves generate unset. Its 700,000 jobs generate in a
// moment (docs/benchmarks.md). Train follows a diurnal cycle so the learned
// models see a range of loads; eval is burstier than Poisson, as production
// traffic is.
func DefaultConfig() Config {
	bursty := Bursty{Model: BurstyGamma, CV: 2, HighFraction: 0.2, RateRatio: 5, MeanBurst: 10 * time.Second}
	diurnal := Diurnal{Amplitude: 0.5, Period: 10 * time.Minute}
	return Config{
		Train: Workload{
			Jobs:    500_000,
			Seed:    1,
			Arrival: Arrival{Process: ProcessDiurnal, Rate: 100, Bursty: bursty, Diurnal: diurnal},
		},
		Eval: Workload{
			Jobs:    20_000, // a replication's: schedule.replications draws one per replication
			Seed:    2,
			Arrival: Arrival{Process: ProcessBursty, Rate: 100, Bursty: bursty, Diurnal: diurnal},
		},
		Holdout: Workload{
			Jobs:    100_000,
			Seed:    3,
			Arrival: Arrival{Process: ProcessPoisson, Rate: 100, Bursty: bursty, Diurnal: diurnal},
		},
		InteractiveFraction: 0.7,
		Models:              map[string]float64{"mlp": 0.4, "resnet18": 0.25, "resnet50": 0.15, "vit": 0.2},
		FP16Fraction:        0.3,
		FP16BytesFactor:     0.5,
		Classes: Classes{
			Interactive: Class{SLO: 100 * time.Millisecond, BatchMin: 1, BatchMax: 8},
			Batch:       Class{SLO: time.Second, BatchMin: 8, BatchMax: 64},
		},
	}
}

// NamedWorkload is one workload of the config with its name (the
// workload's key under generate: train, eval, holdout).
type NamedWorkload struct {
	Name string
	W    *Workload
}

// Workloads are c's workloads, in order: train, eval, holdout. Every
// place that handles a workload's settings (its import's path, its
// content in the stage's key, the files that travel to a worker) walks
// this one list, so that no workload is left out of any.
func (c *Config) Workloads() []NamedWorkload {
	return []NamedWorkload{{WorkloadTrain, &c.Train}, {WorkloadEval, &c.Eval}, {WorkloadHoldout, &c.Holdout}}
}

// Validate reports every invalid setting at once, each error starting with
// the setting's full key, e.g. "generate.eval.jobs: must be at least 1, got 0".
// All sections are checked, including those the chosen processes ignore, so a
// typo is caught before it matters.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: "generate." + key, Msg: fmt.Sprintf(format, args...), Err: config.ErrInvalidValue})
	}
	// probability checks a value in [0, 1]; NaN fails every comparison.
	probability := func(key string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad(key, "must be in [0, 1], got %v", v)
		}
	}

	for _, nw := range c.Workloads() {
		w := struct {
			name string
			w    Workload
		}{nw.Name, *nw.W}
		p := w.name + "."
		if w.w.Import != "" {
			if err := CheckImportName(w.w.Import); err != nil {
				bad(p+"import", "%v", err)
			}
		}
		if w.w.Jobs < 1 {
			bad(p+"jobs", "must be at least 1, got %d", w.w.Jobs)
		} else if w.w.Jobs > MaxJobs {
			bad(p+"jobs", "must be at most %d, got %d", int64(MaxJobs), w.w.Jobs)
		}
		a := w.w.Arrival
		p += "arrival."
		switch a.Process {
		case ProcessPoisson, ProcessBursty, ProcessDiurnal:
		default:
			bad(p+"process", "unknown process %q; want %s, %s or %s", a.Process, ProcessPoisson, ProcessBursty, ProcessDiurnal)
		}
		if !(a.Rate >= MinRate && a.Rate <= MaxRate) {
			bad(p+"rate", "must be in [0.001, 1e9] jobs per second, got %v", a.Rate)
		} else if span := float64(w.w.Jobs) / a.Rate; w.w.Jobs >= 1 && w.w.Jobs <= MaxJobs && span > MaxSpanS {
			errs = append(errs, &config.Error{Key: "generate." + p + "rate", Also: []string{"generate." + w.name + ".jobs"}, Err: config.ErrInvalidValue,
				Msg: fmt.Sprintf("%d jobs at %v per second would span %.3g s of arrivals, more than the 1e8 s (about 3 years) within which times resolve a latency; raise generate.%s.arrival.rate or lower generate.%s.jobs",
					w.w.Jobs, a.Rate, span, w.name, w.name)})
		}
		switch a.Bursty.Model {
		case BurstyGamma, BurstyMMPP:
		default:
			bad(p+"bursty.model", "unknown model %q; want %s or %s", a.Bursty.Model, BurstyGamma, BurstyMMPP)
		}
		if !(a.Bursty.CV >= MinGammaCV && a.Bursty.CV <= MaxGammaCV) {
			bad(p+"bursty.cv", "must be in [%v, %d], got %v", MinGammaCV, MaxGammaCV, a.Bursty.CV)
		}
		if !(a.Bursty.HighFraction >= 0.001 && a.Bursty.HighFraction <= 0.999) {
			bad(p+"bursty.high_fraction", "must be a share of time in [0.001, 0.999], got %v", a.Bursty.HighFraction)
		}
		if !(a.Bursty.RateRatio >= 1 && a.Bursty.RateRatio <= 1000) {
			bad(p+"bursty.rate_ratio", "must be in [1, 1000], got %v", a.Bursty.RateRatio)
		}
		if a.Bursty.MeanBurst <= 0 || a.Bursty.MeanBurst.Seconds() > MaxSpanS {
			bad(p+"bursty.mean_burst", "must be positive and at most 1e8 s (about 3 years), got %v", a.Bursty.MeanBurst)
		}
		probability(p+"diurnal.amplitude", a.Diurnal.Amplitude)
		if a.Diurnal.Period <= 0 || a.Diurnal.Period.Seconds() > MaxSpanS {
			bad(p+"diurnal.period", "must be positive and at most 1e8 s (about 3 years), got %v", a.Diurnal.Period)
		}
	}

	probability("interactive_fraction", c.InteractiveFraction)
	probability("fp16_fraction", c.FP16Fraction)
	if !(c.FP16BytesFactor >= 0.1 && c.FP16BytesFactor <= 1) {
		bad("fp16_bytes_factor", "must be in [0.1, 1], got %v", c.FP16BytesFactor)
	}

	if len(c.Models) == 0 {
		bad("models", "must weigh at least one model")
	} else {
		var sum float64
		names := make([]string, 0, len(c.Models))
		for name := range c.Models {
			names = append(names, name)
		}
		slices.Sort(names) // report in a stable order
		for _, name := range names {
			// Whether the model is one the profile knows is checked
			// across sections (package stages), and by the stage
			// against the profile's catalog.
			w := c.Models[name]
			if !(w >= 0 && w <= MaxWeight) {
				bad("models."+name, "weight must be in [0, 1e6], got %v", w)
				continue
			}
			sum += w
		}
		if !(sum > 0) {
			bad("models", "weights sum to %v; at least one must be positive", sum)
		}
	}

	for _, cl := range []struct {
		name string
		c    Class
	}{{ClassInteractive, c.Classes.Interactive}, {ClassBatch, c.Classes.Batch}} {
		p := "classes." + cl.name + "."
		if cl.c.SLO <= 0 || cl.c.SLO.Seconds() > MaxSpanS {
			bad(p+"slo", "must be positive and at most 1e8 s (about 3 years), got %v", cl.c.SLO)
		}
		if cl.c.BatchMin < 1 || cl.c.BatchMin > MaxBatchSize {
			bad(p+"batch_min", "must be in [1, %d], got %d", MaxBatchSize, cl.c.BatchMin)
		}
		if cl.c.BatchMax < 1 || cl.c.BatchMax > MaxBatchSize {
			bad(p+"batch_max", "must be in [1, %d], got %d", MaxBatchSize, cl.c.BatchMax)
		} else if cl.c.BatchMax < cl.c.BatchMin {
			bad(p+"batch_max", "must be at least batch_min (%d), got %d", cl.c.BatchMin, cl.c.BatchMax)
		}
	}
	return errors.Join(errs...)
}

// The kinds of file an import may be, by extension (any case).
const (
	ImportCSV     = ".csv"
	ImportParquet = ".parquet"
)

// ImportKind is ImportCSV or ImportParquet for a path with that extension
// (in any case), and "" for any other.
func ImportKind(path string) string {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ImportCSV, ImportParquet:
		return ext
	}
	return ""
}

// CheckImportName checks an import's path as the config gives it: a .csv
// or a .parquet file.
func CheckImportName(path string) error {
	if ImportKind(path) == "" {
		return fmt.Errorf("want a .csv or .parquet file, got %q", path)
	}
	return nil
}
