package predictorfit

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// OpCostResult is the per-operator cost model fitted to the profile's
// per-node times (operators.parquet), beside the predictor.
type OpCostResult struct {
	// File holds one fit per device and precision the nodes were timed
	// in; nil where none could be fitted.
	File *opcost.File
	// CV are its leave-one-model-out predictions (candidate
	// trainspec.CandidateOpCost), one fold per held-out model, and Scores
	// their scores, as the predictor's candidates are scored.
	CV     []CVRow
	Scores []ScoreRow
	// Skipped say which devices and precisions could not be fitted, and
	// why (a thread count of one configuration cannot be calibrated).
	Skipped []string
}

// FitOpCost fits package opcost's per-operator cost model to the nodes'
// times of every configuration of rows, each configuration's latency the
// median of its timed runs in samples (those the predictor learns from),
// one fit per device and precision, and scores it leave one model out
// where it has at least two models. A configuration of rows the samples
// lack is an error: the per-node pass runs only where a series was timed.
func FitOpCost(rows []profilespec.OperatorRow, samples []profilespec.Sample, cat *catalog.Catalog) (*OpCostResult, error) {
	inf, err := inferenceSamples(samples, cat)
	if err != nil {
		return nil, err
	}
	medians := map[Query]config{}
	for _, c := range configsOf(inf) {
		medians[c.Query] = c
	}
	cs, ops, err := opcost.FromRows(rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profilespec.OperatorsFile, err)
	}
	type group struct{ device, precision string }
	by := map[group][]opcost.Sample{}
	for i, c := range cs {
		q := Query{Device: c.Device, Model: c.Model, Precision: c.Precision, Batch: c.Batch, Threads: c.Threads}
		m, ok := medians[q]
		if !ok {
			return nil, fmt.Errorf("%s: %s %s %s batch %d threads %d: no timed runs in the profile's samples to calibrate its nodes to",
				profilespec.OperatorsFile, c.Device, c.Model, c.Precision, c.Batch, c.Threads)
		}
		g := group{c.Device, c.Precision}
		by[g] = append(by[g], opcost.Sample{Model: c.Model, Batch: c.Batch, Threads: c.Threads, Ops: ops[i],
			Latency: time.Duration(m.median * float64(time.Second))})
	}
	groups := make([]group, 0, len(by))
	for g := range by {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.precision, b.precision))
	})
	res := &OpCostResult{}
	var fits []opcost.Fitted
	for _, g := range groups {
		ss := by[g]
		var models []string
		for _, s := range ss {
			models = append(models, s.Model)
		}
		slices.Sort(models)
		models = slices.Compact(models)
		m, err := opcost.Fit(ss)
		if err != nil {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s %s: %v", g.device, g.precision, err))
			continue
		}
		fits = append(fits, opcost.Fitted{Device: g.device, Precision: g.precision, Models: models, Model: m})
		if len(models) < 2 {
			continue
		}
		sc, err := opcost.LeaveOneModelOut(ss)
		if err != nil {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s %s leave one model out: %v", g.device, g.precision, err))
			continue
		}
		for _, s := range sc.Configs {
			q := Query{Device: g.device, Model: s.Model, Precision: g.precision, Batch: s.Batch, Threads: s.Threads}
			res.CV = append(res.CV, CVRow{Split: trainspec.SplitModel, Fold: int32(slices.Index(models, s.Model)), Candidate: trainspec.CandidateOpCost,
				Device: q.Device, Model: q.Model, Precision: q.Precision, Batch: int32(q.Batch), Threads: int32(q.Threads),
				NSamples: int32(len(medians[q].samples)), MeasuredS: medians[q].median, PredictedS: s.Predicted.Seconds(), HasPrediction: true})
		}
	}
	if len(fits) > 0 {
		res.File = &opcost.File{Format: opcost.Format, Fits: fits}
	}
	res.Scores = scoreRows(res.CV, []string{trainspec.SplitModel}, []string{trainspec.CandidateOpCost})
	return res, nil
}
