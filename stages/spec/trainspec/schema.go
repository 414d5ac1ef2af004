package trainspec

// MetricRow is one row of metrics.parquet, which holds every score of both
// models in long form. Model and Section say what the number is about, the
// other fields that apply name it, and the rest are empty or 0.
type MetricRow struct {
	// Model is ModelPredictor, ModelPlacement or ModelLabels.
	Model string `parquet:"model,dict"`
	// Section is one of the Section constants.
	Section string `parquet:"section,dict"`
	// Split is the predictor's split (grouped_kfold, leave_one_batch_out,
	// leave_one_model_out), or the placement split scored (test).
	Split string `parquet:"split,dict"`
	// Candidate is the predictor's candidate, the placement scorer
	// (network, threshold, best_feature), or the way of labelling an
	// agreement row is about.
	Candidate string `parquet:"candidate,dict"`
	// Feature is the input an importance is of, prefixed by its level
	// (query: or feature:).
	Feature string `parquet:"feature,dict"`
	// Metric names the number.
	Metric string `parquet:"metric,dict"`
	// Index numbers the rows of a curve: the epoch, the calibration bin,
	// the ROC point.
	Index int32   `parquet:"index"`
	Value float64 `parquet:"value"`
}

// The models of MetricRow.
const (
	ModelPredictor = "predictor"
	ModelPlacement = "placement"
	// ModelLabels are the decision points' counts: probes, ties, the
	// class balance.
	ModelLabels = "labels"
)

// The sections of MetricRow.
const (
	SectionScore       = "score"
	SectionImportance  = "importance"
	SectionCurve       = "curve"       // train_loss, val_loss, val_accuracy, best per epoch
	SectionCalibration = "calibration" // lo, hi, count, mean_predicted, observed per bin
	SectionROC         = "roc"         // fpr, tpr per point
	SectionCounts      = "counts"
	// SectionAgreement (model labels) holds, for each other way of
	// labelling (candidate: JudgementName), how often its labels agree
	// with the configured labelling's on the points judged both ways;
	// candidate CandidateConfigured describes the configured one.
	SectionAgreement = "agreement"
	// SectionTrained (model placement, metric MetricTrained) is 1 when
	// the network was trained and 0 when no policy asked for it
	// (Simulation.Network empty): then the artifact has no placement
	// file, no decision points and no placement scores. An artifact
	// without the row was trained.
	SectionTrained = "trained"
)

// MetricTrained is SectionTrained's one metric.
const MetricTrained = "trained"

// CandidateConfigured names the configured labelling in the agreement
// rows.
const CandidateConfigured = "configured"

// The placement scorers.
const (
	ScorerNetwork     = "network"
	ScorerThreshold   = "threshold"
	ScorerBestFeature = "best_feature"
)

// MetricNetworkMinus prefixes a score row of a rule that compares the
// network with it on the same points: network_minus_accuracy (and _lo,
// _hi) is the network's accuracy less the rule's, with its block-bootstrap
// interval; network_minus_<regret metric> likewise for the regret.
const MetricNetworkMinus = "network_minus_"

// The splits of decisions.parquet.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
	SplitTest       = "test"
	// SplitHoldout marks the placement scores on the holdout workload's
	// decision points (metrics.parquet only: decisions.parquet holds the
	// train workload's).
	SplitHoldout = "holdout"
)

// DecisionRow is one row of decisions.parquet: a labelled decision point.
type DecisionRow struct {
	// Pass and Segment name the simulation of the train workload the
	// point came from; Block is the span of the workload it fell in, the
	// unit the splits hold out; TimeS is the simulated time of the
	// decision.
	Pass    int32   `parquet:"pass"`
	Segment int32   `parquet:"segment"`
	Block   int32   `parquet:"block"`
	TimeS   float64 `parquet:"time_s"`
	JobID   int64   `parquet:"job_id"`
	// From and To are the devices' indexes in schedule.cluster.
	From int32 `parquet:"from"`
	To   int32 `parquet:"to"`
	// Features are the network's ten inputs, in the order of sim's
	// FeatureNames (the file's footer lists them).
	Features []float32 `parquet:"features,list"`
	// GainS is the Threshold rule's predicted gain.
	GainS float64 `parquet:"gain_s"`
	// Judged is how many jobs the branches were judged on (those in the
	// system at the decision, and with train.placement.arrivals those
	// arriving before the horizon); Stay and Move the branches'
	// objectives over them.
	Judged int32   `parquet:"judged"`
	Stay   float64 `parquet:"stay"`
	Move   float64 `parquet:"move"`
	// Migrate is the label: moving did better.
	Migrate bool `parquet:"migrate"`
	// Split is SplitTrain, SplitValidation or SplitTest.
	Split string `parquet:"split,dict"`
}
