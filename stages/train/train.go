package train

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
	"github.com/mlsched/mlsched/stages/train/label"
	"github.com/mlsched/mlsched/stages/train/placement"
	"github.com/mlsched/mlsched/stages/train/predictorfit"
)

// Config is the train section of pipeline.yaml.
type Config = trainspec.Config

// Inputs are the upstream files the stage reads.
type Inputs struct {
	// Models is the profile's models.parquet: the catalog.
	Models string
	// Samples is the profile's samples.parquet.
	Samples string
	// Jobs is generate's train workload (never the eval one).
	Jobs string
	// Holdout is generate's holdout workload, which the network is
	// scored on and never learns from; empty scores it on the train
	// workload's test blocks alone.
	Holdout string
	// Operators is the profile's operators.parquet, the nodes' times
	// profile.operators measured; empty where the profile has none.
	Operators string
}

// Output is where the stage writes and what it reports.
type Output struct {
	Dir      string
	Metadata map[string]string
	// Notes receives the measured timings, which are not part of the
	// byte-identical artifact.
	Notes map[string]string
	// Progress reports work done out of total.
	Progress func(done, total int64)
}

// Run trains both models and writes PredictorFile, PlacementFile, CVFile,
// DecisionsFile and MetricsFile into out.Dir. The files are a pure function
// of cfg, simulation, seed and the inputs. Where no policy asks for the
// placement network (simulation.Trains), it trains the predictor alone,
// writes neither PlacementFile nor DecisionsFile, and says so in
// MetricsFile (trainspec.SectionTrained): on a cluster of one device, say,
// there is no move to label.
func Run(ctx context.Context, cfg Config, simulation trainspec.Simulation, seed int64, in Inputs, out Output) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("train: invalid config: %w", err)
	}
	note := func(k, v string) {
		if out.Notes != nil {
			out.Notes[k] = v
		}
	}
	total := int64(cfg.Placement.Decisions) + 2 // the predictor and the network count one each
	progress := func(done int64) {
		if out.Progress != nil {
			out.Progress(done, total)
		}
	}
	var rows []trainspec.MetricRow

	// The service-time predictor.
	cat, err := catalog.Read(in.Models)
	if err != nil {
		return fmt.Errorf("train: profile's catalog: %w", err)
	}
	samples, err := parquetio.ReadAll[profilespec.Sample](in.Samples)
	if err != nil {
		return fmt.Errorf("train: read profile samples: %w", err)
	}
	res, err := predictorfit.Train(samples, predictorfit.Options{Seed: derive(seed, 1), Folds: cfg.Predictor.Folds, Kind: cfg.Predictor.Kind,
		Trees: cfg.Predictor.Trees, Catalog: cat})
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	var model bytes.Buffer
	if err := res.Model.Save(&model); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out.Dir, trainspec.PredictorFile), model.Bytes(), 0o644); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	cv := res.CV
	rows = append(rows, predictorRows(res.Scores, res.Importances)...)
	if in.Operators != "" {
		// The per-operator cost model, beside the predictor: what mlsched
		// predict predicts a model never profiled with.
		ops, err := fitOpCost(in.Operators, samples, cat, out.Dir)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		cv = append(cv, ops.CV...)
		rows = append(rows, predictorRows(ops.Scores, nil)...)
		if len(ops.Skipped) > 0 {
			note("opcost_skipped", strings.Join(ops.Skipped, "; "))
		}
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, trainspec.CVFile), cv, out.Metadata); err != nil {
		return fmt.Errorf("train: write %s: %w", trainspec.CVFile, err)
	}
	note("predictor", res.Model.Kind())
	note("predictor_timings", timings(res.Timings))
	progress(1)

	// The placement network, where a policy asks for it.
	if !simulation.Trains() {
		note("placement", "not trained: no policy of schedule.policies or schedule.real.policies is served by it")
		rows = append(rows, trainedRow(false))
		if err := parquetio.WriteFile(filepath.Join(out.Dir, trainspec.MetricsFile), rows, out.Metadata); err != nil {
			return fmt.Errorf("train: write %s: %w", trainspec.MetricsFile, err)
		}
		progress(total)
		return nil
	}
	rows = append(rows, trainedRow(true))

	// The placement network: label, split, train, score, export.
	// The rollouts predict as schedule's simulations will: with the
	// predictor just trained, unless schedule.predictor says table.
	w, err := cluster.Load(ctx, simulation.Schedule(), cat, in.Samples, in.Jobs, 0, res.Model)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	pc := cfg.Placement
	start := time.Now()
	alts := alternatives(pc)
	points, st, err := label.Run(ctx, label.Source{Jobs: w.Jobs, SimConfig: w.SimConfig}, label.Options{
		Decisions: pc.Decisions, Horizon: pc.Horizon.Seconds(), Arrivals: pc.Arrivals, Objective: pc.Objective, Tie: pc.Tie,
		Explore: pc.Explore, Seed: derive(seed, 2), Alternatives: alts, Compare: min(agreementSample, pc.Decisions),
		// Labelling may play out more decisions than it keeps (it
		// subsamples them to Decisions): the bar stops short of the
		// network's step rather than run past 100%.
		Progress: func(done, _ int) { progress(1 + int64(min(done, pc.Decisions))) },
	})
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	labelTime := time.Since(start)
	if len(points) < 2 {
		return fmt.Errorf("train: the train workload gave %d labelled decision points (of %d wanted; %d passes made %d migration decisions, %d near ties): too few to train on; lengthen generate.train or raise schedule.load",
			len(points), pc.Decisions, st.Passes, st.Decisions, st.Ties)
	}
	note("rollouts", fmt.Sprintf("%d decisions played out, %d events in %s (%.0f rollouts/s)", st.Probes, st.Events, labelTime.Round(time.Millisecond), float64(st.Probes)/labelTime.Seconds()))
	split := assign(points, pc.Validation, pc.Test, derive(seed, 3))
	var fit, test scored
	var validation []int // of the fitted points
	for i, p := range points {
		if split[i] == trainspec.SplitTest {
			test.add(p)
			continue
		}
		if split[i] == trainspec.SplitValidation {
			validation = append(validation, len(fit.x))
		}
		fit.add(p)
	}
	if len(test.x) == 0 || len(validation) == 0 || len(validation) == len(fit.x) {
		return fmt.Errorf("train: the %d labelled decision points fall in too few blocks of the workload for a training, a validation and a test split (%d, %d and %d points); raise train.placement.decisions",
			len(points), len(fit.x)-len(validation), len(validation), len(test.x))
	}
	nopts := placement.Options{Seed: derive(seed, 4), Epochs: pc.Network.Epochs, Batch: pc.Network.Batch,
		LearningRate: pc.Network.LearningRate, Patience: pc.Network.Patience, Validation: validation, Scale: warpScales()}
	start = time.Now()
	net, curve, err := placement.Train(fit.x, fit.y, nil, nopts)
	if err != nil {
		return fmt.Errorf("train: placement: %w", err)
	}
	note("network_training", time.Since(start).Round(time.Millisecond).String())
	onnx, err := net.ONNX(sim.FeatureNames[:])
	if err != nil {
		return fmt.Errorf("train: placement: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out.Dir, trainspec.PlacementFile), onnx, 0o644); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	best, err := placement.BestRule(fit.x, fit.y)
	if err != nil {
		return fmt.Errorf("train: placement: %w", err)
	}
	rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionScore, Split: trainspec.SplitTest,
		Candidate: trainspec.ScorerBestFeature, Metric: "rule: " + best.String(), Value: best.Threshold})
	sc := scorers{net: net, best: best, fit: fit, minGain: simulation.Migration.MinGain.Seconds(), regret: trainspec.RegretMetric(pc.Objective)}
	scores, err := sc.score(trainspec.SplitTest, test, derive(seed, 5))
	if err != nil {
		return fmt.Errorf("train: placement: %w", err)
	}
	rows = append(rows, scores...)
	if in.Holdout != "" {
		// The same scorers on decision points of a workload training
		// never touched: another seed and arrival process.
		hw, err := cluster.Load(ctx, simulation.Schedule(), cat, in.Samples, in.Holdout, 0, res.Model)
		if err != nil {
			return fmt.Errorf("train: holdout: %w", err)
		}
		hpoints, hst, err := label.Run(ctx, label.Source{Jobs: hw.Jobs, SimConfig: hw.SimConfig}, label.Options{
			Decisions: holdoutDecisions(pc.Decisions), Horizon: pc.Horizon.Seconds(), Arrivals: pc.Arrivals, Objective: pc.Objective, Tie: pc.Tie,
			Explore: pc.Explore, Seed: derive(seed, 6),
		})
		if err != nil {
			return fmt.Errorf("train: holdout: %w", err)
		}
		if len(hpoints) < 2 {
			return fmt.Errorf("train: the holdout workload gave %d labelled decision points (%d passes made %d migration decisions, %d near ties): too few to score on; lengthen generate.holdout",
				len(hpoints), hst.Passes, hst.Decisions, hst.Ties)
		}
		var holdout scored
		for _, p := range hpoints {
			holdout.add(p)
		}
		scores, err := sc.score(trainspec.SplitHoldout, holdout, derive(seed, 7))
		if err != nil {
			return fmt.Errorf("train: placement on the holdout workload: %w", err)
		}
		rows = append(rows, scores...)
	}
	rows = append(rows, curveRows(curve)...)
	rows = append(rows, labelRows(points, split, st)...)
	agreement, err := agreementRows(pc, alts, points, derive(seed, 8))
	if err != nil {
		return fmt.Errorf("train: label agreement: %w", err)
	}
	rows = append(rows, agreement...)
	progress(total)

	if err := parquetio.WriteFile(filepath.Join(out.Dir, trainspec.DecisionsFile), decisionRows(points, split), featureMeta(out.Metadata)); err != nil {
		return fmt.Errorf("train: write %s: %w", trainspec.DecisionsFile, err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, trainspec.MetricsFile), rows, out.Metadata); err != nil {
		return fmt.Errorf("train: write %s: %w", trainspec.MetricsFile, err)
	}
	return nil
}

// fitOpCost fits the per-operator cost model to the profile's nodes'
// times at path (predictorfit.FitOpCost) and writes it to dir as
// trainspec.OpCostFile, where one could be fitted.
func fitOpCost(path string, samples []profilespec.Sample, cat *catalog.Catalog, dir string) (*predictorfit.OpCostResult, error) {
	rows, err := parquetio.ReadAll[profilespec.OperatorRow](path)
	if err != nil {
		return nil, fmt.Errorf("read profile operators: %w", err)
	}
	res, err := predictorfit.FitOpCost(rows, samples, cat)
	if err != nil {
		return nil, fmt.Errorf("per-operator cost model: %w", err)
	}
	if res.File == nil {
		return res, nil
	}
	var b bytes.Buffer
	if err := res.File.Save(&b); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, trainspec.OpCostFile), b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// trainedRow says whether the placement network was trained
// (trainspec.SectionTrained).
func trainedRow(trained bool) trainspec.MetricRow {
	v := 0.0
	if trained {
		v = 1
	}
	return trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionTrained, Metric: trainspec.MetricTrained, Value: v}
}

// warpScales are the network's input warps (placement.Network.Scale): a
// time in seconds (a feature named *_s) turns from linear to logarithmic at
// a millisecond, a count or a share at 1.
func warpScales() [placement.Inputs]float32 {
	var s [placement.Inputs]float32
	for k, name := range sim.FeatureNames {
		s[k] = 1
		if strings.HasSuffix(name, "_s") {
			s[k] = 1e3
		}
	}
	return s
}

// derive is the seed of one use of the global seed.
func derive(seed int64, use uint64) uint64 {
	return rand.New(rand.NewPCG(uint64(seed), use)).Uint64()
}

// assign gives each point its split by its block of the workload
// (label.Point.Block): neighbouring points share most of their state,
// across passes too, and a random split of single points would test on
// near-copies of training points. A block goes to the test split with
// probability test, else to validation with probability validation, else
// to training.
func assign(points []label.Point, validation, test float64, seed uint64) []string {
	split := make([]string, len(points))
	for i, p := range points {
		u := rand.New(rand.NewPCG(seed, uint64(p.Block))).Float64()
		switch {
		case u < test:
			split[i] = trainspec.SplitTest
		case u < test+validation:
			split[i] = trainspec.SplitValidation
		default:
			split[i] = trainspec.SplitTrain
		}
	}
	return split
}

// The block bootstrap of the placement scores: resamples, and the
// intervals' coverage.
const (
	placementResamples  = 1000
	placementConfidence = 0.95
)

// holdoutDecisions is how many decision points the holdout workload is
// labelled for: a fifth of the training's, enough for intervals a few
// tenths of a point wide.
func holdoutDecisions(decisions int) int { return max(decisions/5, 1) }

// scored are labelled decision points to score on: their inputs, labels,
// the Threshold rule's predicted gains and the forks' two outcomes.
type scored struct {
	x    [][placement.Inputs]float32
	y    []bool
	gain []float64
	out  placement.Outcomes
}

// add appends a labelled point.
func (s *scored) add(p label.Point) {
	s.x, s.y, s.gain = append(s.x, p.Features), append(s.y, p.Migrate), append(s.gain, p.Gain)
	s.out.Stay, s.out.Move, s.out.Block = append(s.out.Stay, p.Stay), append(s.out.Move, p.Move), append(s.out.Block, p.Block)
}

// scorers are the network and the two rules beside it, each fitted once
// to the training points: the Threshold rule's probabilities and the best
// single feature's threshold come from fit.
type scorers struct {
	net     *placement.Network
	best    placement.Rule
	fit     scored
	minGain float64
	// regret is the regret's metric name (trainspec.RegretMetric).
	regret string
}

// score scores the network and both rules on the points of split (the
// train workload's test blocks, or the holdout workload's): accuracy, AUC
// and regret (what wrong decisions cost, from the forks' two outcomes)
// with block-bootstrap intervals (placement.ScoreBlocks), and the rest on
// the points as they are.
func (sc *scorers) score(split string, pts scored, seed uint64) ([]trainspec.MetricRow, error) {
	yTest, regret := pts.y, sc.regret
	preds := []placement.Predictions{
		sc.net.Predictions(trainspec.ScorerNetwork, pts.x),
		thresholdPredictions(sc.fit.gain, sc.fit.y, pts.gain, sc.minGain),
		sc.best.Predictions(trainspec.ScorerBestFeature, pts.x),
	}
	var rows []trainspec.MetricRow
	for _, rule := range preds[1:] {
		// The network against each rule on the same points: the rows
		// are the rule's, metric network_minus_accuracy and so on.
		d, err := placement.DifferenceBlocks(preds[0], rule, yTest, pts.out, placementResamples, placementConfidence, seed)
		if err != nil {
			return nil, err
		}
		for _, m := range []struct {
			name string
			iv   placement.Interval
		}{{trainspec.MetricNetworkMinus + "accuracy", d.Accuracy}, {trainspec.MetricNetworkMinus + regret, d.Regret}} {
			for _, v := range []struct {
				suffix string
				v      float64
			}{{"", m.iv.Value}, {"_lo", m.iv.Lo}, {"_hi", m.iv.Hi}} {
				if !math.IsNaN(v.v) {
					rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionScore, Split: split,
						Candidate: rule.Scorer, Metric: m.name + v.suffix, Value: v.v})
				}
			}
		}
	}
	for _, pr := range preds {
		s, err := placement.Evaluate(pr, yTest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pr.Scorer, err)
		}
		for _, m := range s.Metrics() {
			rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionScore, Split: split,
				Candidate: pr.Scorer, Metric: m.Metric, Value: m.Value})
		}
		bs, err := placement.ScoreBlocks(pr, yTest, pts.out, placementResamples, placementConfidence, seed)
		if err != nil {
			return nil, err
		}
		for _, m := range []struct {
			name string
			v    float64
		}{{regret, bs.Regret.Value}, {"blocks", float64(bs.Blocks)},
			{"accuracy_lo", bs.Accuracy.Lo}, {"accuracy_hi", bs.Accuracy.Hi}, {"auc_lo", bs.AUC.Lo}, {"auc_hi", bs.AUC.Hi},
			{regret + "_lo", bs.Regret.Lo}, {regret + "_hi", bs.Regret.Hi}} {
			if !math.IsNaN(m.v) {
				rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionScore, Split: split,
					Candidate: pr.Scorer, Metric: m.name, Value: m.v})
			}
		}
		for i, b := range s.Calibration {
			for _, v := range []struct {
				name string
				v    float64
			}{{"lo", b.Lo}, {"hi", b.Hi}, {"count", float64(b.Count)}, {"mean_predicted", b.MeanPredicted}, {"observed", b.Observed}} {
				rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionCalibration, Split: split,
					Candidate: pr.Scorer, Metric: v.name, Index: int32(i), Value: v.v})
			}
		}
		for i, p := range s.ROC {
			rows = append(rows,
				trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionROC, Split: split, Candidate: pr.Scorer, Metric: "fpr", Index: int32(i), Value: p.FPR},
				trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionROC, Split: split, Candidate: pr.Scorer, Metric: "tpr", Index: int32(i), Value: p.TPR})
		}
	}
	return rows, nil
}

// thresholdPredictions are the Threshold rule's decisions (gain above
// minGain), with, as a probability, the training points' Laplace-smoothed
// share of moves on each side of it.
func thresholdPredictions(gainFit []float64, yFit []bool, gain []float64, minGain float64) placement.Predictions {
	var n, pos [2]float64
	for i, g := range gainFit {
		k := 0
		if g > minGain {
			k = 1
		}
		n[k]++
		if yFit[i] {
			pos[k]++
		}
	}
	pr := placement.Predictions{Scorer: trainspec.ScorerThreshold}
	for _, g := range gain {
		k := 0
		if g > minGain {
			k = 1
		}
		pr.Score = append(pr.Score, g)
		pr.P = append(pr.P, (pos[k]+1)/(n[k]+2))
		pr.Migrate = append(pr.Migrate, k == 1)
	}
	return pr
}

func curveRows(curve []placement.Epoch) []trainspec.MetricRow {
	var rows []trainspec.MetricRow
	for _, e := range curve {
		best := 0.0
		if e.Best {
			best = 1
		}
		for _, v := range []struct {
			name string
			v    float64
		}{{"train_loss", e.TrainLoss}, {"val_loss", e.ValLoss}, {"val_accuracy", e.ValAccuracy}, {"best", best}} {
			rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionCurve, Metric: v.name, Index: int32(e.Epoch), Value: v.v})
		}
	}
	return rows
}

// labelRows count the points by split and label, and the labeller's work.
func labelRows(points []label.Point, split []string, st label.Stats) []trainspec.MetricRow {
	count := map[string]float64{}
	for i, p := range points {
		count[split[i]+"/points"]++
		if p.Migrate {
			count[split[i]+"/migrate"]++
		}
	}
	var rows []trainspec.MetricRow
	for _, s := range []string{trainspec.SplitTrain, trainspec.SplitValidation, trainspec.SplitTest} {
		rows = append(rows,
			trainspec.MetricRow{Model: trainspec.ModelLabels, Section: trainspec.SectionCounts, Split: s, Metric: "points", Value: count[s+"/points"]},
			trainspec.MetricRow{Model: trainspec.ModelLabels, Section: trainspec.SectionCounts, Split: s, Metric: "migrate", Value: count[s+"/migrate"]})
	}
	for _, v := range []struct {
		name string
		v    int64
	}{{"passes", int64(st.Passes)}, {"decisions", st.Decisions}, {"probes", st.Probes}, {"near_ties", st.Ties}, {"dropped", st.Dropped}, {"events", st.Events}} {
		rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelLabels, Section: trainspec.SectionCounts, Metric: v.name, Value: float64(v.v)})
	}
	return rows
}

func predictorRows(scores []predictorfit.ScoreRow, importances []predictorfit.ImportanceRow) []trainspec.MetricRow {
	var rows []trainspec.MetricRow
	for _, s := range scores {
		rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPredictor, Section: trainspec.SectionScore, Split: s.Split, Candidate: s.Candidate, Metric: s.Metric, Value: s.Value})
	}
	for _, im := range importances {
		rows = append(rows, trainspec.MetricRow{Model: trainspec.ModelPredictor, Section: trainspec.SectionImportance, Candidate: im.Candidate,
			Feature: im.Level + ":" + im.Input, Metric: "log_error_increase", Value: im.LogErrorIncrease})
	}
	return rows
}

// timings writes the predictor's measured timings for the manifest.
func timings(ts []predictorfit.TimingRow) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s/%s: fit %.3gs, predict %.3gs/row", t.Split, t.Candidate, t.TrainS, t.PredictSPerRow)
	}
	return b.String()
}

func decisionRows(points []label.Point, split []string) []trainspec.DecisionRow {
	rows := make([]trainspec.DecisionRow, len(points))
	for i, p := range points {
		rows[i] = trainspec.DecisionRow{Pass: p.Pass, Segment: p.Segment, Block: p.Block, TimeS: p.Time, JobID: p.JobID, From: p.From, To: p.To,
			Features: slices.Clone(p.Features[:]), GainS: p.Gain, Judged: p.Judged, Stay: p.Stay, Move: p.Move,
			Migrate: p.Migrate, Split: split[i]}
	}
	return rows
}

// featureMeta is meta with the feature names, in order, for
// decisions.parquet's footer.
func featureMeta(meta map[string]string) map[string]string {
	m := map[string]string{"features": strings.Join(sim.FeatureNames[:], ",")}
	for k, v := range meta {
		m[k] = v
	}
	return m
}
