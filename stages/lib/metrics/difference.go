package metrics

// The metrics a policy is compared with another in, by Difference.Metric.
// All but goodput are lower-is-better.
const (
	MetricMeanE2E                 = "mean_e2e_s"
	MetricP99E2E                  = "p99_e2e_s"
	MetricSLOViolation            = "slo_violation"
	MetricInteractiveSLOViolation = "interactive_slo_violation"
	MetricGoodput                 = "goodput"
	MetricMakespan                = "makespan_s"
)

// Difference is one metric's difference between a policy and another (a
// baseline) run on the same jobs, with its interval: the evaluate stage's
// output analysis fills it (package outputanalysis), from replications.
type Difference struct {
	// Policy and Baseline are the two policies, Metric one of the Metric
	// constants.
	Policy, Baseline, Metric string
	// PolicyValue and BaselineValue are the metric's estimates for each.
	PolicyValue, BaselineValue float64
	// Value is the estimated difference, policy minus baseline, and
	// [Lo, Hi] its interval (NaN where there is none).
	Value, Lo, Hi float64
	// Ratio is BaselineValue / PolicyValue: above 1 when the policy is
	// better at a lower-is-better metric (a speedup), NaN when
	// PolicyValue is 0.
	Ratio float64
	// Significant is true when the interval leaves out 0: the two differ
	// at the interval's confidence. It is false when the interval is NaN.
	Significant bool
}
