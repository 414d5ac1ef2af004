package metrics

import (
	"fmt"
	"math"
)

// The metrics Compare reports, by Difference.Metric. All but goodput are
// lower-is-better.
const (
	MetricMeanE2E                 = "mean_e2e_s"
	MetricP99E2E                  = "p99_e2e_s"
	MetricSLOViolation            = "slo_violation"
	MetricInteractiveSLOViolation = "interactive_slo_violation"
	MetricGoodput                 = "goodput"
	MetricMakespan                = "makespan_s"
)

// pairedMetrics are the metrics with a paired-bootstrap interval, in the
// order Compare reports them; the makespan comes last.
var pairedMetrics = [...]string{MetricMeanE2E, MetricP99E2E, MetricSLOViolation, MetricInteractiveSLOViolation, MetricGoodput}

// Difference is one metric's difference between a policy and a baseline
// run on the same jobs.
type Difference struct {
	// Policy and Baseline are the two traces' policies, Metric one of the
	// Metric constants.
	Policy, Baseline, Metric string
	// PolicyValue and BaselineValue are the metric on each trace, as
	// Summarize computes it.
	PolicyValue, BaselineValue float64
	// Value is PolicyValue - BaselineValue, and [Lo, Hi] its
	// paired-bootstrap percentile interval.
	Value, Lo, Hi float64
	// Ratio is BaselineValue / PolicyValue: above 1 when the policy is
	// better at a lower-is-better metric (a speedup), NaN when
	// PolicyValue is 0.
	Ratio float64
	// Significant is true when the interval leaves out 0: the two differ
	// at the bootstrap's confidence. It is false when the interval is NaN.
	Significant bool
}

// Compare returns the differences between policy and baseline, two traces
// of the same jobs, in the metrics MetricMeanE2E, MetricP99E2E,
// MetricSLOViolation, MetricInteractiveSLOViolation, MetricGoodput and
// MetricMakespan, in that order.
//
// The intervals come from a paired bootstrap: each replicate resamples the
// job indices once and computes each metric on both traces with the same
// indices, so the variation the two share (which jobs there happened to
// be) cancels. A resample's goodput divides its SLO-met jobs by the full
// run's makespan. The makespan has no interval: a single run has no
// sampling distribution for it, so Lo = Hi = Value and Significant is
// Value != 0; intervals across replicated runs are the caller's to
// compute.
//
// It is an error for the traces to differ in their jobs (ids or classes)
// or for bs not to be valid.
func Compare(policy, baseline *Trace, bs Bootstrap) ([]Difference, error) {
	d, err := CompareAll([]Pair{{Policy: NewSide(policy), Baseline: NewSide(baseline)}}, bs)
	if err != nil {
		return nil, err
	}
	return d[0], nil
}

// Pair is one comparison of CompareAll.
type Pair struct{ Policy, Baseline *Side }

// CompareAll returns Compare's differences for every pair, from one
// bootstrap: each replicate draws its resample of the jobs once and
// evaluates every pair on it. Replicate j's resample depends only on the
// seed, j and the number of jobs, so each pair's intervals are exactly
// those Compare gives it alone; drawing once instead of once a pair is
// what makes comparing many policies with several baselines cheap.
func CompareAll(pairs []Pair, bs Bootstrap) ([][]Difference, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	for _, p := range pairs {
		if err := bs.Validate(); err != nil {
			return nil, fmt.Errorf("compare %s with %s: %w", p.Policy.policy, p.Baseline.policy, err)
		}
		if err := sameJobs(p.Policy, p.Baseline); err != nil {
			return nil, fmt.Errorf("compare %s with %s: not the same jobs: %w", p.Policy.policy, p.Baseline.policy, err)
		}
		if len(p.Policy.jobID) != len(pairs[0].Policy.jobID) {
			return nil, fmt.Errorf("compare %s with %s: %d jobs, but %s has %d", p.Policy.policy, p.Baseline.policy,
				len(p.Policy.jobID), pairs[0].Policy.policy, len(pairs[0].Policy.jobID))
		}
	}
	prs := make([]*pair, len(pairs))
	reps := make([][len(pairedMetrics)][]float64, len(pairs))
	for i, p := range pairs {
		prs[i] = newPair(p.Policy, p.Baseline)
		for m := range reps[i] {
			reps[i][m] = make([]float64, bs.Resamples)
		}
	}
	type state struct {
		g      pcg
		counts []count
	}
	n := len(pairs[0].Policy.jobID)
	runReplicates(bs.Resamples, func() *state { return &state{counts: make([]count, n)} }, func(s *state, j int) {
		bs.rng(&s.g, streamPaired, j)
		resample(s.counts, &s.g)
		for i, pr := range prs {
			d := pr.difference(s.counts)
			for m := range reps[i] {
				reps[i][m][j] = d[m]
			}
		}
	})

	out := make([][]Difference, len(pairs))
	for i, pr := range prs {
		a, b := pr.a, pr.b
		diffs := make([]Difference, 0, len(pairedMetrics)+1)
		for m, name := range pairedMetrics {
			iv := bs.interval(reps[i][m])
			diffs = append(diffs, Difference{
				Policy: a.policy, Baseline: b.policy, Metric: name,
				PolicyValue: a.point[m], BaselineValue: b.point[m], Value: a.point[m] - b.point[m],
				Lo: iv.Lo, Hi: iv.Hi, Ratio: ratio(b.point[m], a.point[m]),
				Significant: iv.Lo > 0 || iv.Hi < 0,
			})
		}
		v := a.makespan - b.makespan
		diffs = append(diffs, Difference{
			Policy: a.policy, Baseline: b.policy, Metric: MetricMakespan,
			PolicyValue: a.makespan, BaselineValue: b.makespan, Value: v,
			Lo: v, Hi: v, Ratio: ratio(b.makespan, a.makespan), Significant: v != 0,
		})
		out[i] = diffs
	}
	return out, nil
}

// sameJobs checks that two sides are of the same jobs, in the same order.
func sameJobs(a, b *Side) error {
	if len(a.jobID) != len(b.jobID) {
		return fmt.Errorf("%d jobs against %d", len(a.jobID), len(b.jobID))
	}
	for i := range a.jobID {
		if a.jobID[i] != b.jobID[i] {
			return fmt.Errorf("job %d has no match", min(a.jobID[i], b.jobID[i]))
		}
		if ia, ib := a.flags[i]&flagInteractive, b.flags[i]&flagInteractive; ia != ib {
			return fmt.Errorf("job %d is %s in one and %s in the other", a.jobID[i], className(classOfFlag(ia)), className(classOfFlag(ib)))
		}
	}
	return nil
}

func classOfFlag(f uint8) uint8 {
	if f != 0 {
		return Interactive
	}
	return Batch
}

func className(c uint8) string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class %d", c)
}

// A job's category in a pair of traces: bit 0 set when it completed
// under the policy, bit 1 when it met its SLO under it, bits 2 and 3 the
// same under the baseline, bit 4 when it is interactive. A resample's
// counts per category give every count the metrics need.
const (
	catDoneA = 1 << iota
	catMetA
	catDoneB
	catMetB
	catInteractive
	numCats
)

// pair is what Compare needs of two traces of the same jobs.
type pair struct {
	a, b *Side
	cat  []uint8 // each job's category
}

func newPair(policy, baseline *Side) *pair {
	p := &pair{a: policy, b: baseline, cat: make([]uint8, len(policy.flags))}
	for i := range p.cat {
		fa, fb := policy.flags[i], baseline.flags[i]
		var c uint8
		if fa&flagDone != 0 {
			c |= catDoneA
		}
		if fa&flagMet != 0 {
			c |= catMetA
		}
		if fb&flagDone != 0 {
			c |= catDoneB
		}
		if fb&flagMet != 0 {
			c |= catMetB
		}
		if fa&flagInteractive != 0 {
			c |= catInteractive
		}
		p.cat[i] = c
	}
	return p
}

// difference returns pairedMetrics' differences, policy minus baseline,
// on the resample whose counts are given.
func (p *pair) difference(counts []count) [len(pairedMetrics)]float64 {
	n := len(p.cat)
	counts, eA, eB, cat := counts[:n], p.a.e2e[:n], p.b.e2e[:n], p.cat
	// Four of each accumulator, so that consecutive jobs do not wait on
	// one another's additions.
	var cc0, cc1, cc2, cc3 [numCats]uint64
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		c, ea, eb, k := counts[i:i+4:i+4], eA[i:i+4:i+4], eB[i:i+4:i+4], cat[i:i+4:i+4]
		f0, f1, f2, f3 := float64(c[0]), float64(c[1]), float64(c[2]), float64(c[3])
		a0 += f0 * ea[0]
		a1 += f1 * ea[1]
		a2 += f2 * ea[2]
		a3 += f3 * ea[3]
		b0 += f0 * eb[0]
		b1 += f1 * eb[1]
		b2 += f2 * eb[2]
		b3 += f3 * eb[3]
		cc0[k[0]&(numCats-1)] += uint64(c[0])
		cc1[k[1]&(numCats-1)] += uint64(c[1])
		cc2[k[2]&(numCats-1)] += uint64(c[2])
		cc3[k[3]&(numCats-1)] += uint64(c[3])
	}
	for ; i < n; i++ {
		f := float64(counts[i])
		a0 += f * eA[i]
		b0 += f * eB[i]
		cc0[cat[i]&(numCats-1)] += uint64(counts[i])
	}
	var tally [2]counts4
	for k := range cc0 {
		c := cc0[k] + cc1[k] + cc2[k] + cc3[k]
		for sd, bits := range [2][2]int{{catDoneA, catMetA}, {catDoneB, catMetB}} {
			t := &tally[sd]
			if k&bits[0] != 0 {
				t.done += c
			}
			if k&catInteractive != 0 {
				t.inter += c
			}
			if k&bits[1] != 0 {
				t.met += c
				if k&catInteractive != 0 {
					t.interMet += c
				}
			}
		}
	}
	va := p.a.metrics(tally[0], (a0+a1)+(a2+a3), p.a.resampledP99(counts, tally[0].done), uint64(n))
	vb := p.b.metrics(tally[1], (b0+b1)+(b2+b3), p.b.resampledP99(counts, tally[1].done), uint64(n))
	for m := range va {
		va[m] -= vb[m]
	}
	return va
}

// counts4 are a resample's counts of one trace's jobs.
type counts4 struct {
	done, met, inter, interMet uint64
}

// Side is a trace reduced to what a paired comparison needs of it, about
// 22 bytes a job: every policy's can be kept once its trace is released,
// and compared with several baselines in one CompareAll.
type Side struct {
	policy   string
	jobID    []int64
	flags    []uint8   // flagDone, flagMet, flagInteractive
	e2e      []float64 // end-to-end latency; 0 for a rejected job
	order    []int32   // the completed jobs, by ascending e2e
	makespan float64
	point    [len(pairedMetrics)]float64 // the metrics on the whole trace
}

// A job's flags in a Side.
const (
	flagDone = 1 << iota
	flagMet
	flagInteractive
)

// NewSide reduces a trace for CompareAll.
func NewSide(t *Trace) *Side {
	s := &Side{policy: t.Policy, jobID: t.JobID, flags: make([]uint8, t.Len()), e2e: make([]float64, t.Len()), makespan: t.makespan()}
	var keys []uint64
	for i, r := range t.Rejected {
		if !r {
			s.flags[i] |= flagDone
			s.e2e[i] = t.E2E[i]
			s.order = append(s.order, int32(i))
			keys = append(keys, floatKey(t.E2E[i]))
		}
		if t.SLOMet[i] {
			s.flags[i] |= flagMet
		}
		if t.Class[i] == Interactive {
			s.flags[i] |= flagInteractive
		}
	}
	radixSort(keys, s.order)
	s.point = s.pointMetrics(t)
	return s
}

// resampledP99 returns the nearest-rank P99 of the resample's completed
// jobs, of which there are done: walking down from the largest latency
// until the rank's distance from the top is passed.
func (s *Side) resampledP99(counts []count, done uint64) float64 {
	if done == 0 {
		return math.NaN()
	}
	m := done - uint64(rank(0.99, int(done))) + 1
	var cum uint64
	for k := len(s.order) - 1; k >= 0; k-- {
		i := s.order[k]
		if cum += uint64(counts[i]); cum >= m {
			return s.e2e[i]
		}
	}
	panic("metrics: the resample's completed jobs are fewer than counted")
}

// metrics computes pairedMetrics on a resample of n jobs from its counts,
// its sum of end-to-end latencies over completed jobs and its P99.
func (s *Side) metrics(c counts4, sumE2E, p99 float64, n uint64) [len(pairedMetrics)]float64 {
	return [...]float64{
		ratio(sumE2E, float64(c.done)),
		p99,
		1 - ratio(float64(c.met), float64(n)),
		1 - ratio(float64(c.interMet), float64(c.inter)),
		perSecond(float64(c.met), s.makespan),
	}
}

// pointMetrics computes pairedMetrics on the whole trace, as Summarize
// does.
func (s *Side) pointMetrics(t *Trace) [len(pairedMetrics)]float64 {
	var c counts4
	for _, f := range s.flags {
		inter := f&flagInteractive != 0
		if f&flagDone != 0 {
			c.done++
		}
		if inter {
			c.inter++
		}
		if f&flagMet != 0 {
			c.met++
			if inter {
				c.interMet++
			}
		}
	}
	v := s.metrics(c, 0, 0, uint64(len(s.flags)))
	v[0] = t.meanCompleted(t.E2E)
	v[1] = math.NaN()
	if len(s.order) > 0 {
		v[1] = s.e2e[s.order[rank(0.99, len(s.order))-1]]
	}
	return v
}

// perSecond is x per second of makespan, 0 for a makespan of 0 (nothing
// completed).
func perSecond(x, makespan float64) float64 {
	if makespan == 0 {
		return 0
	}
	return x / makespan
}
