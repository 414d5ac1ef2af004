package schedule

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// study is one simulation of a study: its unit and its row, filled in.
type study struct {
	name string // StudyPredictionError or StudyDecisionCost
	u    Unit
	row  StudyRow
}

// studies lists the studies' simulations (schedule.studies): for every
// policy that reads predictions, the profile's means exact and scaled by
// each prediction error, and the learned predictor where train's is
// loaded; for every learned policy, each decision cost and
// schedule.learned.cost's. All on the first studies.jobs jobs at
// schedule.load, replication 1. A study without errors or costs is off.
func studies(cfg Config, cl *cluster.Cluster, load float64) []*study {
	var out []*study
	base := Unit{Replication: 1, Jobs: cfg.Studies.Jobs, Load: load}
	for _, spec := range cfg.Policies {
		if len(cfg.Studies.PredictionErrors) == 0 {
			break
		}
		ps, err := policy.ParseSpec(spec)
		if err != nil || !ps.Predicts() {
			continue
		}
		add := func(pred string, e float64) {
			u := base
			u.Spec, u.Predictor, u.PredictionError = spec, pred, e
			out = append(out, &study{name: StudyPredictionError, u: u})
		}
		add(PredictorTable, 0)
		for _, e := range cfg.Studies.PredictionErrors {
			add(PredictorTable, e)
		}
		if cl.HasLearnedPredictor() {
			add(PredictorLearned, 0)
		}
	}
	for _, spec := range learnedSpecs(cfg.Policies) {
		if len(cfg.Studies.DecisionCosts) == 0 {
			break
		}
		for _, cost := range append([]string{cfg.Learned.Cost}, cfg.Studies.DecisionCosts...) {
			u := base
			u.Spec, u.Predictor, u.DecisionCost = spec, cfg.Predictor, cost
			out = append(out, &study{name: StudyDecisionCost, u: u})
		}
	}
	return out
}

// fillMAPE sets each prediction-error study's PredictionMAPE: the same
// for every policy (their simulations share the seed of the draws), so
// computed once per predictor and error, all in one pass over the jobs.
func fillMAPE(ctx context.Context, cl *cluster.Cluster, ss []*study, seed int64, jobsPath string, load float64, limit int64) error {
	var errs []predictionErr
	index := map[predictionErr]int{}
	for _, st := range ss {
		if st.name != StudyPredictionError {
			continue
		}
		k := predictionErr{st.u.Predictor, st.u.PredictionError}
		if _, ok := index[k]; !ok {
			index[k] = len(errs)
			errs = append(errs, k)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	simSeed, _ := Unit{Replication: 1}.seeds(seed) // every policy's
	mape, err := predictionMAPE(ctx, cl, errs, simSeed, jobsPath, load, limit)
	if err != nil {
		return fmt.Errorf("prediction error: %w", err)
	}
	for _, st := range ss {
		if i, ok := index[predictionErr{st.u.Predictor, st.u.PredictionError}]; ok && st.name == StudyPredictionError {
			st.row.PredictionMAPE = mape[i]
		}
	}
	return nil
}

// predictionErr is a predictor and the error its predictions are scaled
// by (sim.Config.PredictionError).
type predictionErr struct {
	pred string
	e    float64
}

// runStudies adds the studies' simulations to g; each fills its row.
func (s *sweeper) runStudies(ctx context.Context, g *errgroup.Group, ss []*study, jobs int64) {
	for _, st := range ss {
		g.Go(func() error {
			r, err := s.summary(ctx, st.u, jobs)
			if err != nil {
				return err
			}
			st.row = StudyRow{Study: st.name, Policy: st.u.Spec, Predictor: st.u.Predictor, PredictionError: st.u.PredictionError,
				DecisionCost: st.u.DecisionCost, Jobs: r.Jobs, SLOAttainment: r.SLOAttainment,
				InteractiveSLOAttainment: r.InteractiveSLOAttainment, MeanE2ES: r.MeanE2ES, P99E2ES: r.P99E2ES,
				ThroughputJobsPerS: r.ThroughputJobsPerS, GoodputJobsPerS: r.GoodputJobsPerS}
			if st.u.DecisionCost != "" && s.cl.Serves() {
				cost, err := s.cl.DecisionCost(st.u.DecisionCost)
				if err != nil {
					return err
				}
				st.row.DecisionCostS, st.row.DecisionCostSource = cost.Quantile(1, 0.5), cost.Source
			}
			return nil
		})
	}
}

// predictionMAPE is how far the predictions of each predictor, scaled by
// its prediction error drawn with seed (the simulations',
// sim.Config.Seed), are from the profile's means over the first limit jobs
// of jobsPath, on every device each job fits: the mean of
// |prediction / mean − 1|, one per entry of errs.
func predictionMAPE(ctx context.Context, cl *cluster.Cluster, errs []predictionErr, seed uint64, jobsPath string, load float64, limit int64) ([]float64, error) {
	preds := make([]sim.Predictor, len(errs))
	for i, pe := range errs {
		var err error
		if preds[i], err = cl.Predictor(pe.pred); err != nil {
			return nil, err
		}
	}
	r, err := cl.OpenJobs(jobsPath, load, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sums := make([]float64, len(errs))
	var n int64
	for {
		if r.Read()%cluster.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		j, err := r.Next()
		if err != nil {
			return nil, err
		}
		if j == nil {
			break
		}
		need := cl.Memory(j.Model, j.Precision, j.Batch)
		v := sim.PredictionVariate(seed, j.ID)
		for d, dev := range cl.Devices() {
			if need > dev.Memory {
				continue
			}
			mean := cl.Predict(d, j.Model, j.Precision, j.Batch)
			for i, pe := range errs {
				p := mean
				if preds[i] != nil {
					p = preds[i].Predict(d, j.Model, j.Precision, j.Batch)
				}
				if pe.e > 0 {
					p *= 1 + pe.e*(2*v-1)
				}
				sums[i] += math.Abs(p/mean - 1)
			}
			n++
		}
		r.Recycle(j)
	}
	if n == 0 {
		return nil, fmt.Errorf("no job fits the cluster")
	}
	for i := range sums {
		sums[i] /= float64(n)
	}
	return sums, nil
}
