// Package trainspec declares the train stage's configuration and its
// files, without its code: the command line links it to read, validate and
// key the configuration, and the stage's code (package train, with golearn
// and the simulator) runs in the worker.
package trainspec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Output file names.
const (
	// PredictorFile is the service-time predictor, a self-describing JSON
	// model (package predictor) that schedule loads without retraining.
	PredictorFile = "predictor.json"
	// PlacementFile is the migration network as ONNX.
	PlacementFile = "placement.onnx"
	// PlacementThreshold is the probability above which PlacementFile's
	// output says migrate: what train scores it at and schedule serves it
	// with.
	PlacementThreshold = 0.5
	// CVFile holds every held-out configuration of every split, with its
	// measured median and each candidate's prediction.
	CVFile = "cv.parquet"
	// DecisionsFile holds every labelled decision point: its ten features,
	// both branches' outcomes, its label and its split.
	DecisionsFile = "decisions.parquet"
	// MetricsFile holds every score of both models in long form.
	MetricsFile = "metrics.parquet"
	// OpCostFile is the per-operator cost model (package opcost), fitted
	// where the profile timed each node (profile.operators); absent
	// otherwise. mlsched predict reads it.
	OpCostFile = "opcost.json"
)

// The predictor kinds, the values of train.predictor.kind: KindAuto picks
// the candidate with the lowest grouped k-fold MAPE.
const (
	KindAuto      = "auto"
	KindTable     = "table"
	KindCART      = "cart"
	KindForest    = "forest"
	KindLogLinear = "loglinear"
	KindBoost     = "boost"
	KindAffine    = "affine"
)

// Kinds are the values train.predictor.kind takes.
var Kinds = []string{KindAuto, KindTable, KindCART, KindForest, KindLogLinear, KindBoost, KindAffine}

// The objectives a rollout's branches are compared on, the values of
// train.placement.objective.
const (
	// ObjectiveLatency is the summed end-to-end latency of the jobs judged:
	// those in the system at the decision, and with
	// train.placement.arrivals those arriving before the horizon.
	ObjectiveLatency = "latency"
	// ObjectiveSLO is the number of those jobs that miss their SLO.
	ObjectiveSLO = "slo"
)

// The placement scorers' regret, in metrics.parquet: named by the
// labelling objective's unit, seconds of latency summed over the jobs
// judged, or their missed SLOs.
const (
	MetricRegretS      = "regret_s"
	MetricRegretMisses = "regret_misses"
)

// Config is the train section of pipeline.yaml.
type Config struct {
	// Predictor sets the service-time predictor.
	Predictor Predictor `koanf:"predictor"`
	// Placement sets the migration network and the rollouts that label
	// its examples.
	Placement Placement `koanf:"placement"`
}

// Simulation is the part of schedule's section that the train stage's
// rollouts simulate with: the cluster, its admission model, the offered
// load and the migration settings of the behaviour policy (edf+migrate).
// The stage is keyed on it with its own section, so editing anything else
// of schedule's (its policies, batching, the sweep) does not retrain.
type Simulation struct {
	Cluster []schedulespec.Device `koanf:"cluster"`
	Memory  schedulespec.Memory   `koanf:"memory"`
	Load    float64               `koanf:"load"`
	// Utilization offers the train workload at this fraction of the
	// cluster's capacity for it, as schedule's does the eval workload.
	Utilization float64                `koanf:"utilization"`
	Migration   schedulespec.Migration `koanf:"migration"`
	// Predictor is what the rollouts' policies predict with, as the
	// schedule stage's will: the migration features then carry the same
	// predictions in training as in the simulations that serve them.
	Predictor string `koanf:"predictor"`
	// Network is the first policy, of schedule.policies and then
	// schedule.real.policies, that the placement network serves (a
	// learned one); empty when none asks for the network, and train
	// then trains the predictor alone. Only whether one does matters:
	// adding a second learned policy, or any other, retrains nothing.
	Network string `koanf:"network"`
}

// Trains reports whether some policy asks for the placement network.
func (sim Simulation) Trains() bool { return sim.Network != "" }

// SimulationOf is the part of s that the rollouts simulate with.
func SimulationOf(s schedulespec.Config) Simulation {
	network := ""
	for _, p := range slices.Concat(s.Policies, s.Real.Policies) {
		if sp, err := policy.ParseSpec(p); err == nil && sp.Served() {
			network = p
			break
		}
	}
	return Simulation{Cluster: s.Cluster, Memory: s.Memory, Load: s.Load, Utilization: s.Utilization, Migration: s.Migration, Predictor: s.Predictor,
		Network: network}
}

// Schedule is a schedule section with sim's settings and every other key
// at its default: what the rollouts configure their simulations from, so
// that they cannot depend on a key the stage is not keyed on.
func (sim Simulation) Schedule() schedulespec.Config {
	s := schedulespec.DefaultConfig()
	s.Cluster, s.Memory, s.Load, s.Utilization, s.Migration, s.Predictor = sim.Cluster, sim.Memory, sim.Load, sim.Utilization, sim.Migration, sim.Predictor
	return s
}

// Keyed is the whole of the configuration the train stage depends on: its
// own section's keys, and schedule's that its rollouts simulate with under
// "schedule", so that status names them train.placement.decisions and
// train.schedule.load.
type Keyed struct {
	Predictor Predictor  `koanf:"predictor"`
	Placement Placement  `koanf:"placement"`
	Schedule  Simulation `koanf:"schedule"`
}

// KeyedOf is what the train stage is keyed on in cfg's pipeline: its own
// section and sched's simulation settings.
func KeyedOf(cfg Config, sched schedulespec.Config) Keyed {
	return Keyed{Predictor: cfg.Predictor, Placement: cfg.Placement, Schedule: SimulationOf(sched)}
}

// Predictor sets the service-time predictor's candidates and how they are
// judged.
type Predictor struct {
	// Kind is the candidate kept: KindAuto for the best by grouped k-fold
	// MAPE, or one named.
	Kind string `koanf:"kind"`
	// Folds is k, for the grouped k-fold split.
	Folds int `koanf:"folds"`
	// Trees is the bagged forest's size.
	Trees int `koanf:"trees"`
}

// Placement sets how decision points are labelled by rollouts on the train
// workload and how the network learns from them.
type Placement struct {
	// Decisions is how many labelled decision points to collect (near
	// ties are dropped and do not count).
	Decisions int `koanf:"decisions"`
	// Horizon bounds each branch of a rollout, in simulated time from
	// the decision.
	Horizon time.Duration `koanf:"horizon"`
	// Arrivals judges the branches on the jobs that arrive after the
	// decision and no later than the horizon as well as on those in the
	// system at it (package label's doc).
	Arrivals bool `koanf:"arrivals"`
	// Objective is what the branches are compared on.
	Objective string `koanf:"objective"`
	// Tie is the relative difference between the branches' objectives
	// under which a decision point is a near tie, and dropped.
	Tie float64 `koanf:"tie"`
	// Explore is the share of the behaviour policy's migration decisions
	// taken at random rather than by the threshold rule, so that the
	// states it visits include the aftermath of moves the rule would not
	// make.
	Explore float64 `koanf:"explore"`
	// Validation and Test are the shares of the decision points held out
	// for early stopping and for the scores.
	Validation float64 `koanf:"validation"`
	Test       float64 `koanf:"test"`
	// Network sets the training.
	Network Network `koanf:"network"`
}

// Network sets the network's training. Its shape is fixed: ten inputs, two
// hidden layers of 64 with ReLU, one sigmoid output.
type Network struct {
	// Epochs bounds the passes over the training points.
	Epochs int `koanf:"epochs"`
	// Batch is the mini-batch size.
	Batch int `koanf:"batch"`
	// LearningRate is Adam's step size.
	LearningRate float64 `koanf:"learning_rate"`
	// Patience is how many epochs without a better validation loss end
	// the training (the best epoch's weights are kept).
	Patience int `koanf:"patience"`
}

// MaxDecisions bounds train.placement.decisions.
const MaxDecisions = 10_000_000

// DefaultConfig returns the train section's defaults.
func DefaultConfig() Config {
	return Config{
		Predictor: Predictor{Kind: KindAuto, Folds: 5, Trees: 50},
		Placement: Placement{
			Decisions: 50_000,
			// Judged on later arrivals too, a decision's labels hardly
			// change past a second (docs/learning.md), and each branch
			// costs about its horizon.
			Horizon:   time.Second,
			Arrivals:  true,
			Objective: ObjectiveLatency,
			Tie:       0.001,
			Explore:   0.1,
			// The rest are the network's held-out points.
			Validation: 0.15,
			Test:       0.15,
			Network:    Network{Epochs: 100, Batch: 256, LearningRate: 1e-3, Patience: 10},
		},
	}
}

// Validate reports every invalid setting at once, each error starting with
// its full key, e.g. "train.predictor.folds: must be from 2 to 20, got 1".
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: "train." + key, Msg: fmt.Sprintf(format, args...), Err: config.ErrInvalidValue})
	}
	p := c.Predictor
	if !slices.Contains(Kinds, p.Kind) {
		bad("predictor.kind", "unknown kind %q; want %s", p.Kind, strings.Join(Kinds, ", "))
	}
	if p.Folds < 2 || p.Folds > 20 {
		bad("predictor.folds", "must be from 2 to 20, got %d", p.Folds)
	}
	if p.Trees < 1 || p.Trees > 1000 {
		bad("predictor.trees", "must be from 1 to 1000, got %d", p.Trees)
	}
	m := c.Placement
	if m.Decisions < 100 || m.Decisions > MaxDecisions {
		bad("placement.decisions", "must be from 100 to %d, got %d", MaxDecisions, m.Decisions)
	}
	if m.Horizon <= 0 || m.Horizon > time.Hour {
		bad("placement.horizon", "must be positive and at most 1h of simulated time, got %v", m.Horizon)
	}
	if m.Objective != ObjectiveLatency && m.Objective != ObjectiveSLO {
		bad("placement.objective", "unknown objective %q; want %s or %s", m.Objective, ObjectiveLatency, ObjectiveSLO)
	}
	if !(m.Tie >= 0 && m.Tie <= 0.5) {
		bad("placement.tie", "must be a relative difference in [0, 0.5], got %v", m.Tie)
	}
	if !(m.Explore >= 0 && m.Explore <= 1) {
		bad("placement.explore", "must be in [0, 1], got %v", m.Explore)
	}
	for _, s := range []struct {
		key string
		v   float64
	}{{"placement.validation", m.Validation}, {"placement.test", m.Test}} {
		if !(s.v >= 0.01 && s.v <= 0.45) {
			bad(s.key, "must be a share in [0.01, 0.45], got %v", s.v)
		}
	}
	n := m.Network
	if n.Epochs < 1 || n.Epochs > 10_000 {
		bad("placement.network.epochs", "must be from 1 to 10000, got %d", n.Epochs)
	}
	if n.Batch < 1 || n.Batch > 65_536 {
		bad("placement.network.batch", "must be from 1 to 65536, got %d", n.Batch)
	}
	if !(n.LearningRate >= 1e-6 && n.LearningRate <= 0.5) {
		bad("placement.network.learning_rate", "must be in [0.000001, 0.5], got %v", n.LearningRate)
	}
	if n.Patience < 1 || n.Patience > 10_000 {
		bad("placement.network.patience", "must be from 1 to 10000 epochs, got %d", n.Patience)
	}
	return errors.Join(errs...)
}

// JudgementName names a way of labelling in metrics.parquet's agreement
// rows: its horizon, and "+arrivals" where the jobs arriving before it
// are judged too ("5s", "5s+arrivals").
func JudgementName(horizon time.Duration, arrivals bool) string {
	if arrivals {
		return horizon.String() + "+arrivals"
	}
	return horizon.String()
}

// RegretMetric is the regret's metric name under objective.
func RegretMetric(objective string) string {
	if objective == ObjectiveSLO {
		return MetricRegretMisses
	}
	return MetricRegretS
}
