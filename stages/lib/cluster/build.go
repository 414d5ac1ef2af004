package cluster

import (
	"fmt"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Serving is how the learned policy's decisions are served in the
// cluster's simulations: the schedule stage sets it (Serve) once it has
// loaded train's placement network, which this package knows nothing of.
type Serving struct {
	// NewMigrator makes one simulation's migrator: the network behind its
	// batching and cache. Nil: no simulation may run the learned policy.
	NewMigrator func() (sim.Migrator, error)
	// Cost is a batch of n decisions' time on the simulated clock
	// (schedule.learned.cost; see DecisionCost).
	Cost func(n int) float64
}

// Serve sets how the learned policy's decisions are served. Call it before
// any simulation is built.
func (c *Cluster) Serve(s Serving) { c.serving = s }

// Simulation is what varies between the simulations of one cluster: the
// policy, the seeds, the predictions, and how the batches run. The rest
// (the devices, the service model, every option's settings) is the
// cluster's, from schedule's configuration.
type Simulation struct {
	// Spec is the policy spec (policy.ParseSpec).
	Spec string
	// SimSeed keys the ground-truth draws (sim.Config.Seed); PolicySeed
	// seeds the policy's own randomness.
	SimSeed, PolicySeed uint64
	// Predictor is what the policies predict with, a value of
	// schedule.predictor (Cluster.Predictor); PredictionError scales the
	// predictions per job by 1 ± e (sim.Config.PredictionError).
	Predictor       string
	PredictionError float64
	// DecisionCost, if not empty, replaces schedule.learned.cost for a
	// learned policy (the studies' dearer decisions).
	DecisionCost string
	// Slower, if above 0 and not 1, makes every batch take this factor
	// longer: the same draws, every device slower.
	Slower float64
	// OnBatch, if not nil, is told every batch (sim.Config.OnBatch).
	OnBatch func(*sim.BatchRecord) error
	// Machine, if not nil, runs the batches for real on its clock (a real
	// run): a decision then takes the time it takes, not DecisionCost's.
	Machine sim.Machine
}

// Built is one simulation, ready for sim.Run.
type Built struct {
	// Config is the simulator's configuration.
	Config sim.Config
	// Migrator is the learned policy's migrator (Serving.NewMigrator's),
	// nil for other policies. The caller reads its figures after the run,
	// and releases it.
	Migrator sim.Migrator
	// DecisionCost is a batch of n decisions' time on the simulated clock,
	// nil without a learned policy.
	DecisionCost func(n int) float64
}

// Build configures the simulation s on the cluster: the one place where a
// policy spec, its options and schedule's settings become a sim.Config,
// for the schedule stage's simulations, sweep, studies and real runs and
// the train stage's rollouts alike.
func (c *Cluster) Build(s Simulation) (Built, error) {
	ps, err := policy.ParseSpec(s.Spec)
	if err != nil {
		return Built{}, err
	}
	opts := policy.Options{Seed: s.PolicySeed, Weights: c.sched.Dynamic}
	pol, err := policy.New(ps.Name, opts)
	if err != nil {
		return Built{}, err
	}
	pred, err := c.Predictor(s.Predictor)
	if err != nil {
		return Built{}, err
	}
	b := Built{Config: sim.Config{Devices: c.devices, Service: c, Policy: pol, Placement: ps.Placer(opts), Seed: s.SimSeed, OnBatch: s.OnBatch,
		Predictor: pred, PredictionError: s.PredictionError}}
	if s.Slower > 0 && s.Slower != 1 {
		// The simulator divides a batch's time by its device's speed.
		devs := slices.Clone(c.devices)
		for i := range devs {
			devs[i].Speed /= s.Slower
		}
		b.Config.Devices = devs
	}
	cfg := c.sched
	st := policy.Settings{
		Batching:      sim.Batching{MaxBatch: int32(cfg.Batching.MaxBatch), Window: cfg.Batching.Window.Seconds()},
		Split:         sim.Split{MinBatch: int32(cfg.Splitting.MinBatch)},
		MigrationCost: cfg.Migration.Cost.Seconds(),
		MinGain:       cfg.Migration.MinGain.Seconds(),
	}
	if mk := c.serving.NewMigrator; mk != nil {
		b.DecisionCost = c.serving.Cost
		if s.DecisionCost != "" {
			if b.DecisionCost, err = c.DecisionCost(s.DecisionCost); err != nil {
				return Built{}, fmt.Errorf("decision cost: %w", err)
			}
		}
		st.Learned = func() (sim.Migrator, error) {
			m, err := mk()
			if err == nil {
				b.Migrator = m
			}
			return m, err
		}
		l := cfg.Learned
		st.Serving = policy.Serving{Latency: b.DecisionCost, Batch: l.Batch, Window: l.Window.Seconds()}
	}
	if s.Machine != nil {
		st.Serving.Latency = nil
		b.Config.Machine = s.Machine
	}
	if err := ps.Configure(&b.Config, st); err != nil {
		return Built{}, err
	}
	return b, nil
}

// DecisionCost is a batch of n decisions' cost for a value of
// schedule.learned.cost: a fixed duration, or the profile's mlp
// (schedulespec.CostProfile).
func (c *Cluster) DecisionCost(cost string) (func(n int) float64, error) {
	d, fromProfile, err := (schedulespec.Learned{Cost: cost}).LearnedCost()
	if err != nil {
		return nil, err
	}
	if !fromProfile {
		s := d.Seconds()
		return func(int) float64 { return s }, nil
	}
	if c.profileCost == nil {
		if c.profileCost, err = c.profiledDecisionCost(); err != nil {
			return nil, err
		}
	}
	return c.profileCost, nil
}

// profiledDecisionCost is a batch's cost as the profile measured the zoo's
// mlp (the placement network's shape, 10-64-64-1) at its size: the mean
// latency on the first measured device's profile device at one thread,
// interpolated between the measured batch sizes as any curve is.
func (c *Cluster) profiledDecisionCost() (func(n int) float64, error) {
	dev := "cpu"
	for _, d := range c.cfg {
		if d.Kind == schedulespec.KindMeasured {
			dev = d.ProfileDevice
			break
		}
	}
	curve, err := c.table.Curve(dev, "mlp", precisionNames[precFP32], 1)
	if err != nil {
		return nil, fmt.Errorf("%s: a decision's cost is the profile's mlp at one thread on device %s, which it lacks (measure the mlp, or give a duration): %w",
			schedulespec.CostProfile, dev, err)
	}
	// Tabulated for the batches a decision batch can have.
	costs := make([]float64, 1025)
	for n := 1; n < len(costs); n++ {
		costs[n] = curve.Mean(n)
	}
	return func(n int) float64 {
		if n < len(costs) {
			return costs[n]
		}
		return curve.Mean(n)
	}, nil
}
