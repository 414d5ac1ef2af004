package trainspec

// The service-time predictor's cross-validation (package predictorfit, in
// the train stage): its rows and the names of its splits and scores, which
// the evaluate stage reads.

// CVRow is one held-out configuration of one fold of one split with one
// candidate's prediction: a row of cv.parquet. Every score is a function
// of these rows, so a reader can recompute them all.
type CVRow struct {
	Split     string `parquet:"split,dict"`
	Fold      int32  `parquet:"fold"`
	Candidate string `parquet:"candidate,dict"`
	Device    string `parquet:"device,dict"`
	Model     string `parquet:"model,dict"`
	Precision string `parquet:"precision,dict"`
	Batch     int32  `parquet:"batch"`
	Threads   int32  `parquet:"threads"`
	// NSamples is how many timed runs the configuration has.
	NSamples int32 `parquet:"n_samples"`
	// MeasuredS is the median of those runs' latencies in seconds (the
	// mean of the middle two of an even count).
	MeasuredS float64 `parquet:"measured_s"`
	// PredictedS is the candidate's prediction in seconds, 0 when
	// HasPrediction is false.
	PredictedS float64 `parquet:"predicted_s"`
	// HasPrediction is false where the candidate, trained on the fold's
	// other configurations, has no prediction: the table for a
	// configuration it has no curve of.
	HasPrediction bool `parquet:"has_prediction"`
}

// The splits, the values of CVRow.Split and ScoreRow.Split.
const (
	// SplitKFold holds out whole configurations, train.predictor.folds groups of
	// them in turn, assigned at random (seeded).
	SplitKFold = "grouped_kfold"
	// SplitBatch holds out every configuration of one batch size in turn.
	SplitBatch = "leave_one_batch_out"
	// SplitModel holds out every configuration of one model in turn.
	SplitModel = "leave_one_model_out"
	// SplitNested is nested cross-validation of the selection: the grouped
	// k-fold's folds, each predicted by the candidate chosen by a grouped
	// k-fold of its training configurations alone (candidate "auto").
	SplitNested = "nested_kfold"
)

// CandidateOpCost names the per-operator cost model (package opcost) in
// the predictor's rows of cv.parquet and metrics.parquet: fitted where the
// profile timed each node (profile.operators), scored on split SplitModel
// alone, over the configurations timed node by node. It is never the
// kept candidate: the simulations predict with predictor.json.
const CandidateOpCost = "opcost"

// The metrics of the predictor's scores (metrics.parquet's rows of
// the predictor). Shares and MAPE are fractions (0.1 is 10%).
// Every metric but MetricN and MetricCoverage is over the configurations
// the candidate has a prediction for.
const (
	// MetricN is the number of held-out configurations.
	MetricN = "n"
	// MetricCoverage is the share of them with a prediction.
	MetricCoverage = "coverage"
	// MetricR2 is the coefficient of determination of the predicted
	// against the measured latency, in seconds.
	MetricR2 = "r2"
	// MetricR2Log is the same on the natural log of the latencies, which
	// weighs a microsecond model like a second-long one.
	MetricR2Log = "r2_log"
	// MetricMAE is the mean absolute error in seconds.
	MetricMAE = "mae_s"
	// MetricMAPE is the mean of |predicted − measured| / measured.
	MetricMAPE = "mape"
	// MetricWithin10 is the share predicted within ±10% of the measured
	// latency (nn-Meter's accuracy measure).
	MetricWithin10 = "within_10pct"
	// MetricNWhereTable, MetricMAPEWhereTable and
	// MetricWithin10WhereTable restrict MAPE and the ±10% share to the
	// configurations the table baseline predicts on the same split, so
	// that every candidate is compared with the table on the table's
	// ground.
	MetricNWhereTable        = "n_where_table"
	MetricMAPEWhereTable     = "mape_where_table"
	MetricWithin10WhereTable = "within_10pct_where_table"
	// MetricChosen, on split SplitNested, is how many outer folds chose
	// the candidate.
	MetricChosen = "chosen"
)
