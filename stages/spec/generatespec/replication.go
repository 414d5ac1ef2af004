package generatespec

import "strconv"

// EvalJobsFile names the jobs file of replication r (from 1) of the eval
// workload: JobsFile(WorkloadEval) for the first, jobs-eval-rep-<r>.parquet
// for the others. Each replication is a workload of its own, drawn from
// streams of its own (the package doc of generate says how), so that an
// experiment's replications vary the arrivals and the jobs, not only the
// service-time draws. An imported eval workload is one replication: every
// replication simulates its jobs (EvalReplicationFiles).
func EvalJobsFile(r int) string {
	if r <= 1 {
		return JobsFile(WorkloadEval)
	}
	return "jobs-" + WorkloadEval + "-rep-" + strconv.Itoa(r) + ".parquet"
}

// EvalReplicationFiles lists the jobs file each of reps replications of
// the eval workload simulates, from replication 1: a file of its own for
// each of a synthetic workload, and the one imported file for all of an
// imported workload.
func EvalReplicationFiles(c Config, reps int) []string {
	files := make([]string, max(reps, 1))
	for r := range files {
		files[r] = EvalJobsFile(r + 1)
		if c.Eval.Import != "" {
			files[r] = EvalJobsFile(1)
		}
	}
	return files
}

// EvalWorkloads is how many eval workloads the generate stage writes for
// reps replications: reps of a synthetic workload, one of an imported one.
func EvalWorkloads(c Config, reps int) int {
	if c.Eval.Import != "" {
		return 1
	}
	return max(reps, 1)
}

// Keyed is the whole of the configuration the generate stage depends on:
// its own section's keys, and how many replications of the eval workload
// the schedule stage simulates (schedule.replications) under "schedule",
// so that status names it generate.schedule.replications.
type Keyed struct {
	Train               Workload           `koanf:"train"`
	Eval                Workload           `koanf:"eval"`
	Holdout             Workload           `koanf:"holdout"`
	InteractiveFraction float64            `koanf:"interactive_fraction"`
	Models              map[string]float64 `koanf:"models"`
	FP16Fraction        float64            `koanf:"fp16_fraction"`
	FP16BytesFactor     float64            `koanf:"fp16_bytes_factor"`
	Classes             Classes            `koanf:"classes"`
	Schedule            Replicated         `koanf:"schedule"`
}

// Replicated is the part of schedule's section that generate writes for.
type Replicated struct {
	// Replications is schedule.replications.
	Replications int `koanf:"replications"`
}

// KeyedOf is what the generate stage is keyed on in a pipeline whose
// schedule stage simulates reps replications.
func KeyedOf(c Config, reps int) Keyed {
	return Keyed{Train: c.Train, Eval: c.Eval, Holdout: c.Holdout, InteractiveFraction: c.InteractiveFraction, Models: c.Models,
		FP16Fraction: c.FP16Fraction, FP16BytesFactor: c.FP16BytesFactor, Classes: c.Classes,
		Schedule: Replicated{Replications: EvalWorkloads(c, reps)}}
}
