package schedule

import (
	"context"
	"fmt"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/profile"
)

// Workload is a jobs file loaded for simulations that the schedule stage
// does not run itself (the train stage's rollouts), on the cluster schedule
// would run it on: the same devices, service model and policy settings, so
// that what those simulations learn holds in schedule's.
type Workload struct {
	cfg Config
	cl  *cluster
	// Jobs are the workload's jobs in arrival order, arrival times divided
	// by the load. A simulation must run copies: the simulator keeps its
	// bookkeeping in the jobs it is given.
	Jobs []sim.Job
	// Bounds are the jobs' lower bounds on cfg's cluster.
	Bounds BoundsRow
}

// LoadWorkload reads the profile samples in samplesPath and the first
// limit jobs of jobsPath (all of them for limit 0), with arrival times
// divided by cfg.Load, for cfg's cluster, whose policies predict with
// model when cfg.Predictor is PredictorLearned. It fails as the schedule
// stage would: on a damaged file, a job the cluster has no curve for, or
// one the model cannot predict.
func LoadWorkload(ctx context.Context, cfg Config, samplesPath, jobsPath string, limit int64, model *predictor.Model) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("schedule: invalid config: %w", err)
	}
	samples, err := parquetio.ReadAll[profile.Sample](samplesPath)
	if err != nil {
		return nil, fmt.Errorf("schedule: read profile samples: %w", err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	cl, err := newCluster(cfg, table)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if cfg.Predictor == PredictorLearned {
		if model == nil {
			return nil, fmt.Errorf("schedule: predictor %s and no model", PredictorLearned)
		}
		cl.learned = newLearned(model, cfg.Cluster)
	}
	bounds, err := computeBounds(ctx, cl, jobsPath, cfg.Load, limit)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	r, err := openJobs(jobsPath, cfg.Load, limit)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	defer r.Close()
	w := &Workload{cfg: cfg, cl: cl, Jobs: make([]sim.Job, 0, bounds.Jobs), Bounds: bounds}
	for {
		j, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("schedule: %w", err)
		}
		if j == nil {
			break
		}
		w.Jobs = append(w.Jobs, *j)
		r.recycle(j)
	}
	return w, nil
}

// SimConfig is the simulation of the policy spec on the workload as the
// schedule stage configures it: the cluster's devices and service model,
// the policy seeded with policySeed, and the spec's options with schedule's
// settings. simSeed keys the ground-truth draws (sim.Config.Seed).
func (w *Workload) SimConfig(spec string, simSeed, policySeed uint64) (sim.Config, error) {
	ps, err := policy.ParseSpec(spec)
	if err != nil {
		return sim.Config{}, fmt.Errorf("schedule: %w", err)
	}
	pol, err := policy.New(ps.Name, options(w.cfg, policySeed))
	if err != nil {
		return sim.Config{}, fmt.Errorf("schedule: %w", err)
	}
	pred, err := w.cl.predictor(w.cfg.Predictor)
	if err != nil {
		return sim.Config{}, fmt.Errorf("schedule: %w", err)
	}
	sc := sim.Config{Devices: w.cl.devices, Service: w.cl, Policy: pol, Seed: simSeed, Predictor: pred}
	if err := ps.Configure(&sc, settings(w.cfg, w.cl)); err != nil {
		return sim.Config{}, fmt.Errorf("schedule: %w", err)
	}
	return sc, nil
}
