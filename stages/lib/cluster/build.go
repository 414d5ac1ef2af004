package cluster

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
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
	// Cost is what a batch of decisions takes on the simulated clock
	// (schedule.learned.cost; see DecisionCost).
	Cost Charge
	// Close frees what the migrators hold once no simulation runs (nil:
	// nothing); Cluster.Close calls it.
	Close func() error
}

// Charge is what the simulated clock charges a batch of the learned
// policy's decisions, and where that comes from.
type Charge struct {
	// Latency is a batch of n decisions' time in seconds at the batch's
	// uniform variate u (sim.Migration.Latency); a fixed charge ignores
	// u.
	Latency func(n int, u float64) float64
	// Source says what Latency charges: schedulespec.CostServing (a
	// draw from the profile's timing of the serving path),
	// CostTightLoop (the profile's tight-loop mlp, for a profile without
	// serving rows) or CostConfigured (schedule.learned.cost's duration).
	Source string
}

// Quantile is the charge of a batch of n decisions at quantile level q:
// what a batch is charged at the median (q = 0.5) or in its tail.
func (ch Charge) Quantile(n int, q float64) float64 { return ch.Latency(n, q) }

// Serve sets how the learned policy's decisions are served. Call it before
// any simulation is built.
func (c *Cluster) Serve(s Serving) { c.serving = s }

// Close frees what serving the learned policy holds (Serving.Close),
// once every simulation of the cluster is over.
func (c *Cluster) Close() error {
	if c.serving.Close == nil {
		return nil
	}
	return c.serving.Close()
}

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
	// DecisionCost is what a batch of decisions takes on the simulated
	// clock; its Latency is nil without a learned policy.
	DecisionCost Charge
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
		st.Serving = policy.Serving{Latency: b.DecisionCost.Latency, Batch: l.Batch, Window: l.Window.Seconds()}
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

// DecisionCost is what a batch of decisions is charged for a value of
// schedule.learned.cost: a fixed duration (CostConfigured), or, for
// schedulespec.CostProfile, the profile's timing of the serving path
// (CostServing), else its tight-loop mlp (CostTightLoop; see
// profiledDecisionCost).
func (c *Cluster) DecisionCost(cost string) (Charge, error) {
	d, fromProfile, err := (schedulespec.Learned{Cost: cost}).LearnedCost()
	if err != nil {
		return Charge{}, err
	}
	if !fromProfile {
		s := d.Seconds()
		return Charge{Latency: func(int, float64) float64 { return s }, Source: schedulespec.CostConfigured}, nil
	}
	if c.profileCost == nil {
		ch, err := c.profiledDecisionCost()
		if err != nil {
			return Charge{}, err
		}
		c.profileCost = &ch
	}
	return *c.profileCost, nil
}

// servingDevice is the profile device the serving path is timed on: the
// schedule stage serves its decisions on this machine's cores, which the
// profile names cpu (profile.device must be cpu for provider cpu).
const servingDevice = "cpu"

// profiledDecisionCost is what schedule.learned.cost: profile charges a
// batch of n decisions at variate u. With the profile's serving rows
// (profile.serving), it is a draw from what the serving path took, the
// code the schedule stage serves the decisions with, timed call by call:
// the curve's quantile u at n decisions (interpolated between the
// measured sizes as any curve is), so the charges have the path's median
// and its tail. A profile without them (measured before the profile timed
// the serving path, or imported) falls back to the profile's mean latency
// of the zoo's mlp, the same 10-64-64-1 network timed in a tight loop, on
// the first measured device's profile device at one thread: a fixed
// charge per size, and the Source says it is that.
func (c *Cluster) profiledDecisionCost() (Charge, error) {
	serving, err := c.table.Serving(servingDevice)
	switch {
	case err == nil:
		return Charge{Latency: serving.Quantile, Source: schedulespec.CostServing}, nil
	case !errors.Is(err, servicetime.ErrNotMeasured):
		return Charge{}, fmt.Errorf("%s: %w", schedulespec.CostProfile, err)
	}
	dev := "cpu"
	for _, d := range c.cfg {
		if d.Kind == schedulespec.KindMeasured {
			dev = d.ProfileDevice
			break
		}
	}
	curve, err := c.table.Curve(dev, "mlp", precisionNames[precFP32], 1)
	if err != nil {
		return Charge{}, fmt.Errorf("%s: the profile has no timing of the serving path (profile.serving), and a decision's cost is then the profile's mlp at one thread on device %s, which it lacks too (measure either, or give a duration): %w",
			schedulespec.CostProfile, dev, err)
	}
	// Tabulated for the batches a decision batch can have.
	costs := make([]float64, 1025)
	for n := 1; n < len(costs); n++ {
		costs[n] = curve.Mean(n)
	}
	return Charge{Latency: func(n int, _ float64) float64 {
		if n < len(costs) {
			return costs[n]
		}
		return curve.Mean(n)
	}, Source: schedulespec.CostTightLoop}, nil
}
