package section

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// Series is one policy's per-job outputs in one replication, in arrival
// (job id) order: what the steady-state and batch-means analyses read.
type Series struct {
	// E2E holds the completed jobs' end-to-end latencies; a rejected job
	// has none (every policy rejects the same jobs, so the series of two
	// policies of one replication line up job by job).
	E2E []float64
	// Missed is 1 for every job that missed its SLO (rejected ones
	// included) and 0 for the others; InteractiveMissed the same over the
	// interactive jobs alone.
	Missed, InteractiveMissed []float64
}

// Analysis is the run's output analysis (package outputanalysis): the
// estimate of every objective of every policy with its interval, and of
// every paired difference, as the report states them. With two or more
// replications each estimate is the mean over the replications with its
// Student t interval, and each difference the paired-t interval over the
// replications (common random numbers pair them); the mean end-to-end
// latency leaves out the initial transient that MSER-5 finds on the
// replications' averaged series (the replication/deletion approach). With
// one replication there is nothing to vary the workload, and the
// intervals are batch means over the one run (the mean latency and the SLO
// violations, whose per-job series batch; the percentiles, goodput and
// makespan get none). The job-level bootstrap the report once used is
// gone: it treats the jobs of one queue as independent, and its intervals
// covered an M/M/c queue's mean wait in as few as 10 of 100 seeds
// (outputanalysis's calibration test).
type Analysis struct {
	// Confidence is the intervals' coverage; Reps the replications.
	Confidence float64
	Reps       int
	// Deletions are each policy's initial transient, deleted from the
	// start of every replication's mean end-to-end latency: MSER-5 on the
	// policy's replications' averaged series (Law's replication/deletion
	// approach). Each policy's mean estimates its own steady state, so
	// each has its own deletion; the comparisons stay paired by
	// replication, which is all that pairing needs. A deletion's OK is
	// false where the policy's runs showed no steady state within their
	// first half (a policy the load overwhelms: its queue grows
	// throughout).
	Deletions []outputanalysis.Deletion
	// Candidates are how many of the analysed runs, the first, are the
	// policies that Best and Ranked choose among (all of them unless the
	// caller says otherwise); the others, a learned policy's ablations,
	// are analysed only to be compared with (Paired).
	Candidates int

	// values[i][metric] holds policy i's value of the metric in each
	// replication (the mean latency after the deletion).
	values []map[string][]float64
	// series are each policy's first replication's: what batch means
	// read when there is one replication (nil otherwise).
	series []Series
}

// Method describes how the intervals were computed, for the report's
// first paragraph.
func (a *Analysis) Method(policies []string) string {
	if a.Reps >= 2 {
		s := fmt.Sprintf("Every interval is a %.0f%% Student-t interval over %d independent replications, each with its own eval workload, draws and placements; "+
			"a difference between two policies is paired by replication (common random numbers)", 100*a.Confidence, a.Reps)
		if lo, hi := a.deletionRange(); hi > 0 {
			s += fmt.Sprintf("; each policy's mean latency leaves out its initial transient, the first %d to %d jobs of every replication as MSER-5 finds it", lo, hi)
		}
		if bad := a.unsteady(policies); len(bad) > 0 {
			s += fmt.Sprintf(" (%s showed no steady state within their runs' first half: their queues grow throughout, and their mean latency is this workload's, not a steady state's)",
				strings.Join(bad, ", "))
		}
		return s + "."
	}
	return fmt.Sprintf("There is one replication (schedule.replications: 1), so the intervals are %.0f%% batch-means intervals over its jobs "+
		"(the batch size chosen by a lag-1 autocorrelation test), for the mean latency and the SLO violations only; "+
		"they vary nothing of the workload, and no best policy is named with stated confidence. Raise schedule.replications for intervals that do.",
		100*a.Confidence)
}

// NewAnalysis analyses the policies' replications: reps[i][k] is policy
// i's summary in replication k, series[i][k] its per-job outputs there.
// Every policy must have the same replications.
func NewAnalysis(reps [][]metrics.Summary, series [][]Series, confidence float64) (*Analysis, error) {
	a := &Analysis{Confidence: confidence, Candidates: len(reps)}
	if len(reps) == 0 {
		return a, nil
	}
	a.Reps = len(reps[0])
	for i := range reps {
		if len(reps[i]) != a.Reps || len(series[i]) != a.Reps {
			return nil, fmt.Errorf("policy %d has %d summaries and %d series for %d replications", i, len(reps[i]), len(series[i]), a.Reps)
		}
	}
	// Each policy's deletion: MSER-5 on its averaged latency series (with
	// one replication, on its one run).
	a.Deletions = make([]outputanalysis.Deletion, len(series))
	for i := range series {
		runs := make([][]float64, a.Reps)
		for k := range runs {
			runs[k] = series[i][k].E2E
		}
		_, a.Deletions[i] = outputanalysis.ReplicationDeletion(runs, confidence)
	}
	a.values = make([]map[string][]float64, len(reps))
	for i := range reps {
		v := map[string][]float64{}
		for k, s := range reps[i] {
			e2e := series[i][k].E2E
			mean := math.NaN()
			if d := a.Deletions[i].Deleted; len(e2e) > d {
				var sum float64
				for _, x := range e2e[d:] {
					sum += x
				}
				mean = sum / float64(len(e2e)-d)
			}
			v[metrics.MetricMeanE2E] = append(v[metrics.MetricMeanE2E], mean)
			v[metrics.MetricP99E2E] = append(v[metrics.MetricP99E2E], s.E2E.P99)
			v[metrics.MetricSLOViolation] = append(v[metrics.MetricSLOViolation], s.SLOViolation)
			v[metrics.MetricInteractiveSLOViolation] = append(v[metrics.MetricInteractiveSLOViolation], ClassOf(s, generatespec.ClassInteractive).SLOViolation)
			v[metrics.MetricGoodput] = append(v[metrics.MetricGoodput], s.Goodput)
			v[metrics.MetricMakespan] = append(v[metrics.MetricMakespan], s.Makespan)
		}
		a.values[i] = v
	}
	if a.Reps == 1 {
		a.series = make([]Series, len(series))
		for i := range series {
			a.series[i] = series[i][0]
		}
	}
	return a, nil
}

// deletionRange is the least and the most jobs a policy's deletion left
// out.
func (a *Analysis) deletionRange() (lo, hi int) {
	for i, d := range a.Deletions[:a.Candidates] {
		if i == 0 || d.Deleted < lo {
			lo = d.Deleted
		}
		hi = max(hi, d.Deleted)
	}
	return lo, hi
}

// unsteady names the policies whose runs showed no steady state.
func (a *Analysis) unsteady(policies []string) []string {
	var out []string
	for i, d := range a.Deletions[:a.Candidates] {
		if !d.OK && i < len(policies) {
			out = append(out, policies[i])
		}
	}
	return out
}

// Values are policy i's values of metric in each replication.
func (a *Analysis) Values(i int, metric string) []float64 { return a.values[i][metric] }

// perJob is the per-job series of metric that batch means read, nil for
// a metric without one; the latencies from job deleted on.
func (s Series) perJob(metric string, deleted int) []float64 {
	switch metric {
	case metrics.MetricMeanE2E:
		return s.E2E[min(deleted, len(s.E2E)):]
	case metrics.MetricSLOViolation:
		return s.Missed
	case metrics.MetricInteractiveSLOViolation:
		return s.InteractiveMissed
	}
	return nil
}

// Estimate is policy i's estimate of metric with its interval.
func (a *Analysis) Estimate(i int, metric string) outputanalysis.Interval {
	v := a.values[i][metric]
	if a.Reps >= 2 {
		return outputanalysis.TInterval(v, a.Confidence)
	}
	if y := a.series[i].perJob(metric, a.Deletions[i].Deleted); y != nil {
		iv, _ := outputanalysis.BatchMeans(y, a.Confidence)
		// Centred on the run's own value: the batches leave out the
		// run's last few jobs when they do not divide it.
		h := iv.HalfWidth()
		iv.Mean, iv.Lo, iv.Hi = v[0], v[0]-h, v[0]+h
		return iv
	}
	return outputanalysis.Interval{Mean: v[0], Lo: math.NaN(), Hi: math.NaN(), N: 1, Method: "one run: none"}
}

// Paired is the difference in metric between policies i and j (i minus
// j), with its paired interval, as a metrics.Difference named for policy
// and other.
func (a *Analysis) Paired(i, j int, metric, policy, other string) metrics.Difference {
	d := metrics.Difference{Policy: policy, Baseline: other, Metric: metric, Lo: math.NaN(), Hi: math.NaN()}
	pi, pj := a.Estimate(i, metric), a.Estimate(j, metric)
	d.PolicyValue, d.BaselineValue = pi.Mean, pj.Mean
	d.Value = pi.Mean - pj.Mean
	switch {
	case a.Reps >= 2:
		iv, err := outputanalysis.PairedTInterval(a.values[i][metric], a.values[j][metric], a.Confidence)
		if err == nil {
			d.Value, d.Lo, d.Hi = iv.Mean, iv.Lo, iv.Hi
		}
	case a.series[i].perJob(metric, 0) != nil:
		// One run: the per-job differences, both series from the later
		// of the two deletions, so that they line up job by job.
		from := max(a.Deletions[i].Deleted, a.Deletions[j].Deleted)
		yi, yj := a.series[i].perJob(metric, from), a.series[j].perJob(metric, from)
		if len(yi) == len(yj) {
			diff := make([]float64, len(yi))
			for k := range yi {
				diff[k] = yi[k] - yj[k]
			}
			iv, _ := outputanalysis.BatchMeans(diff, a.Confidence)
			h := iv.HalfWidth()
			d.Lo, d.Hi = d.Value-h, d.Value+h
		}
	}
	d.Ratio = d.BaselineValue / d.PolicyValue
	if d.PolicyValue == 0 {
		d.Ratio = math.NaN()
	}
	d.Significant = d.Lo > 0 || d.Hi < 0
	return d
}

// Best is multiple comparisons with the best (outputanalysis.MCB) for an
// objective over the replications, with the objective's indifference
// zone. With fewer than two replications it has no verdict.
func (a *Analysis) Best(o Objective, delta float64) (outputanalysis.Comparison, error) {
	values := make([][]float64, a.Candidates)
	for i := range values {
		values[i] = a.values[i][o.Diff]
	}
	obj := outputanalysis.Maximize
	if o.Lower {
		obj = outputanalysis.Minimize
	}
	return outputanalysis.MCB(values, obj, a.Confidence, delta)
}

// Ranked returns the policy indices ordered best first for an objective by
// their estimates (NaN last, ties by listing order).
func (a *Analysis) Ranked(o Objective) []int {
	idx := make([]int, a.Candidates)
	est := make([]float64, a.Candidates)
	for i := range idx {
		idx[i], est[i] = i, a.Estimate(i, o.Diff).Mean
	}
	slices.SortStableFunc(idx, func(x, y int) int { return compareValues(est[x], est[y], o.Lower) })
	return idx
}

// compareValues orders two estimates best first (NaN last).
func compareValues(x, y float64, lower bool) int {
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return 1
	case math.IsNaN(y):
		return -1
	}
	if lower {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(y, x)
}
