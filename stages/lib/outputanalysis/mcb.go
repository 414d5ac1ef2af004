package outputanalysis

import (
	"fmt"
	"math"
	"slices"
)

// Objective says which way is better for a metric.
type Objective int

const (
	// Minimize: smaller is better (latency, SLO violations).
	Minimize Objective = iota
	// Maximize: larger is better (throughput, goodput).
	Maximize
)

// String names the objective.
func (o Objective) String() string {
	if o == Maximize {
		return "maximize"
	}
	return "minimize"
}

// Verdict is what multiple comparisons with the best concluded; MCB
// defines each.
type Verdict int

const (
	// NoVerdict: no comparison could be made (Comparison.Reason says
	// why).
	NoVerdict Verdict = iota
	// Separated: one system is the best at the stated confidence.
	Separated
	// WithinDelta: the systems in the set cannot be told apart, but one
	// of them is within the indifference zone of the best at the stated
	// confidence.
	WithinDelta
	// Inseparable: the set holds the systems that cannot be separated
	// from the best, and none is shown within the indifference zone.
	Inseparable
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Separated:
		return "separated"
	case WithinDelta:
		return "within delta"
	case Inseparable:
		return "inseparable"
	}
	return "no verdict"
}

// SystemBound is one system's part of a comparison.
type SystemBound struct {
	// Mean is the system's mean over the replications.
	Mean float64
	// Lo and Hi bound the MCB interval for μ_i − min_{j≠i} μ_j when
	// minimizing, μ_i − max_{j≠i} μ_j when maximizing: how much better
	// or worse the system is than the best of the others. Lo ≤ 0 ≤ Hi;
	// both are NaN with fewer than two replications or for an excluded
	// system.
	Lo, Hi float64
	// Candidate reports whether the system is in the set that cannot be
	// separated from the best (Comparison.Set).
	Candidate bool
	// Excluded reports that a value of the system was NaN or infinite:
	// it was left out of the comparison.
	Excluded bool
}

// Comparison is the outcome of MCB.
type Comparison struct {
	// Objective, Confidence and Delta are the procedure's parameters.
	Objective  Objective
	Confidence float64
	Delta      float64
	// Replications is the number of paired replications.
	Replications int
	// Systems has one entry per system, in the order given.
	Systems []SystemBound
	// Verdict is the conclusion.
	Verdict Verdict
	// Best is the index of the separated system (Separated) or of the
	// one within Delta of the best (WithinDelta); -1 otherwise.
	Best int
	// Set holds the indices, in the order given, of the systems that
	// cannot be separated from the best: the candidates. With
	// Separated it is {Best}; empty with NoVerdict.
	Set []int
	// Reason says why there is no verdict; empty otherwise.
	Reason string
}

// MCB is multiple comparisons with the best for k systems simulated with
// common random numbers: values[i][r] is system i's output in replication
// r, and replication r gave every system the same workload and draws. It
// implements Hsu's constrained MCB intervals (Hsu 1984, 1996) in the
// Bonferroni form that Nelson and Matejcik (1995) give for common random
// numbers (see also Goldsman and Nelson 1998), which asks only that each pair's
// differences be normal, not that the systems' variances or covariances
// be equal.
//
// The rule, for a maximized metric (a minimized one is the same on −x):
// with R replications, x̄_i the means, d_ij = x̄_i − x̄_j, S²_ij the sample
// variance (divisor R−1) of x_ir − x_jr over r, α = 1 − confidence and
//
//	w_ij = t(1 − α/(k−1), R−1) · S_ij / √R,
//
// system i's MCB interval for μ_i − max_{j≠i} μ_j is
//
//	[ min(0, min_{j≠i}(d_ij − w_ij)),  max(0, min_{j≠i}(d_ij + w_ij)) ],
//
// and all k intervals hold together with probability at least
// confidence. For a minimized metric the interval is for
// μ_i − min_{j≠i} μ_j and is [min(0, max_{j≠i}(d_ij − w_ij)),
// max(0, max_{j≠i}(d_ij + w_ij))]: below zero is better.
//
// From these intervals, at the same joint confidence:
//
//   - Set (the candidates, the systems that cannot be separated from the
//     best) holds the systems that no other is shown better than:
//     min_{j≠i}(d_ij + w_ij) ≥ 0 when maximizing, max_{j≠i}(d_ij − w_ij)
//     ≤ 0 when minimizing. Their interval reaches beyond zero on the good
//     side (Hi > 0 when maximizing, Lo < 0 when minimizing) except where
//     that end is exactly zero, as for two systems with equal outputs in
//     every replication, which stay candidates. For every other system
//     some system is shown better, so the best is in the set (Hsu's
//     subset selection). The system with the best mean is always in it.
//   - Separated: the set is one system. It is named Best: it is the best
//     at the stated confidence.
//   - WithinDelta: the set has several systems, and the one among them
//     whose interval's bad end is closest to zero has that end within
//     the indifference zone: Lo > −Delta when maximizing, Hi < Delta when
//     minimizing (ties go to the better mean, then the lower index). It is
//     named Best: it is no more than Delta worse than the best of the
//     others. This is how an indifference zone enters MCB: differences
//     smaller than Delta are ones the user has said do not matter, so
//     the set need not be split for them. With Delta = 0 this verdict
//     cannot occur.
//   - Inseparable: otherwise. Best is -1; Set is the answer.
//
// A system with a NaN or infinite value is excluded (Excluded) and the
// procedure runs over the others, with k counting only them; dropping the
// replications instead would bias every comparison towards the
// workloads on which that system's metric is defined. With fewer than two
// systems left, or fewer than two replications, there is NoVerdict.
// MCB fails only on bad arguments: rows of unequal length, a confidence
// outside (0, 1), or a negative or NaN Delta.
func MCB(values [][]float64, obj Objective, confidence, delta float64) (Comparison, error) {
	if !validConfidence(confidence) {
		return Comparison{}, fmt.Errorf("outputanalysis: MCB: confidence is %v; want a fraction strictly between 0 and 1", confidence)
	}
	if !(delta >= 0) {
		return Comparison{}, fmt.Errorf("outputanalysis: MCB: indifference zone is %v; want at least 0", delta)
	}
	reps := 0
	if len(values) > 0 {
		reps = len(values[0])
	}
	for i, v := range values {
		if len(v) != reps {
			return Comparison{}, fmt.Errorf("outputanalysis: MCB: system %d has %d replications, system 0 has %d; want the same replications for every system", i, len(v), reps)
		}
	}
	nan := math.NaN()
	c := Comparison{Objective: obj, Confidence: confidence, Delta: delta, Replications: reps, Best: -1,
		Systems: make([]SystemBound, len(values))}
	// sign turns the metric into one to maximize: the rule is written
	// once, for a maximum.
	sign := 1.0
	if obj == Minimize {
		sign = -1
	}
	var in []int // the systems compared
	for i, v := range values {
		s := &c.Systems[i]
		s.Lo, s.Hi = nan, nan
		s.Mean, _ = meanSD(v)
		if len(v) == 0 {
			s.Mean = nan
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				s.Excluded = true
			}
		}
		if !s.Excluded {
			in = append(in, i)
		}
	}
	switch {
	case len(in) < 2:
		c.Reason = fmt.Sprintf("%d system(s) to compare; want at least 2", len(in))
		return c, nil
	case reps < 2:
		c.Reason = fmt.Sprintf("%d replication(s); want at least 2", reps)
		return c, nil
	}
	t := tQuantile(1-(1-confidence)/float64(len(in)-1), reps-1)
	diff := make([]float64, reps)
	// lo and hi are the intervals' raw ends for the maximized metric,
	// min_j(d_ij ∓ w_ij), before they are clamped at zero.
	lo := make([]float64, len(values))
	hi := make([]float64, len(values))
	for _, i := range in {
		lo[i], hi[i] = math.Inf(1), math.Inf(1)
		for _, j := range in {
			if j == i {
				continue
			}
			for r := range diff {
				diff[r] = sign * (values[i][r] - values[j][r])
			}
			d, sd := meanSD(diff)
			w := t * sd / math.Sqrt(float64(reps))
			lo[i] = min(lo[i], d-w)
			hi[i] = min(hi[i], d+w)
		}
		s := &c.Systems[i]
		s.Lo, s.Hi = min(0, lo[i]), max(0, hi[i])
		// hi ≥ 0, not > 0: two systems with equal outputs in every
		// replication (w = 0, d = 0) both stay candidates.
		s.Candidate = hi[i] >= 0
		if s.Candidate {
			c.Set = append(c.Set, i)
		}
		if obj == Minimize {
			s.Lo, s.Hi = -s.Hi, -s.Lo
		}
	}
	if len(c.Set) == 1 {
		c.Verdict, c.Best = Separated, c.Set[0]
		return c, nil
	}
	// The candidate whose worst case is mildest: the largest clamped lower
	// end for the maximized metric.
	best := slices.MaxFunc(c.Set, func(a, b int) int {
		la, lb := min(0, lo[a]), min(0, lo[b])
		if la != lb {
			if la < lb {
				return -1
			}
			return 1
		}
		ma, mb := sign*c.Systems[a].Mean, sign*c.Systems[b].Mean
		switch {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return b - a // the lower index is the larger
	})
	if min(0, lo[best]) > -delta {
		c.Verdict, c.Best = WithinDelta, best
		return c, nil
	}
	c.Verdict = Inseparable
	return c, nil
}
