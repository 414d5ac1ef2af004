package section

import "slices"

// The scopes of metrics.parquet's rows: what a row's number is about. A
// section that adds a scope declares it here, and gives it a place in
// rowOrder.
const (
	ScopePolicy     = "policy"     // a policy over all its jobs
	ScopeClass      = "class"      // a policy's jobs of one class
	ScopeDevice     = "device"     // a policy's use of one device
	ScopeDifference = "difference" // a policy against a baseline
	ScopeSweep      = "sweep"      // a policy at one offered load
	ScopeSustained  = "sustained"  // the highest load a policy sustains
	ScopeBound      = "bound"      // the workload's lower bounds
	ScopeProfile    = "profile"    // a measured latency curve's point
	// ScopeMachine holds how busy the machine was while the profile
	// measured it (machine.parquet), over the whole profile: the shares
	// of the cores others used and a hypervisor stole, the load averages,
	// the reference timing's spread and the verdict (busy 1 or 0).
	ScopeMachine = "machine"
	// ScopeBest holds the summary's verdicts: for each objective, the
	// policy named best by multiple comparisons with the best, or the
	// policies that cannot be separated from it (Metric
	// "<objective>:<verdict>").
	ScopeBest = "best"
	// The trained models' headline numbers, when the report has the
	// train artifact: the kept predictor's scores on each of its splits
	// (Metric split_score, e.g. grouped_kfold_mape) and the placement
	// network's on train's test points.
	ScopePredictor = "predictor"
	ScopePlacement = "placement"
	// ScopeLearned holds the learned policies' headline numbers: each
	// learned spec's serving counts in replication 1 (serving.parquet's,
	// Baseline empty), and its paired differences from the edf specs it
	// is set against (Baseline the counterpart).
	ScopeLearned = "learned"
	// ScopeFidelity holds the real runs set against their simulations:
	// for each run (Policy and Load) the real and simulated latency
	// percentiles, SLO attainment and utilization, their errors, the
	// per-job errors, the figures of the sources of error and the
	// target's verdict; for each load (Policy empty) whether the
	// simulator ranks the policies as the real runs do.
	ScopeFidelity = "fidelity"
)

// rowOrder lays metrics.parquet out by scope, whatever the order of the
// report's sections: a line's scopes are one block, whose rows keep the
// order their section adds them in (a policy's rows, then its classes',
// devices' and differences', policy by policy). Rows of a scope not listed
// come last.
var rowOrder = [][]string{
	{ScopeBound},
	{ScopePolicy, ScopeClass, ScopeDevice, ScopeDifference},
	{ScopeSweep, ScopeSustained},
	{ScopeProfile},
	{ScopeMachine},
	{ScopePredictor},
	{ScopePlacement},
	{ScopeLearned},
	{ScopeFidelity},
	{ScopeBest},
}

// OrderRows sorts the sections' rows, given in the registry's order, into
// metrics.parquet's (rowOrder), keeping each block's rows in the order
// they came.
func OrderRows(rows []MetricRow) {
	block := func(scope string) int {
		i := slices.IndexFunc(rowOrder, func(b []string) bool { return slices.Contains(b, scope) })
		if i < 0 {
			return len(rowOrder)
		}
		return i
	}
	slices.SortStableFunc(rows, func(a, b MetricRow) int { return block(a.Scope) - block(b.Scope) })
}

// MetricRow is one row of metrics.parquet, which holds every number of the
// report in long form: the scope and the fields that apply to it name the
// number, Metric says what it measures, Value is it, and Lo and Hi bound
// its confidence interval where it has one.
type MetricRow struct {
	Scope string `parquet:"scope,dict"`
	// Policy is the policy spec ("" for bounds); Baseline the spec it is
	// compared with (differences only).
	Policy   string `parquet:"policy,dict"`
	Baseline string `parquet:"baseline,dict"`
	// Class and Device name the class or device of class and device rows
	// (for profile rows, the profiled device).
	Class  string `parquet:"class,dict"`
	Device string `parquet:"device,dict"`
	// Model, Precision, Threads and Batch name a profile row's
	// configuration; empty or 0 elsewhere.
	Model     string `parquet:"model,dict"`
	Precision string `parquet:"precision,dict"`
	Threads   int32  `parquet:"threads"`
	Batch     int32  `parquet:"batch"`
	// Load is the offered load of a sweep point, as a fraction of the
	// cluster's capacity; 0 elsewhere.
	Load   float64 `parquet:"load"`
	Metric string  `parquet:"metric,dict"`
	Value  float64 `parquet:"value"`
	// Lo and Hi bound the number's interval (Analysis; NaN where it has
	// none); null for a number of a kind that never has one.
	Lo *float64 `parquet:"lo,optional"`
	Hi *float64 `parquet:"hi,optional"`
	// Significant is true for a difference whose interval excludes zero.
	Significant bool `parquet:"significant"`
	// Previous is the same number in the run evaluate.compare_to names;
	// null without one, or when that run did not have it.
	Previous *float64 `parquet:"previous,optional"`
}
