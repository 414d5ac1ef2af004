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
// schedule.learned.cost's. All on the first studies.jobs jobs of each of
// the first studies.replications replications, each at its own load
// (loads[r-1]), in that order: policy, condition, replication. A study
// without errors or costs is off.
func studies(cfg Config, cl *cluster.Cluster, loads []float64) []*study {
	var out []*study
	add := func(name string, u Unit) {
		for r := 1; r <= cfg.StudyReplications(); r++ {
			u.Replication, u.Jobs, u.Load = r, cfg.Studies.Jobs, loads[r-1]
			out = append(out, &study{name: name, u: u})
		}
	}
	for _, spec := range cfg.Policies {
		if len(cfg.Studies.PredictionErrors) == 0 {
			break
		}
		ps, err := policy.ParseSpec(spec)
		if err != nil || !ps.Predicts() {
			continue
		}
		at := func(pred string, e float64) {
			add(StudyPredictionError, Unit{Spec: spec, Predictor: pred, PredictionError: e})
		}
		at(PredictorTable, 0)
		for _, e := range cfg.Studies.PredictionErrors {
			at(PredictorTable, e)
		}
		if cl.HasLearnedPredictor() {
			at(PredictorLearned, 0)
		}
	}
	for _, spec := range learnedSpecs(cfg.Policies) {
		if len(cfg.Studies.DecisionCosts) == 0 {
			break
		}
		for _, cost := range append([]string{cfg.Learned.Cost}, cfg.Studies.DecisionCosts...) {
			add(StudyDecisionCost, Unit{Spec: spec, Predictor: cfg.Predictor, DecisionCost: cost})
		}
	}
	return out
}

// fillMAPE sets each prediction-error study's PredictionMAPE: in one
// replication the same for every policy (their simulations share the
// seed of the draws), so computed once per replication, predictor and
// error, all in one pass over the replication's jobs.
func fillMAPE(ctx context.Context, cl *cluster.Cluster, ss []*study, seed int64, reps []replication, limit int64) error {
	for _, rep := range reps {
		var errs []predictionErr
		index := map[predictionErr]int{}
		for _, st := range ss {
			if st.name != StudyPredictionError || st.u.Replication != rep.rep {
				continue
			}
			k := predictionErr{st.u.Predictor, st.u.PredictionError}
			if _, ok := index[k]; !ok {
				index[k] = len(errs)
				errs = append(errs, k)
			}
		}
		if len(errs) == 0 {
			continue
		}
		simSeed, _ := Unit{Replication: rep.rep}.seeds(seed) // every policy's
		mape, err := predictionMAPE(ctx, cl, errs, simSeed, rep.jobs, rep.load, limit)
		if err != nil {
			return rep.errorf(fmt.Errorf("prediction error: %w", err))
		}
		for _, st := range ss {
			if i, ok := index[predictionErr{st.u.Predictor, st.u.PredictionError}]; ok && st.name == StudyPredictionError && st.u.Replication == rep.rep {
				st.row.PredictionMAPE = mape[i]
			}
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

// runStudies adds the studies' simulations to g; each fills its row. A
// study in replication r simulates jobs[r-1] jobs.
func (s *sweeper) runStudies(ctx context.Context, g *errgroup.Group, ss []*study, jobs []int64) {
	for _, st := range ss {
		g.Go(func() error {
			r, err := s.summary(ctx, st.u, jobs[st.u.Replication-1])
			if err != nil {
				return err
			}
			st.row = StudyRow{Study: st.name, Policy: st.u.Spec, Replication: int32(st.u.Replication), Predictor: st.u.Predictor, PredictionError: st.u.PredictionError,
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
