package schedule

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/stages/schedule/policy"
	"github.com/mlsched/mlsched/stages/schedule/sim"
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
func studies(cfg Config, cl *cluster) []*study {
	var out []*study
	base := Unit{Replication: 1, Jobs: cfg.Studies.Jobs, Load: cfg.Load}
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
		if cl.learned != nil {
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
// computed once per predictor and error.
func fillMAPE(ctx context.Context, cl *cluster, ss []*study, seed int64, jobsPath string, load float64, limit int64) error {
	type key struct {
		pred string
		e    float64
	}
	done := map[key]float64{}
	for _, st := range ss {
		if st.name != StudyPredictionError {
			continue
		}
		k := key{st.u.Predictor, st.u.PredictionError}
		v, ok := done[k]
		if !ok {
			simSeed, _ := st.u.seeds(seed)
			var err error
			if v, err = predictionMAPE(ctx, cl, k.pred, k.e, simSeed, jobsPath, load, limit); err != nil {
				return fmt.Errorf("%s: prediction error: %w", st.u, err)
			}
			done[k] = v
		}
		st.row.PredictionMAPE = v
	}
	return nil
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
			if st.u.DecisionCost != "" && s.cl.placement != nil {
				cost, err := s.cl.costFunc(st.u.DecisionCost)
				if err != nil {
					return err
				}
				st.row.DecisionCostS = cost(1)
			}
			return nil
		})
	}
}

// predictionMAPE is how far the predictions of predictor pred, scaled by
// a prediction error e drawn with seed (the simulation's,
// sim.Config.Seed), are from the profile's means over the first limit jobs
// of jobsPath, on every device each job fits: the mean of
// |prediction / mean − 1|.
func predictionMAPE(ctx context.Context, cl *cluster, pred string, e float64, seed uint64, jobsPath string, load float64, limit int64) (float64, error) {
	p, err := cl.predictor(pred)
	if err != nil {
		return 0, err
	}
	r, err := openJobs(jobsPath, load, limit)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var sum float64
	var n int64
	for {
		if r.done%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		j, err := r.next()
		if err != nil {
			return 0, err
		}
		if j == nil {
			break
		}
		need := cl.Memory(j.Model, j.Precision, j.Batch)
		for d, dev := range cl.devices {
			if need > dev.Memory {
				continue
			}
			mean := cl.Predict(d, j.Model, j.Precision, j.Batch)
			v := mean
			if p != nil {
				v = p.Predict(d, j.Model, j.Precision, j.Batch)
			}
			if e > 0 {
				v *= 1 + e*(2*sim.PredictionVariate(seed, j.ID)-1)
			}
			sum += math.Abs(v/mean - 1)
			n++
		}
		r.recycle(j)
	}
	if n == 0 {
		return 0, fmt.Errorf("no job fits the cluster")
	}
	return sum / float64(n), nil
}
