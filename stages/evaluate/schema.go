package evaluate

// Scopes of metrics.parquet's rows: what a row's number is about.
const (
	ScopePolicy     = "policy"     // a policy over all its jobs
	ScopeClass      = "class"      // a policy's jobs of one class
	ScopeDevice     = "device"     // a policy's use of one device
	ScopeDifference = "difference" // a policy against a baseline
	ScopeSweep      = "sweep"      // a policy at one offered load
	ScopeSustained  = "sustained"  // the highest load a policy sustains
	ScopeBound      = "bound"      // the workload's lower bounds
	ScopeProfile    = "profile"    // a measured latency curve's point
	// The trained models' headline numbers, when the report has the
	// train artifact: the kept predictor's scores on each of its splits
	// (Metric split_score, e.g. grouped_kfold_mape) and the placement
	// network's on train's test points.
	ScopePredictor = "predictor"
	ScopePlacement = "placement"
)

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
	// Lo and Hi bound the bootstrap interval (evaluate.bootstrap); null
	// for a number without one.
	Lo *float64 `parquet:"lo,optional"`
	Hi *float64 `parquet:"hi,optional"`
	// Significant is true for a difference whose interval excludes zero.
	Significant bool `parquet:"significant"`
	// Previous is the same number in the run evaluate.compare_to names;
	// null without one, or when that run did not have it.
	Previous *float64 `parquet:"previous,optional"`
}

// key names a row's number across runs: everything but its values.
type rowKey struct {
	scope, policy, baseline, class, device, model, precision, metric string
	threads, batch                                                   int32
	load                                                             float64
}

func (r MetricRow) key() rowKey {
	return rowKey{r.Scope, r.Policy, r.Baseline, r.Class, r.Device, r.Model, r.Precision, r.Metric, r.Threads, r.Batch, r.Load}
}
