package evaluatespec

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/policy"
)

// Output file names.
const (
	MetricsFile = "metrics.parquet"
	ReportMD    = "report.md"
	ReportHTML  = "report.html"
	// ChartsDir holds the report's charts as SVG files; report.md links
	// them and report.html carries them inline.
	ChartsDir = "charts"
)

// Config is the evaluate section of pipeline.yaml.
type Config struct {
	// Baselines are the policy specs every other policy is compared with:
	// each must be among schedule.policies.
	Baselines []string `koanf:"baselines"`
	// Bootstrap sets the confidence intervals.
	Bootstrap Bootstrap `koanf:"bootstrap"`
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

// Timeline sets the window the utilization timeline (a Gantt chart of
// every lane) shows.
type Timeline struct {
	// Start is where the window starts, as a fraction of the lower bound on
	// the makespan; Span is its length.
	Start float64       `koanf:"start"`
	Span  time.Duration `koanf:"span"`
}

// isVersionPrefix says whether s can start a version: 1 to 64 lower-case
// hex digits. (A regexp would be compiled at every start of the command
// line, which links this package and must start at once.)
func isVersionPrefix(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// DefaultConfig returns the evaluate section's defaults.
func DefaultConfig() Config {
	return Config{
		Baselines: []string{"fifo", "round_robin"},
		Bootstrap: Bootstrap{Resamples: 1000, Confidence: 0.95},
		Timeline:  Timeline{Start: 0.5, Span: time.Second},
	}
}

// Validate checks every value on its own; each error names its key path.
// Whether the baselines were simulated is checked against the schedule
// section by CheckBaselines.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: "evaluate." + key, Msg: fmt.Sprintf(format, args...), Err: config.ErrInvalidValue})
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
	if !(c.Bootstrap.Confidence >= 0.5 && c.Bootstrap.Confidence <= 0.999) {
		bad("bootstrap.confidence", "must be in [0.5, 0.999], got %v", c.Bootstrap.Confidence)
	}
	if !(c.Timeline.Start >= 0 && c.Timeline.Start < 1) {
		bad("timeline.start", "must be a fraction of the makespan in [0, 1), got %v", c.Timeline.Start)
	}
	if c.CompareTo != "" && !isVersionPrefix(c.CompareTo) {
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
			errs = append(errs, &config.Error{Key: fmt.Sprintf("evaluate.baselines[%d]", i), Msg: fmt.Sprintf("%q is not among schedule.policies %v", b, policies), Err: config.ErrInvalidValue})
		}
	}
	return errors.Join(errs...)
}
