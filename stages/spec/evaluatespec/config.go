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
	// each must be among schedule.policies. The first is the simplest, the
	// one every headline names besides the strongest (the baseline with
	// the best estimate of the objective): by default fifo, and the
	// strongest heuristic with every feature on (batching, splitting,
	// migration), so that a gain is never only one over a handicapped
	// baseline.
	Baselines []string `koanf:"baselines"`
	// Confidence is the coverage of every interval the report gives, and
	// of its multiple comparisons with the best.
	Confidence float64 `koanf:"confidence"`
	// Objective is what the report's first sentence recommends a policy
	// for: one of Objectives.
	Objective string `koanf:"objective"`
	// Indifference is, for each kind of objective, the smallest
	// difference worth telling apart: a policy within it of the best is
	// as good as the best, for naming one (outputanalysis.MCB).
	Indifference Indifference `koanf:"indifference"`
	// Timeline sets the utilization timeline's window.
	Timeline Timeline `koanf:"timeline"`
	// CompareTo names an earlier evaluate version (a unique prefix, as
	// 'mlsched ls evaluate' lists them): the report then gives every
	// metric's change since that run, and metrics.parquet its value then.
	CompareTo string `koanf:"compare_to"`
}

// Indifference zones, by kind of objective.
type Indifference struct {
	// Latency is for the mean and P99 end-to-end latency and the makespan.
	Latency time.Duration `koanf:"latency"`
	// SLO is for the SLO violations, as a fraction of jobs (0.005 is half
	// a percentage point).
	SLO float64 `koanf:"slo"`
	// Goodput is for the goodput, in jobs per second.
	Goodput float64 `koanf:"goodput"`
}

// The objectives, the values of evaluate.objective: the names
// metrics.parquet gives their metrics.
const (
	ObjectiveMeanLatency             = "mean_e2e_s"
	ObjectiveP99Latency              = "p99_e2e_s"
	ObjectiveSLOViolation            = "slo_violation"
	ObjectiveInteractiveSLOViolation = "interactive_slo_violation"
	ObjectiveGoodput                 = "goodput"
)

// Objectives are the values evaluate.objective takes.
var Objectives = []string{ObjectiveMeanLatency, ObjectiveP99Latency, ObjectiveSLOViolation, ObjectiveInteractiveSLOViolation, ObjectiveGoodput}

// Of is the indifference zone of the objective whose metric is metric, in
// the metric's unit; 0 for a metric it does not know.
func (z Indifference) Of(metric string) float64 {
	switch metric {
	case ObjectiveMeanLatency, ObjectiveP99Latency, "makespan_s":
		return z.Latency.Seconds()
	case ObjectiveSLOViolation, ObjectiveInteractiveSLOViolation:
		return z.SLO
	case ObjectiveGoodput:
		return z.Goodput
	}
	return 0
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
		Baselines:    []string{"fifo", "edf+batch+split+migrate"},
		Confidence:   0.95,
		Objective:    ObjectiveInteractiveSLOViolation,
		Indifference: Indifference{Latency: time.Millisecond, SLO: 0.005, Goodput: 0.5},
		Timeline:     Timeline{Start: 0.5, Span: time.Second},
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
	if !(c.Confidence >= 0.5 && c.Confidence <= 0.999) {
		bad("confidence", "must be in [0.5, 0.999], got %v", c.Confidence)
	}
	if !slices.Contains(Objectives, c.Objective) {
		bad("objective", "must be one of %v, got %q", Objectives, c.Objective)
	}
	if z := c.Indifference.Latency; z < 0 || z > time.Hour {
		bad("indifference.latency", "must be a duration from 0s to 1h, got %v", z)
	}
	if z := c.Indifference.SLO; !(z >= 0 && z <= 0.5) {
		bad("indifference.slo", "must be a fraction of jobs in [0, 0.5], got %v", z)
	}
	if z := c.Indifference.Goodput; !(z >= 0 && z <= 1e9) {
		bad("indifference.goodput", "must be jobs per second in [0, 1e9], got %v", z)
	}
	if !(c.Timeline.Start >= 0 && c.Timeline.Start < 1) {
		bad("timeline.start", "must be a fraction of the makespan in [0, 1), got %v", c.Timeline.Start)
	}
	if c.CompareTo != "" && !isVersionPrefix(c.CompareTo) {
		bad("compare_to", "must be an evaluate version or a prefix of one (hex digits), got %q", c.CompareTo)
	}
	if c.Timeline.Span <= 0 || c.Timeline.Span > time.Hour {
		bad("timeline.span", "must be a positive duration of at most 1h, got %v", c.Timeline.Span)
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
