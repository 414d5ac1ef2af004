package section

import (
	"fmt"
	"math"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Objective is one thing a policy can be best at.
type Objective struct {
	Name  string
	Value func(metrics.Summary) float64
	// Lower says that lower is better.
	Lower bool
	// Diff is the Difference metric that gives its interval.
	Diff   string
	Format func(float64) string
	// Delta formats a difference (percentage points for a fraction).
	Delta func(float64) string
}

// Objectives are the report's headline objectives, in the order its
// summary gives them.
func Objectives() []Objective {
	return []Objective{
		{"Mean end-to-end latency", func(s metrics.Summary) float64 { return s.E2E.Mean }, true, metrics.MetricMeanE2E, report.Secs, report.Secs},
		{"P99 end-to-end latency", func(s metrics.Summary) float64 { return s.E2E.P99 }, true, metrics.MetricP99E2E, report.Secs, report.Secs},
		{"SLO violations", func(s metrics.Summary) float64 { return s.SLOViolation }, true, metrics.MetricSLOViolation, report.Pct, report.PctPts},
		{"Interactive SLO violations", func(s metrics.Summary) float64 { return ClassOf(s, generatespec.ClassInteractive).SLOViolation }, true, metrics.MetricInteractiveSLOViolation, report.Pct, report.PctPts},
		{"Goodput (jobs/s within SLO)", func(s metrics.Summary) float64 { return s.Goodput }, false, metrics.MetricGoodput, report.Num, report.Num},
		{"Makespan", func(s metrics.Summary) float64 { return s.Makespan }, true, metrics.MetricMakespan, report.Secs, report.Secs},
	}
}

// ObjectiveOf returns the objective whose metric is diff (its Diff, a
// metrics.Metric* name); ok is false for none.
func ObjectiveOf(diff string) (o Objective, ok bool) {
	for _, o := range Objectives() {
		if o.Diff == diff {
			return o, true
		}
	}
	return Objective{}, false
}

// The names metrics.parquet gives a policy's goodput and sustained load,
// where an objective's Diff is not the row's metric (see Where).
const (
	MetricGoodputRate   = "goodput_jobs_per_s"
	MetricSustainedLoad = "sustained_load"
)

// Where says which row of metrics.parquet holds a policy's estimate of
// the objective, with its interval: the policy's own row (ScopePolicy) of
// metric Diff, but for the interactive SLO violations the interactive
// class's slo_violation (ScopeClass), and for the goodput the policy's
// goodput_jobs_per_s. The stage writes the rows there and mlsched diff
// reads them back, so the two never disagree on where a number is.
func (o Objective) Where() (scope, class, metric string) {
	switch o.Diff {
	case metrics.MetricInteractiveSLOViolation:
		return ScopeClass, generatespec.ClassInteractive, metrics.MetricSLOViolation
	case metrics.MetricGoodput:
		return ScopePolicy, "", MetricGoodputRate
	}
	return ScopePolicy, "", o.Diff
}

// Headline are the objectives a paired comparison states: those with a
// paired interval (the makespan has none).
func Headline() []Objective {
	var out []Objective
	for _, o := range Objectives() {
		if o.Diff != metrics.MetricMakespan {
			out = append(out, o)
		}
	}
	return out
}

// Verdict says whether a difference (policy minus other) is better, worse
// or no difference for the objective; "" when it cannot say.
func (o Objective) Verdict(x metrics.Difference) string {
	switch {
	case math.IsNaN(x.Value):
		return ""
	case !x.Significant:
		return "no difference"
	case (x.Value < 0) == o.Lower:
		return "better"
	}
	return "worse"
}

// ClassOf is a summary's figures for one class; NaN violations and
// goodput for a class without jobs.
func ClassOf(s metrics.Summary, class string) metrics.ClassSummary {
	for _, c := range s.Classes {
		if c.Class == class {
			return c
		}
	}
	return metrics.ClassSummary{Class: class, SLOViolation: math.NaN(), Goodput: math.NaN()}
}

// DiffText formats a difference with its interval, or "no difference".
func DiffText(x metrics.Difference, format func(float64) string) string {
	if x.Lo == x.Hi || math.IsNaN(x.Lo) || math.IsNaN(x.Hi) {
		return report.Signed(x.Value, format)
	}
	if !x.Significant {
		return fmt.Sprintf("no difference (%s … %s)", report.Signed(x.Lo, format), report.Signed(x.Hi, format))
	}
	return fmt.Sprintf("%s (%s … %s)", report.Signed(x.Value, format), report.Signed(x.Lo, format), report.Signed(x.Hi, format))
}

// ClusterText describes a cluster's devices in words: each one's lanes,
// and whether it was measured or declared.
func ClusterText(devices []schedulespec.ClusterRow) string {
	var parts []string
	for _, d := range devices {
		what := "measured"
		if d.Kind == schedulespec.KindDeclared {
			what = fmt.Sprintf("declared, %g× the profiled %s", d.Speed, report.Escape(d.ProfileDevice))
		}
		lanes := "lanes"
		if d.Lanes == 1 {
			lanes = "lane"
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s, %s)", report.Escape(d.Device), d.Lanes, lanes, what))
	}
	return strings.Join(parts, ", ")
}

// IntervalText writes an estimate with its interval, "v (lo … hi)", or
// the estimate alone where it has no interval.
func IntervalText(iv outputanalysis.Interval, format func(float64) string) string {
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return format(iv.Mean)
	}
	return fmt.Sprintf("%s (%s … %s)", format(iv.Mean), format(iv.Lo), format(iv.Hi))
}

// ReplicationsText says "the one replication" or "each of the n
// replications".
func ReplicationsText(n int) string {
	if n <= 1 {
		return "the one replication"
	}
	return fmt.Sprintf("each of the %d replications", n)
}
