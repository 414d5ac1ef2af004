package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Unit is one simulation, the smallest piece of the stage's work: the
// policy spec Spec, with replication Replication's seeds, on the first Jobs
// jobs of the eval workload (all of them when 0), their arrival times
// divided by Load, its policies predicting with Predictor
// (schedule.predictor's values) and a PredictionError
// (sim.Config.PredictionError), and a learned policy's decisions costing
// DecisionCost (schedule.learned.cost's values; empty takes the config's). Everything else it depends on (the
// cluster, the option settings, the seed, the upstream files) is the same
// for every unit of a run, so a unit is named by these fields within the
// stage, and by its key (its KeyLines on the stage's key lines) anywhere:
// that is what the memo keeps it under, and what a remote worker will be
// handed.
type Unit struct {
	Spec            string
	Replication     int
	Jobs            int64
	Load            float64
	Predictor       string
	PredictionError float64
	DecisionCost    string
}

// run is a run of the config: a policy spec's replication. A run
// has its trace and devices files, its points of the sweep's grid and its
// capacity search.
type run struct {
	spec string
	rep  int
}

// at is the run's point of the sweep at offered load u.
func (r run) at(u float64) pointOf { return pointOf{r.spec, r.rep, u} }

// runsOf lists the runs of cfg's policies in its order: each policy's
// replications in turn, as the sweep's parts (Shard) count them. part, if
// not nil, keeps only that part's runs.
func runsOf(cfg Config, part *Shard) []run {
	return runsOfSpecs(cfg.Policies, cfg.Replications, part)
}

// runsOfSpecs lists the runs of specs, reps replications each, in order.
func runsOfSpecs(specs []string, reps int, part *Shard) []run {
	var out []run
	i := 0
	for _, spec := range specs {
		for k := 1; k <= reps; k++ {
			if part == nil || i%part.Count == part.Index {
				out = append(out, run{spec, k})
			}
			i++
		}
	}
	return out
}

// String names the unit for messages, e.g. "edf+batch at load ×0.75, 50000
// jobs, replication 2".
func (u Unit) String() string {
	jobs := "all jobs"
	if u.Jobs > 0 {
		jobs = fmt.Sprintf("%d jobs", u.Jobs)
	}
	s := fmt.Sprintf("%s at load ×%s, %s, replication %d, %s predictor", u.Spec, strconv.FormatFloat(u.Load, 'g', -1, 64), jobs, u.Replication, u.Predictor)
	if u.PredictionError > 0 {
		s += fmt.Sprintf(" ±%s", strconv.FormatFloat(100*u.PredictionError, 'g', -1, 64)) + "%"
	}
	if u.DecisionCost != "" {
		s += ", decisions costing " + u.DecisionCost
	}
	return s
}

// KeyLines are the unit's own lines of its key, after the stage's: the
// load in the shortest form that reads back as the same float64, so that
// the same simulation always has the same key.
func (u Unit) KeyLines() [][2]string {
	return [][2]string{
		{"spec", u.Spec},
		{"replication", strconv.Itoa(u.Replication)},
		{"jobs", strconv.FormatInt(u.Jobs, 10)},
		{"load", strconv.FormatFloat(u.Load, 'g', -1, 64)},
		{"predictor", u.Predictor},
		{"prediction_error", strconv.FormatFloat(u.PredictionError, 'g', -1, 64)},
		{"decision_cost", u.DecisionCost},
	}
}

// seeds derives the two seeds of the unit from the global seed: the
// simulator's (ground-truth draws) and the policy's own (random placement).
// Each is the first 8 bytes, little-endian, of
// SHA-256("mlsched/schedule/v2" NUL owner NUL stream NUL ‖ le64(seed)),
// with stream "sim" or "policy", followed by "#k" from the second
// replication on. The simulator's owner is "" for every policy, so all
// policies of a replication share their ground-truth draws (common random
// numbers, see sim.Variate); the policy's owner is the policy, so each
// random policy has its own stream. Adding a policy or a replication
// changes no other's trace, and the first replication is the one a single
// run gives. Neither depends on the jobs or the load: a sweep point draws
// as the full run does.
func (u Unit) seeds(global int64) (simSeed, policySeed uint64) {
	derive := func(owner, stream string) uint64 {
		if u.Replication > 1 {
			stream += fmt.Sprintf("#%d", u.Replication)
		}
		h := sha256.New()
		h.Write([]byte("mlsched/schedule/v2\x00" + owner + "\x00" + stream + "\x00"))
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(global))
		h.Write(b[:])
		return binary.LittleEndian.Uint64(h.Sum(nil)[:8])
	}
	return derive("", "sim"), derive(u.Spec, "policy")
}
