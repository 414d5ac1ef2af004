package section

import (
	"slices"

	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Evaluation is what the stage reads and computes once for every section:
// where the upstream artifacts are, the simulations the schedule artifact
// holds, each policy summarized and compared with the baselines, and what
// the runner says of the run. Sections read it and leave it as it is.
type Evaluation struct {
	// Config is evaluate's section of the configuration.
	Config evaluatespec.Config

	// Schedule is the schedule artifact's directory and Samples the
	// profile's samples file. Train is the train artifact's directory,
	// empty without one.
	Schedule, Samples, Train string
	// Machine is the profile's machine.parquet, how busy the machine was
	// while it measured; the path may name no file (a profile that
	// measured nothing, or an older one), or be empty.
	Machine string
	// ScheduleNotes are the schedule artifact's manifest notes; nil
	// without them.
	ScheduleNotes map[string]string
	// Previous is the metrics.parquet of the run evaluate.compare_to
	// names, and PreviousVersion that run's version; both empty without
	// one.
	Previous, PreviousVersion string

	// Policies are the policy specs simulated, in schedule's order, and
	// Results each one's, at the same index.
	Policies []string
	Results  []Result
	// Ablations are the learned policies' ablations schedule simulated
	// (policy.Spec.Ablation), in its order: analysed beside the policies,
	// after them (Index), to be compared with, and never ranked or
	// tabulated as policies.
	Ablations []string
	// SharedWorkload is true when every replication simulated the same
	// eval workload (an imported one): only the draws and placements
	// varied between them.
	SharedWorkload bool
	// Replications is how many times schedule simulated each policy, and
	// Runs each one's simulations (runs.parquet's rows), replication k at
	// k-1.
	Replications int
	Runs         map[string][]schedulespec.RunRow
	// Devices are cluster.parquet's rows, the cluster as simulated, and
	// Cluster the same as package metrics reads it.
	Devices []schedulespec.ClusterRow
	Cluster metrics.Cluster
	// Bounds are the first replication's workload's lower bounds, and
	// BoundsRows bounds.parquet's rows, one per replication (its load,
	// offered load and arrivals).
	Bounds     metrics.Bounds
	BoundsRows []schedulespec.BoundsRow
	// Analysis holds every interval the report gives, from the
	// replications (or batch means of one).
	Analysis *Analysis

	// Provenance is what the report's last section says of the run.
	Provenance Provenance
}

// Index is a run's index in the Analysis: a policy's in Policies, an
// ablation's after every policy; -1 for a spec not simulated.
func (ev *Evaluation) Index(spec string) int {
	if i := slices.Index(ev.Policies, spec); i >= 0 {
		return i
	}
	if i := slices.Index(ev.Ablations, spec); i >= 0 {
		return len(ev.Policies) + i
	}
	return -1
}

// Style is the chart style of a policy or ablation (chart.Series.Style):
// its Index, so that it looks the same in every chart of the report
// whatever others a chart shows; zero (by position) for a spec not
// simulated.
func (ev *Evaluation) Style(spec string) int { return ev.Index(spec) + 1 }

// Result is what the report has of one policy once its traces are
// released: the summary, its differences from each baseline, and samples
// of its latency distributions for the charts.
type Result struct {
	// Summary is the mean over the replications of their summaries
	// (metrics.MeanSummary): the first's, with one.
	Summary metrics.Summary
	// Reps are every replication's summaries, in order.
	Reps []metrics.Summary
	// Diffs are the differences from each baseline, in the order of
	// evaluate.baselines, in the objectives' metrics (Analysis.Paired).
	Diffs []metrics.Difference
	// The distribution sketches: equally spaced quantiles of the
	// completed jobs' end-to-end latency and wait, and of the
	// interactive jobs' end-to-end latency.
	E2ESketch, WaitSketch, InteractiveSketch []float64
}

// Provenance describes the run for the report's reproducibility section.
type Provenance struct {
	// Versions lists "stage@version" of every artifact the report rests on,
	// its own included.
	Versions []string
	// Config is the configuration the report rests on, one "key = value"
	// line per setting: evaluate's section and each upstream's as its
	// artifact records it.
	Config string
	// Machine describes the profiled machine (the profile's notes).
	Machine map[string]string
	// Commands reproduce the run.
	Commands []string
}

// Diff finds policy i's difference in metric against baseline.
func (ev *Evaluation) Diff(i int, baseline, metric string) (metrics.Difference, bool) {
	for _, x := range ev.Results[i].Diffs {
		if x.Baseline == baseline && x.Metric == metric {
			return x, true
		}
	}
	return metrics.Difference{}, false
}
