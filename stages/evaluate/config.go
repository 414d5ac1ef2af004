package evaluate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/mlsched/mlsched/stages/schedule/policy"
)

// Config is the evaluate section of pipeline.yaml.
type Config struct {
	// Baselines are the policy specs every other policy is compared with:
	// each must be among schedule.policies.
	Baselines []string `koanf:"baselines"`
	// Bootstrap sets the confidence intervals.
	Bootstrap Bootstrap `koanf:"bootstrap"`
	// Sweep sets the load sweep.
	Sweep Sweep `koanf:"sweep"`
	// Timeline sets the utilization timeline's window.
	Timeline Timeline `koanf:"timeline"`
	// CompareTo names an earlier evaluate version (a unique prefix, as
	// 'mlsched ls evaluate' lists them): the report then gives every
	// metric's change since that run, and metrics.parquet its value then.
	CompareTo string `koanf:"compare_to"`
}

// Bootstrap sets the percentile bootstrap over jobs.
type Bootstrap struct {
	// Resamples is the number of bootstrap replicates (at least 100).
	Resamples int `koanf:"resamples"`
	// Confidence is the intervals' coverage, in (0, 1).
	Confidence float64 `koanf:"confidence"`
}

// Sweep runs the eval workload at several offered loads, each a fraction
// of the cluster's capacity: the lower bound's work over the span of the
// arrivals. Each (load, policy) point is memoized, so adding a load or a
// policy simulates only what is new.
type Sweep struct {
	// Loads are the offered loads, ascending; empty turns the sweep off.
	Loads []float64 `koanf:"loads"`
	// Jobs is how many of the eval workload's jobs (the first ones) each
	// point simulates; 0 takes them all.
	Jobs int64 `koanf:"jobs"`
	// Target is the interactive SLO attainment a policy must keep for a
	// load to count as sustained.
	Target float64 `koanf:"target"`
}

// Timeline sets the window the utilization timeline (a Gantt chart of
// every lane) shows.
type Timeline struct {
	// Start is where the window starts, as a fraction of the lower bound on
	// the makespan; Span is its length.
	Start float64       `koanf:"start"`
	Span  time.Duration `koanf:"span"`
}

var versionPrefix = regexp.MustCompile(`^[0-9a-f]{1,64}$`)

// DefaultConfig returns the evaluate section's defaults.
func DefaultConfig() Config {
	return Config{
		Baselines: []string{"fifo", "round_robin"},
		Bootstrap: Bootstrap{Resamples: 1000, Confidence: 0.95},
		Sweep:     Sweep{Loads: []float64{0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2}, Jobs: 50_000, Target: 0.99},
		Timeline:  Timeline{Start: 0.5, Span: time.Second},
	}
}

// Validate checks every value on its own; each error names its key path.
// Whether the baselines were simulated is checked against the schedule
// section by CheckBaselines.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("evaluate.%s: "+format, append([]any{key}, args...)...))
	}
	for i, b := range c.Baselines {
		key := fmt.Sprintf("baselines[%d]", i)
		if _, err := policy.ParseSpec(b); err != nil {
			bad(key, "%v", err)
		} else if j := slices.Index(c.Baselines, b); j < i {
			bad(key, "baseline %q is already listed at baselines[%d]", b, j)
		}
	}
	if c.Bootstrap.Resamples < 100 {
		bad("bootstrap.resamples", "must be at least 100 for a percentile interval, got %d", c.Bootstrap.Resamples)
	}
	if !(c.Bootstrap.Confidence > 0 && c.Bootstrap.Confidence < 1) {
		bad("bootstrap.confidence", "must be in (0, 1), got %v", c.Bootstrap.Confidence)
	}
	for i, l := range c.Sweep.Loads {
		key := fmt.Sprintf("sweep.loads[%d]", i)
		switch {
		case !(l > 0) || math.IsInf(l, 0):
			bad(key, "must be a positive fraction of the cluster's capacity, got %v", l)
		case i > 0 && !(l > c.Sweep.Loads[i-1]):
			bad(key, "loads must ascend, got %v after %v", l, c.Sweep.Loads[i-1])
		}
	}
	if c.Sweep.Jobs < 0 {
		bad("sweep.jobs", "must be at least 0 (0 takes every eval job), got %d", c.Sweep.Jobs)
	}
	if !(c.Sweep.Target > 0 && c.Sweep.Target <= 1) {
		bad("sweep.target", "must be an SLO attainment in (0, 1], got %v", c.Sweep.Target)
	}
	if !(c.Timeline.Start >= 0 && c.Timeline.Start < 1) {
		bad("timeline.start", "must be a fraction of the makespan in [0, 1), got %v", c.Timeline.Start)
	}
	if c.CompareTo != "" && !versionPrefix.MatchString(c.CompareTo) {
		bad("compare_to", "must be an evaluate version or a prefix of one (hex digits), got %q", c.CompareTo)
	}
	if c.Timeline.Span <= 0 {
		bad("timeline.span", "must be a positive duration, got %v", c.Timeline.Span)
	}
	return errors.Join(errs...)
}

// CheckBaselines reports each baseline the schedule section does not
// simulate.
func (c Config) CheckBaselines(policies []string) error {
	var errs []error
	for i, b := range c.Baselines {
		if !slices.Contains(policies, b) {
			errs = append(errs, fmt.Errorf("evaluate.baselines[%d]: %q is not among schedule.policies %v", i, b, policies))
		}
	}
	return errors.Join(errs...)
}
