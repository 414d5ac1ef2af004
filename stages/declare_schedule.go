package stages

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// scheduleStage is the schedule stage: the simulations and the real runs.
var scheduleStage = declare(Schedule, func(c *Config) *schedulespec.Config { return &c.Schedule }, schedulespec.DefaultConfig, declareSchedule)

func declareSchedule(cfg Config, _ Runtime) (pipeline.Stage, error) {
	return pipeline.Stage{
		Name: Schedule,
		// Train's models reach the simulations through the runner, their
		// digests in the key; of generate's output it reads the eval
		// workloads alone, one per replication.
		Deps: []string{Generate, Profile, Train},
		Reads: map[string][]string{
			Generate: slices.Compact(generatespec.EvalReplicationFiles(cfg.Generate, cfg.Schedule.Replications)),
			Train:    trainFiles(cfg.Schedule),
		},
		Config:   cfg.Schedule,
		UsesSeed: true,
		// Its load sweep splits into a part per policy and replication.
		Shards: schedulespec.Shards(cfg.Schedule),
		// The fingerprint covers the simulator, the policies and the
		// service model, which the package imports.
		// Its real runs time this machine: nothing else may run on the
		// cores meanwhile.
		Exclusive: len(cfg.Schedule.Real.Policies) > 0,
		Measures:  len(cfg.Schedule.Real.Policies) > 0,
		Estimate:  scheduleEstimate{cfg.Schedule},
	}, nil
}

// trainFiles are the train artifact's files schedule reads: the
// predictor, and the placement network where a policy asks for it (train
// trains it only then).
func trainFiles(s schedulespec.Config) []string {
	if trainspec.SimulationOf(s).Trains() {
		return []string{trainspec.PredictorFile, trainspec.PlacementFile}
	}
	return []string{trainspec.PredictorFile}
}

// Warnings reports settings that are valid but most likely not meant, as
// *config.Error values naming their keys (config.Attribute names the
// input): a device whose memory holds no job of a model in the mix, and a
// model of the mix whose every job fits on no device and will be rejected.
// The config must be valid.
func (c Config) Warnings() error {
	g, s := c.Generate, c.Schedule
	if len(s.Cluster) == 0 {
		return nil
	}
	// The smallest job of a model: the smallest batch of a class that
	// occurs, in the precision that occurs and holds less.
	batch := math.MaxInt
	if g.InteractiveFraction > 0 {
		batch = min(batch, g.Classes.Interactive.BatchMin)
	}
	if g.InteractiveFraction < 1 {
		batch = min(batch, g.Classes.Batch.BatchMin)
	}
	smallest := func(m catalog.Model) (need float64, prec string) {
		need = math.Inf(1)
		for _, p := range []struct {
			fp16 bool
			name string
			on   bool
		}{{false, "fp32", g.FP16Fraction < 1}, {true, "fp16", g.FP16Fraction > 0}} {
			if !p.on {
				continue
			}
			base, per := s.Memory.Token(m, p.fp16)
			if v := base + float64(batch)*per; v < need {
				need, prec = v, p.name
			}
		}
		return need, prec
	}
	largest := 0
	for i, d := range s.Cluster {
		if d.MemoryMiB > s.Cluster[largest].MemoryMiB {
			largest = i
		}
	}
	var errs []error
	warn := func(key, format string, args ...any) {
		errs = append(errs, &config.Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	type need struct {
		model, prec string
		mib         float64
	}
	var needs []need
	for _, name := range slices.Sorted(maps.Keys(g.Models)) {
		// A model of the user's has figures only once the profile has
		// read its file, which a look at the config does not do.
		m, ok := catalog.Zoo().Lookup(name)
		if !ok || g.Models[name] <= 0 {
			continue
		}
		mib, prec := smallest(m)
		needs = append(needs, need{name, prec, mib})
		if big := s.Cluster[largest]; mib > big.MemoryMiB {
			warn("generate.models."+name, "every %s job will be rejected: the smallest (batch %d, %s) holds %.4g MiB, more than the largest device, %s, holds (schedule.cluster[%d].memory_mib: %v)",
				name, batch, prec, mib, big.Name, largest, big.MemoryMiB)
		}
	}
	for i, d := range s.Cluster {
		var none []string
		least := math.Inf(1)
		for _, n := range needs {
			if n.mib > d.MemoryMiB {
				none = append(none, n.model)
				least = min(least, n.mib)
			}
		}
		if len(none) > 0 {
			warn(fmt.Sprintf("schedule.cluster[%d].memory_mib", i), "%s's %v MiB holds no job of %s (the smallest of them needs %.4g MiB): they run elsewhere or are rejected",
				d.Name, d.MemoryMiB, strings.Join(none, ", "), least)
		}
	}
	return errors.Join(errs...)
}

// checkSpan bounds the span of the arrivals that schedule simulates (and
// train's rollouts, on the train workload): schedule.load divides the
// workloads' arrival times, and beyond generatespec.MaxSpanS times no
// longer resolve a latency. Each key is checked against its own range
// first; this only looks at valid values.
func (c Config) checkSpan() error {
	load := c.Schedule.Load
	if !(load >= schedulespec.MinLoad && load <= schedulespec.MaxLoad) || c.Schedule.Utilization > 0 {
		return nil // a load schedule.utilization sets is checked at run time (cluster.Scan.LoadOf)
	}
	var errs []error
	for _, w := range []struct {
		name string
		w    generatespec.Workload
	}{{generatespec.WorkloadEval, c.Generate.Eval}, {generatespec.WorkloadTrain, c.Generate.Train}} {
		rate, jobs := w.w.Arrival.Rate, w.w.Jobs
		if !(rate >= generatespec.MinRate && rate <= generatespec.MaxRate) || jobs < 1 || jobs > generatespec.MaxJobs {
			continue
		}
		span := float64(jobs) / rate
		if span <= generatespec.MaxSpanS && span/load > generatespec.MaxSpanS {
			errs = append(errs, &config.Error{Key: "schedule.load", Err: config.ErrInvalidValue,
				Msg: fmt.Sprintf("%v stretches the %s workload's %.3g s of arrivals to %.3g s, more than the 1e8 s (about 3 years) within which times resolve a latency; raise it or generate.%s.arrival.rate",
					load, w.name, span, span/load, w.name)})
		}
	}
	return errors.Join(errs...)
}
