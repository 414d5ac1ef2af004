package schedulespec

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ident"
	"github.com/mlsched/mlsched/stages/lib/policy"
)

// Device kinds, the values of schedule.cluster[i].kind.
const (
	// KindMeasured is a device whose service times are the profile's, as
	// measured, and whose lanes slow each other down as the profile's
	// contention rows say.
	KindMeasured = "measured"
	// KindDeclared is a device the profile did not measure (an accelerator
	// this machine lacks): its service times are a profiled device's divided
	// by its speed, and its contention is unknown, so taken as none.
	KindDeclared = "declared"
)

// MaxLanes bounds a device's lanes. The simulator keeps per-lane state and
// cluster.parquet lists a contention factor per busy-lane count; beyond a
// thousand concurrent streams a device is better described as several.
const MaxLanes = 1024

// Config is the schedule section of pipeline.yaml.
type Config struct {
	// Policies are simulated, each on the whole eval workload, each into its
	// own subdirectory of the output. An entry is a policy spec: a policy's
	// name, optionally followed by +batch (micro-batching), +split (large
	// jobs divided across devices) and +migrate (idle devices take waiting
	// jobs), in that order, e.g. "edf+batch" or "greedy+split+migrate".
	Policies []string `koanf:"policies"`
	// Cluster lists the devices of the virtual cluster, in the order the
	// simulator numbers them (ties in a policy's choice go to the first).
	Cluster []Device `koanf:"cluster"`
	// Memory is the admission model: what a running batch holds on its
	// device.
	Memory Memory `koanf:"memory"`
	// Load scales the offered load: arrival times are divided by it, so 2
	// offers the same jobs twice as fast. Each job keeps its SLO. It is
	// the load of the main comparison where Utilization is 0.
	Load float64 `koanf:"load"`
	// Utilization, if above 0, sets the main comparison's load as a
	// fraction of the cluster's capacity, as the sweep defines it (the
	// eval workload's arrivals' span over its work's lower bound, both at
	// load 1): each replication's workload is offered at this fraction of
	// what the cluster can do, whatever its arrival rate, so that the same
	// config is the same experiment on a faster or a slower machine. 0
	// keeps Load's absolute factor.
	Utilization float64 `koanf:"utilization"`
	// Batching, Splitting and Migration set the +batch, +split and +migrate
	// options of the policy specs.
	Batching  Batching  `koanf:"batching"`
	Splitting Splitting `koanf:"splitting"`
	Migration Migration `koanf:"migration"`
	// Dynamic weighs the dynamic policy's objectives (policy.Dynamic).
	Dynamic policy.Weights `koanf:"dynamic"`
	// Predictor is where the policies' predicted service times come from:
	// PredictorLearned or PredictorTable. The ground truth is the
	// profile's measured distributions either way.
	Predictor string `koanf:"predictor"`
	// Learned serves the learned policy's placement network.
	Learned Learned `koanf:"learned"`
	// Replications is how many independent replications of the experiment
	// the stage runs: replication k simulates every policy on an eval
	// workload of its own (generate draws one per replication, arrivals
	// and jobs; an imported workload is one sample for all), with its own
	// ground-truth draws and random placements, into <policy>/ for the
	// first and <policy>/rep-<k>/ after; within a replication every policy
	// sees the same jobs and draws (common random numbers). More than one
	// gives evaluate's intervals across replications.
	Replications int `koanf:"replications"`
	// Sweep simulates every policy again at other offered loads, on the
	// first jobs of the workload, and searches each one's capacity.
	Sweep Sweep `koanf:"sweep"`
	// Studies simulate the policies again on the first jobs, at
	// schedule.load, with worse predictions and dearer decisions.
	Studies Studies `koanf:"studies"`
	// Real runs a slice of the eval workload for real on this machine,
	// and simulates the same slice: how far the simulator is from what it
	// simulates.
	Real Real `koanf:"real"`
}

// Real is the real execution: the policies scheduling the first eval jobs
// on this machine's measured devices, each batch run by onnxruntime on the
// wall clock, and the same jobs simulated on the same devices, at each
// offered load. Each real run is a measurement kept in the runner's memo.
type Real struct {
	// Policies run for real; empty runs nothing.
	Policies []string `koanf:"policies"`
	// Loads are offered loads, fractions of the real cluster's capacity as
	// the sweep defines it (over its first sweep.jobs jobs).
	Loads []float64 `koanf:"loads"`
	// Duration is each run's slice: the eval jobs that arrive within it,
	// at the load. The run lasts until the last of them ends.
	Duration time.Duration `koanf:"duration"`
	// Repeats is how many times each policy runs each slice for real:
	// the first run is set against the simulation, and every run beside
	// it shows how far two real runs of the same jobs fall apart.
	Repeats int `koanf:"repeats"`
	// Sensitivity simulates each slice again with every service time
	// 1 - Sensitivity and 1 + Sensitivity times the profile's: how far
	// the simulation moves for a service-time model off by that much
	// either way. 0 does not.
	Sensitivity float64 `koanf:"sensitivity"`
	// Draws simulates each slice with this many seeds of the service-time
	// draws (the sweep's replications 1 to Draws), the first the plain
	// simulation held to the target: how far the simulation moves with
	// its own randomness. 1 simulates only the first.
	Draws int `koanf:"draws"`
}

// MaxRealDuration bounds schedule.real.duration: a real run holds the
// machine for that long at least.
const MaxRealDuration = time.Hour

// MaxRealRepeats bounds schedule.real.repeats.
const MaxRealRepeats = 20

// MaxRealDraws bounds schedule.real.draws.
const MaxRealDraws = 100

// Studies ask how the policies fare when what they rely on gets worse,
// each simulation a memoized Unit on the first Jobs eval jobs at
// schedule.load: every policy that reads predictions, with the profile's
// means scaled per job by 1 ± e for each e of PredictionErrors (and
// exact, and with the learned predictor, to place it among them); every
// learned policy with its decisions costing each of DecisionCosts (besides
// schedule.learned.cost). Each runs in the first Replications
// replications, each with its own workload and draws, every condition
// of one replication on the same jobs and draws: the report's intervals
// on a change are paired across them.
type Studies struct {
	Jobs int64 `koanf:"jobs"`
	// Replications is how many replications the studies run in, the
	// first of schedule.replications (fewer where there are fewer): at
	// least 2 for an interval. StudyReplications gives the number run.
	Replications     int       `koanf:"replications"`
	PredictionErrors []float64 `koanf:"prediction_errors"`
	DecisionCosts    []string  `koanf:"decision_costs"`
}

// Sweep runs the eval workload at several offered loads, each a fraction of
// the cluster's capacity (the lower bound's work over the span of the
// arrivals), and searches for the highest load each policy sustains. Each
// simulation is a Unit kept in the runner's memo, so adding a load or a
// policy simulates only what is new.
type Sweep struct {
	// Loads are the grid's offered loads, ascending; empty leaves the grid
	// out.
	Loads []float64 `koanf:"loads"`
	// Jobs is how many of the eval workload's jobs (the first ones) each
	// point simulates; 0 takes them all.
	Jobs int64 `koanf:"jobs"`
	// Target is the interactive SLO attainment a policy must keep for a
	// load to count as sustained (that of all jobs, for a workload without
	// interactive jobs).
	Target float64 `koanf:"target"`
	// Tolerance is the capacity search's resolution, as a fraction of
	// capacity: the search bisects on load until the highest load found
	// sustained and the lowest found not are at most this far apart. 0
	// turns the search off.
	Tolerance float64 `koanf:"tolerance"`
}

// Learned is how the learned policy's migration decisions are served: the
// train stage's placement network evaluated inside the simulation
// (onnxruntime's decisions, whichever Evaluator computes them), decisions
// batched and cached as a real scheduler's hot path would have them, each
// batch charged its time on the simulated clock.
type Learned struct {
	// Cost is a batch of decisions' time on the simulated clock:
	// CostProfile, a draw from the profile's timing of the serving path
	// (profile.serving: placementnet's calls at the batch's size, keyed
	// to the replication's seed and the batch's ordinal), or, for a
	// profile without it, the profile's mean latency of the zoo's mlp
	// (the same 10-64-64-1 network timed in a tight loop) at the batch's
	// size on the first measured device at one thread; or a duration
	// ("0s" decides at once). ServingRow.CostSource says which was
	// charged.
	Cost string `koanf:"cost"`
	// Evaluator is what computes the network's answers:
	// EvaluatorGo or EvaluatorONNXRuntime. Both make the same decisions,
	// so the simulation is the same either way; they differ in wall-clock
	// time alone, which the manifest's notes report.
	Evaluator string `koanf:"evaluator"`
	// Batch is the most decisions evaluated in one call of the network.
	Batch int `koanf:"batch"`
	// Window is how long the first decision of a batch waits for others;
	// 0 batches the decisions that arise in the same event.
	Window time.Duration `koanf:"window"`
	// Cache is the decision cache.
	Cache Cache `koanf:"cache"`
	// Ablations, when true, runs beside each learned policy in every
	// replication its ablations (policy.Spec.Ablations): the Threshold
	// rule asked exactly as the network is, and the network at no
	// decision cost, so that the report can set the network alone, and
	// its cost alone, against the learned policy (Config.Runs).
	Ablations bool `koanf:"ablations"`
}

// The values of schedule.learned.evaluator.
const (
	// EvaluatorGo computes the network's forward pass in Go
	// (placementnet.GoNetwork), and asks onnxruntime only about the rare
	// decision whose answer lies so close to the threshold that the two
	// could disagree (placementnet.Guarded): onnxruntime's decisions, the
	// stage's files the same to the byte, at about a ninth of the cost a
	// decision. It is the default by measurement: with it the learned
	// policy's whole simulation runs at 0.71 to 0.80 of edf+migrate's
	// jobs/s, against 0.39 to 0.48 with every decision through
	// onnxruntime (BenchmarkLearnedSimulation, docs/benchmarks.md).
	EvaluatorGo = "go"
	// EvaluatorONNXRuntime runs every decision through onnxruntime
	// (placementnet.Network), the serving path the profile times: the
	// manifest's wall-clock serving figures are then onnxruntime's.
	EvaluatorONNXRuntime = "onnxruntime"
)

// Evaluators are the values schedule.learned.evaluator takes.
var Evaluators = []string{EvaluatorGo, EvaluatorONNXRuntime}

// Cache is the learned policy's decision cache: answers kept under the
// network's standardized inputs, quantized.
type Cache struct {
	// Size is how many answers the cache keeps (least recently used
	// first out); 0 turns it off.
	Size int `koanf:"size"`
	// Step is the quantization step, in standard deviations of each
	// feature: inputs within a step share an answer.
	Step float64 `koanf:"step"`
	// Audit evaluates every cached answer exactly too, to count the
	// decisions the cache changed (it costs wall time, not simulated
	// time).
	Audit bool `koanf:"audit"`
}

// CostProfile is schedule.learned.cost's value that takes a decision's
// cost from the profile.
const CostProfile = "profile"

// LearnedCost reads schedule.learned.cost: profile reports true for
// CostProfile, else d is the duration given.
func (l Learned) LearnedCost() (d time.Duration, profile bool, err error) {
	if l.Cost == CostProfile {
		return 0, true, nil
	}
	d, err = time.ParseDuration(l.Cost)
	if err != nil || d < 0 {
		return 0, false, fmt.Errorf("want %q or a duration of 0 or more, like 5ms, got %q", CostProfile, l.Cost)
	}
	return d, false, nil
}

// Bounds of schedule.learned.batch and schedule.learned.cache.size.
const (
	MaxDecisionBatch = 1024
	MaxCacheSize     = 1 << 20
)

// MaxWait bounds the simulated waits and delays a config sets (the
// batching and decision windows, a migration's transit and gain): an
// hour is far beyond any that a real use needs.
const MaxWait = time.Hour

// MaxJobs bounds the job counts schedule takes from a workload
// (sweep.jobs, studies.jobs): the most a workload may hold (generate's
// MaxJobs).
const MaxJobs = 1 << 40

// The predictors a simulation's policies take their predicted service
// times from, the values of schedule.predictor.
const (
	// PredictorLearned is the train stage's predictor (predictor.json),
	// tabulated once per device, model, precision and batch size.
	PredictorLearned = "learned"
	// PredictorTable is the profile's mean latencies: the means of the
	// very distributions the simulator draws from, an oracle.
	PredictorTable = "table"
)

// Predictors are the values schedule.predictor takes.
var Predictors = []string{PredictorLearned, PredictorTable}

// StudyReplications is how many replications the studies run in:
// studies.replications, or schedule.replications where that is fewer.
func (c Config) StudyReplications() int { return min(c.Studies.Replications, c.Replications) }

// MaxReplications bounds schedule.replications.
const MaxReplications = 100

// MaxSweepLoad bounds the offered loads of the sweep and of the capacity
// search, in multiples of the cluster's capacity: far beyond what any
// policy sustains, and far enough to say so. MinSweepLoad bounds them
// below: at a hundredth of capacity nothing ever waits.
const (
	MaxSweepLoad = 16
	MinSweepLoad = 0.01
)

// Bounds of the other floating-point keys, each a range in which the key
// still means something: schedule.load stretches or squeezes the arrivals
// (at 1e-300 they overflowed), a declared device's speed, a device's
// memory (2^30 MiB is a pebibyte) and the dynamic policy's weights.
const (
	MinLoad      = 0.001
	MaxLoad      = 1000
	MinSpeed     = 0.001
	MaxSpeed     = 100_000
	MaxMemoryMiB = 1 << 30
	MaxWeight    = 1000
)

// Batching is micro-batching: compatible waiting jobs (same model,
// precision and class) on a device merge into one batch, which runs for the
// time the profile measured at the merged size.
type Batching struct {
	// MaxBatch is the most samples a merged batch holds (at least 2).
	MaxBatch int `koanf:"max_batch"`
	// Window is how long an idle device holds a batch short of max_batch
	// for more jobs, from the arrival of its oldest waiting job; 0 merges
	// only the jobs already waiting.
	Window time.Duration `koanf:"window"`
}

// Splitting divides large jobs across devices so that the parts are
// predicted to end together.
type Splitting struct {
	// MinBatch is the smallest job split, in samples (at least 2).
	MinBatch int `koanf:"min_batch"`
}

// Migration lets a device with an idle lane and nothing queued take the job
// another device would run next, under a threshold rule.
type Migration struct {
	// Cost is a moved job's time in transit.
	Cost time.Duration `koanf:"cost"`
	// MinGain is how much sooner the move must be predicted to end the job,
	// transit included, for it to happen.
	MinGain time.Duration `koanf:"min_gain"`
}

// Device is one device of the virtual cluster.
type Device struct {
	// Name labels the device in every output; names are unique and follow
	// package ident's rule.
	Name string `koanf:"name"`
	// Kind is KindMeasured or KindDeclared.
	Kind string `koanf:"kind"`
	// ProfileDevice is the profile device whose samples give this device's
	// service times ("cpu" for this machine; an imported profile names its
	// own, under package ident's rule).
	ProfileDevice string `koanf:"profile_device"`
	// Threads is the intra-op thread count of each lane: it selects which
	// of the profile's curves the lanes run on.
	Threads int `koanf:"threads"`
	// Lanes is how many batches the device runs at once.
	Lanes int `koanf:"lanes"`
	// MemoryMiB is the device's capacity in the admission model's MiB.
	MemoryMiB float64 `koanf:"memory_mib"`
	// Speed divides the profiled times: 1 for a measured device (its times
	// are as measured), any positive factor for a declared one.
	Speed float64 `koanf:"speed"`
}

// Memory is the admission (token) model: a batch of b samples of model m
// holds (base_mib[m] + b·per_sample_mib[m]) MiB on its device while it
// runs, times fp16_factor in fp16.
type Memory struct {
	// FP16Factor scales an fp16 batch's memory relative to fp32.
	FP16Factor float64 `koanf:"fp16_factor"`
	// BaseMiB overrides a model's fixed memory; by default it is the
	// catalog's fp32 weight bytes.
	BaseMiB map[string]float64 `koanf:"base_mib"`
	// PerSampleMiB overrides a model's memory per sample; by default it is
	// the catalog's fp32 input and activation bytes per sample.
	PerSampleMiB map[string]float64 `koanf:"per_sample_mib"`
}

// Token is what model m holds on a device in the admission model, in MiB:
// base, plus perSample for each sample of the batch, scaled by FP16Factor
// in fp16. By default they are the catalog's fp32 weight bytes and its
// input and activation bytes per sample.
func (mem Memory) Token(m catalog.Model, fp16 bool) (base, perSample float64) {
	base, ok := mem.BaseMiB[m.Name]
	if !ok {
		base = float64(m.WeightBytes) / (1 << 20)
	}
	perSample, ok = mem.PerSampleMiB[m.Name]
	if !ok {
		perSample = float64(m.InputBytesPerSample+m.ActivationBytesPerSample) / (1 << 20)
	}
	if fp16 {
		base, perSample = base*mem.FP16Factor, perSample*mem.FP16Factor
	}
	return base, perSample
}

// DefaultConfig returns the configuration the pipeline uses when
// pipeline.yaml leaves schedule unset: every policy, on this machine's CPU
// as measured (two single-threaded lanes, 8 GiB) beside a declared
// accelerator of four lanes, each ten times as fast as one CPU thread, and
// 16 GiB, with catalog memory and the workload as generated: an
// accelerator much slower than that leaves every policy missing nearly
// every SLO on a two-core machine (docs/configuration.md has the
// figures).
func DefaultConfig() Config {
	return Config{
		Policies: []string{"fifo", "fifo@backlog", "round_robin", "random", "edf", "batch_aware", "dynamic",
			"edf+batch", "greedy+split", "round_robin+migrate", "edf+migrate", "edf+batch+split+migrate", "learned"},
		Cluster: []Device{
			{Name: "cpu", Kind: KindMeasured, ProfileDevice: "cpu", Threads: 1, Lanes: 2, MemoryMiB: 8192, Speed: 1},
			{Name: "accel", Kind: KindDeclared, ProfileDevice: "cpu", Threads: 1, Lanes: 4, MemoryMiB: 16384, Speed: 10},
		},
		Memory:       Memory{FP16Factor: 0.5, BaseMiB: map[string]float64{}, PerSampleMiB: map[string]float64{}},
		Load:         1,
		Batching:     Batching{MaxBatch: 32, Window: 2 * time.Millisecond},
		Splitting:    Splitting{MinBatch: 32},
		Migration:    Migration{Cost: time.Millisecond},
		Dynamic:      policy.DefaultWeights(),
		Predictor:    PredictorLearned,
		Learned:      Learned{Cost: CostProfile, Evaluator: EvaluatorGo, Batch: 32, Cache: Cache{Size: 4096, Step: 0.1, Audit: true}, Ablations: true},
		Studies:      Studies{Jobs: 10_000, Replications: 5, PredictionErrors: []float64{0.1, 0.3, 0.5}, DecisionCosts: []string{"0s", "5ms"}},
		Real:         Real{Policies: []string{"fifo", "edf", "edf+batch", "learned"}, Loads: []float64{0.8}, Duration: 12 * time.Second, Repeats: 1, Sensitivity: 0.02, Draws: 10},
		Replications: 20,
		Utilization:  0.7,
		Sweep:        Sweep{Loads: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.1}, Jobs: 10_000, Target: 0.99, Tolerance: 0.01},
	}
}

// Validate reports every invalid setting at once, each error starting with
// its full key, e.g. "schedule.cluster[1].lanes: must be in [1, 1024], got 0".
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: "schedule." + key, Msg: fmt.Sprintf(format, args...), Err: config.ErrInvalidValue})
	}
	// in reports whether lo <= v <= hi; NaN is in no range.
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi }

	if len(c.Policies) == 0 {
		bad("policies", "must name at least one policy (%s)", strings.Join(policy.Names(), ", "))
	}
	if !slices.Contains(Predictors, c.Predictor) {
		bad("predictor", "unknown predictor %q; want %s", c.Predictor, strings.Join(Predictors, " or "))
	}
	l := c.Learned
	if _, _, err := l.LearnedCost(); err != nil {
		bad("learned.cost", "%v", err)
	}
	if !slices.Contains(Evaluators, l.Evaluator) {
		bad("learned.evaluator", "unknown evaluator %q; want %s", l.Evaluator, strings.Join(Evaluators, " or "))
	}
	if l.Batch < 1 || l.Batch > MaxDecisionBatch {
		bad("learned.batch", "must be in [1, %d], got %d", MaxDecisionBatch, l.Batch)
	}
	if l.Window < 0 || l.Window > MaxWait {
		bad("learned.window", "must be in [0, %s], got %s", MaxWait, l.Window)
	}
	if l.Cache.Size < 0 || l.Cache.Size > MaxCacheSize {
		bad("learned.cache.size", "must be in [0, %d], got %d", MaxCacheSize, l.Cache.Size)
	}
	if !in(l.Cache.Step, 1e-4, 10) {
		bad("learned.cache.step", "must be in [0.0001, 10] standard deviations, got %v", l.Cache.Step)
	}
	st := c.Studies
	if st.Jobs < 0 || st.Jobs > MaxJobs {
		bad("studies.jobs", "must be in [0, 2^40] (0 takes every eval job), got %d", st.Jobs)
	}
	if on := len(st.PredictionErrors) > 0 || len(st.DecisionCosts) > 0; (on && st.Replications < 1) || st.Replications < 0 || st.Replications > MaxReplications {
		bad("studies.replications", "must be from 1 to %d, got %d", MaxReplications, st.Replications)
	}
	for i, e := range st.PredictionErrors {
		if !in(e, 0.001, 0.99) {
			bad(fmt.Sprintf("studies.prediction_errors[%d]", i), "must be a share in [0.001, 0.99], got %v", e)
		}
	}
	for i, cost := range st.DecisionCosts {
		if _, _, err := (Learned{Cost: cost}).LearnedCost(); err != nil {
			bad(fmt.Sprintf("studies.decision_costs[%d]", i), "%v", err)
		}
	}
	r := c.Real
	for i, p := range r.Policies {
		key := fmt.Sprintf("real.policies[%d]", i)
		if err := checkSpec(p); err != nil {
			bad(key, "%v", err)
		} else if j := slices.Index(r.Policies, p); j < i {
			bad(key, "policy %q is already listed at real.policies[%d]", p, j)
		}
	}
	if len(r.Policies) > 0 && len(r.Loads) == 0 {
		bad("real.loads", "must list at least one load to run the real policies at")
	}
	for i, u := range r.Loads {
		if !in(u, MinSweepLoad, MaxSweepLoad) {
			bad(fmt.Sprintf("real.loads[%d]", i), "must be an offered load in [%v, %d] (a fraction of capacity), got %v", MinSweepLoad, MaxSweepLoad, u)
		} else if j := slices.Index(r.Loads, u); j < i {
			bad(fmt.Sprintf("real.loads[%d]", i), "load %v is already listed at real.loads[%d]", u, j)
		}
	}
	if len(r.Policies) > 0 && (r.Duration < 100*time.Millisecond || r.Duration > MaxRealDuration) {
		bad("real.duration", "must be from 100ms to %s, got %s", MaxRealDuration, r.Duration)
	}
	if len(r.Policies) > 0 && (r.Repeats < 1 || r.Repeats > MaxRealRepeats) {
		bad("real.repeats", "must be from 1 to %d, got %d", MaxRealRepeats, r.Repeats)
	}
	if len(r.Policies) > 0 && (r.Draws < 1 || r.Draws > MaxRealDraws) {
		bad("real.draws", "must be from 1 to %d, got %d", MaxRealDraws, r.Draws)
	}
	if !(r.Sensitivity >= 0 && r.Sensitivity <= 0.5) {
		bad("real.sensitivity", "must be a fraction from 0 to 0.5, got %v", r.Sensitivity)
	}
	for i, p := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		if err := checkSpec(p); err != nil {
			bad(key, "%v", err)
		} else if j := slices.Index(c.Policies, p); j < i {
			// Each policy writes its own directory: a repeat would overwrite it.
			bad(key, "policy %q is already listed at policies[%d]", p, j)
		}
	}
	// The placement network learns when to move a job between devices:
	// on a cluster of one there is none to learn, and train would label
	// no decision at all.
	if len(c.Cluster) == 1 {
		for _, l := range []struct {
			key   string
			specs []string
		}{{"policies", c.Policies}, {"real.policies", r.Policies}} {
			for i, p := range l.specs {
				if sp, err := policy.ParseSpec(p); err == nil && sp.Served() {
					bad(fmt.Sprintf("%s[%d]", l.key, i), "%s needs the placement network, which learns when to move a job between devices, and schedule.cluster has one device (%s): add a device or take %s out",
						p, c.Cluster[0].Name, p)
				}
			}
		}
	}

	if c.Replications < 1 || c.Replications > MaxReplications {
		bad("replications", "must be from 1 to %d, got %d", MaxReplications, c.Replications)
	}
	if len(c.Cluster) == 0 {
		bad("cluster", "must list at least one device")
	}
	for i, d := range c.Cluster {
		p := fmt.Sprintf("cluster[%d].", i)
		switch {
		case d.Name == "":
			bad(p+"name", "must name the device")
		case !ident.Valid(d.Name):
			// The name labels trace rows, charts and the report's tables.
			bad(p+"name", "%v", ident.Check(d.Name))
		case slices.IndexFunc(c.Cluster[:i], func(e Device) bool { return e.Name == d.Name }) >= 0:
			bad(p+"name", "device %q is already listed", d.Name)
		}
		switch d.Kind {
		case KindMeasured:
			if d.Speed != 1 {
				bad(p+"speed", "must be 1 for a measured device (its times are the profile's as measured), got %v; declare the device to scale them", d.Speed)
			}
		case KindDeclared:
			if !in(d.Speed, MinSpeed, MaxSpeed) {
				bad(p+"speed", "must be a factor in [0.001, 100000], got %v", d.Speed)
			}
		default:
			bad(p+"kind", "unknown kind %q; want %s or %s", d.Kind, KindMeasured, KindDeclared)
		}
		if d.ProfileDevice == "" {
			bad(p+"profile_device", "must name the profile device whose samples to use (\"cpu\" for this machine)")
		} else if err := ident.Check(d.ProfileDevice); err != nil {
			bad(p+"profile_device", "%v", err)
		}
		if d.Threads < 1 || d.Threads > MaxLanes {
			bad(p+"threads", "must be in [1, %d], got %d", MaxLanes, d.Threads)
		}
		if d.Lanes < 1 || d.Lanes > MaxLanes {
			bad(p+"lanes", "must be in [1, %d], got %d", MaxLanes, d.Lanes)
		}
		if !in(d.MemoryMiB, 1, MaxMemoryMiB) {
			bad(p+"memory_mib", "must be in [1, 2^30] MiB (1 PiB), got %v", d.MemoryMiB)
		}
	}

	if !in(c.Memory.FP16Factor, 0.1, 1) {
		bad("memory.fp16_factor", "must be in [0.1, 1], got %v", c.Memory.FP16Factor)
	}
	for _, m := range []struct {
		key      string
		perModel map[string]float64
	}{{"memory.base_mib", c.Memory.BaseMiB}, {"memory.per_sample_mib", c.Memory.PerSampleMiB}} {
		for _, name := range slices.Sorted(maps.Keys(m.perModel)) {
			// Whether the model is one the profile knows is checked
			// across sections (package stages).
			v := m.perModel[name]
			if !in(v, 0, MaxMemoryMiB) {
				bad(m.key+"."+name, "must be in [0, 2^30] MiB (1 PiB), got %v", v)
			}
		}
	}

	if !in(c.Load, MinLoad, MaxLoad) {
		bad("load", "must be a factor in [0.001, 1000], got %v", c.Load)
	}
	if c.Utilization != 0 && !in(c.Utilization, MinSweepLoad, MaxSweepLoad) {
		bad("utilization", "must be 0 (schedule.load sets the load) or a fraction of the cluster's capacity in [%v, %v], got %v", MinSweepLoad, MaxSweepLoad, c.Utilization)
	}
	if c.Batching.MaxBatch < 2 || c.Batching.MaxBatch > math.MaxInt32 {
		bad("batching.max_batch", "must be at least 2 samples, got %d", c.Batching.MaxBatch)
	}
	if c.Batching.Window < 0 || c.Batching.Window > MaxWait {
		bad("batching.window", "must be in [0, %s], got %v", MaxWait, c.Batching.Window)
	}
	if c.Splitting.MinBatch < 2 || c.Splitting.MinBatch > math.MaxInt32 {
		bad("splitting.min_batch", "must be at least 2 samples, got %d", c.Splitting.MinBatch)
	}
	if c.Migration.Cost < 0 || c.Migration.Cost > MaxWait {
		bad("migration.cost", "must be in [0, %s], got %v", MaxWait, c.Migration.Cost)
	}
	if c.Migration.MinGain < 0 || c.Migration.MinGain > MaxWait {
		bad("migration.min_gain", "must be in [0, %s], got %v", MaxWait, c.Migration.MinGain)
	}
	for i, l := range c.Sweep.Loads {
		key := fmt.Sprintf("sweep.loads[%d]", i)
		switch {
		case !in(l, MinSweepLoad, MaxSweepLoad):
			bad(key, "must be a fraction of the cluster's capacity in [%v, %v], got %v", MinSweepLoad, MaxSweepLoad, l)
		case i > 0 && !(l > c.Sweep.Loads[i-1]):
			bad(key, "loads must ascend, got %v after %v", l, c.Sweep.Loads[i-1])
		}
	}
	if c.Sweep.Jobs < 0 || c.Sweep.Jobs > MaxJobs {
		bad("sweep.jobs", "must be in [0, 2^40] (0 takes every eval job), got %d", c.Sweep.Jobs)
	}
	if !in(c.Sweep.Target, 0.5, 1) {
		bad("sweep.target", "must be an SLO attainment in [0.5, 1], got %v", c.Sweep.Target)
	}
	if !(c.Sweep.Tolerance == 0 || in(c.Sweep.Tolerance, 0.001, 0.5)) {
		bad("sweep.tolerance", "must be 0 (no capacity search) or a fraction of capacity in [0.001, 0.5], got %v", c.Sweep.Tolerance)
	}
	for _, w := range []struct {
		key string
		v   float64
	}{{"class", c.Dynamic.Class}, {"urgency", c.Dynamic.Urgency}, {"batch", c.Dynamic.Batch}, {"service", c.Dynamic.Service}, {"memory", c.Dynamic.Memory}} {
		if !in(w.v, 0, MaxWeight) {
			bad("dynamic."+w.key, "must be a weight in [0, 1000], got %v", w.v)
		}
	}
	return errors.Join(errs...)
}

// Shards is how many independent parts the schedule stage's load sweep
// splits into: one per policy and replication (each part simulates that
// run's grid and its capacity search), or 0 when the config sweeps
// nothing.
func Shards(cfg Config) int {
	if len(cfg.Sweep.Loads) == 0 && cfg.Sweep.Tolerance == 0 {
		return 0
	}
	return len(cfg.Policies) * cfg.Replications
}

// checkSpec checks a policy spec a user lists: a policy, not a learned
// policy's ablation, which schedule runs by itself.
func checkSpec(spec string) error {
	ps, err := policy.ParseSpec(spec)
	if err == nil && ps.Ablation != "" {
		err = fmt.Errorf("%q is an ablation of a learned policy, which schedule runs by itself beside the learned policy (schedule.learned.ablations); list the learned policy instead", spec)
	}
	return err
}

// Runs are the specs simulated on every replication's eval workload: the
// policies, then, with learned.ablations, each learned policy's
// ablations, in the policies' order. The sweep, the studies and the real
// runs run the policies alone.
func (c Config) Runs() []string {
	out := slices.Clone(c.Policies)
	if !c.Learned.Ablations {
		return out
	}
	for _, p := range c.Policies {
		if ps, err := policy.ParseSpec(p); err == nil {
			for _, a := range ps.Ablations() {
				out = append(out, a.String())
			}
		}
	}
	return out
}
