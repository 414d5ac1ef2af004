package cluster

import (
	"context"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Workload is a jobs file loaded whole for simulations that the schedule
// stage does not run itself (the train stage's rollouts), on the cluster
// schedule would run it on: the same devices, service model and policy
// settings, so that what those simulations learn holds in schedule's.
type Workload struct {
	// Cluster is the cluster the jobs run on.
	Cluster *Cluster
	// Jobs are the workload's jobs in arrival order, arrival times divided
	// by the load. A simulation must run copies: the simulator keeps its
	// bookkeeping in the jobs it is given.
	Jobs []sim.Job
	// Bounds are the jobs' lower bounds on the cluster.
	Bounds schedulespec.BoundsRow
	// predictor is schedule.predictor.
	predictor string
}

// Load reads the profile samples in samplesPath and the first limit jobs
// of jobsPath (all of them for limit 0), with arrival times divided by the
// load cfg sets for them (Scan.LoadOf), for cfg's cluster, whose policies predict with model when
// cfg.Predictor is schedulespec.PredictorLearned. It fails as the schedule
// stage would: on a damaged file, a job the cluster has no curve for, or
// one the model cannot predict.
func Load(ctx context.Context, cfg schedulespec.Config, cat *catalog.Catalog, samplesPath, jobsPath string, limit int64, model *predictor.Model) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("schedule: invalid config: %w", err)
	}
	cl, err := Open(cfg, cat, samplesPath)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if cfg.Predictor == schedulespec.PredictorLearned {
		if model == nil {
			return nil, fmt.Errorf("schedule: predictor %s and no model", schedulespec.PredictorLearned)
		}
		cl.UsePredictor(model)
	}
	sc, err := cl.Scan(ctx, jobsPath, limit)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	load, _, err := sc.LoadOf(cfg)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	bounds := sc.Bounds(load)
	r, err := cl.OpenJobs(jobsPath, load, limit)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	defer r.Close()
	w := &Workload{Cluster: cl, Jobs: make([]sim.Job, 0, bounds.Jobs), Bounds: bounds, predictor: cfg.Predictor}
	for {
		j, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("schedule: %w", err)
		}
		if j == nil {
			break
		}
		w.Jobs = append(w.Jobs, *j)
		r.Recycle(j)
	}
	return w, nil
}

// SimConfig is the simulation of the policy spec on the workload as the
// schedule stage configures it (Cluster.Build): the cluster's devices and
// service model, the policy seeded with policySeed, and the spec's options
// with schedule's settings. simSeed keys the ground-truth draws
// (sim.Config.Seed).
func (w *Workload) SimConfig(spec string, simSeed, policySeed uint64) (sim.Config, error) {
	b, err := w.Cluster.Build(Simulation{Spec: spec, SimSeed: simSeed, PolicySeed: policySeed, Predictor: w.predictor})
	if err != nil {
		return sim.Config{}, fmt.Errorf("schedule: %w", err)
	}
	return b.Config, nil
}

// LoadOf is the schedule load at which cfg offers the scanned jobs:
// cfg.Utilization of the cluster's capacity for them where it is set
// (perUnit is then the Scan's Capacity), cfg.Load otherwise (perUnit 0). A
// load that would stretch the arrivals beyond what a time resolves is an
// error naming the key.
func (sc *Scan) LoadOf(cfg schedulespec.Config) (load, perUnit float64, err error) {
	if cfg.Utilization == 0 {
		return cfg.Load, 0, nil
	}
	perUnit, err = sc.Capacity()
	if err != nil {
		return 0, 0, err
	}
	load = cfg.Utilization * perUnit
	if !(load >= schedulespec.MinLoad && load <= schedulespec.MaxLoad) || sc.lastArrival/load > generatespec.MaxSpanS {
		return 0, 0, fmt.Errorf("schedule.utilization %v of this cluster's capacity for %s is a load factor of %.3g, outside [%v, %v] or stretching the arrivals beyond %g s: the workload's rate and the cluster's capacity are too far apart",
			cfg.Utilization, sc.name, load, schedulespec.MinLoad, schedulespec.MaxLoad, generatespec.MaxSpanS)
	}
	return load, perUnit, nil
}
