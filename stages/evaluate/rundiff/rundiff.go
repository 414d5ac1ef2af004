// Package rundiff sets two runs of the evaluate stage side by side, as
// mlsched diff shows them: which stages' versions differ and why, and
// each policy's headline numbers in both runs with their intervals and
// the difference, as a table for the terminal or as Markdown for a pull
// request. It reads nothing itself: the command hands it each run's
// metrics.parquet rows and the stages it walked, so that it knows the
// report's numbers (package section's objectives, package report's
// formats) and not the store.
//
// The two runs are independent experiments (each its own replications,
// workloads and draws), so a difference's interval combines the two
// runs' intervals as outputanalysis.IndependentDifference says, where
// the report's comparisons between policies of one run are paired.
package rundiff

import (
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
)

// Run is one of the two runs.
type Run struct {
	// Name says how the user named the run, or how it was found: a
	// lock file, a config, "the newest evaluate version in data".
	Name string
	// Version is its evaluate version, as the command shows versions.
	Version string
	// Confidence is the coverage of its intervals (evaluate.confidence);
	// 0 where it is not known.
	Confidence float64
	// Rows are its metrics.parquet.
	Rows []section.MetricRow
}

// Stage is one stage of the runs: its version in each and how B's
// inputs differ from A's.
type Stage struct {
	Name string
	// A and B are its versions in each run, as the command shows
	// versions.
	A, B string
	// Changes say how B's version's inputs differ from A's, in words
	// (pipeline.InputChanges), or why they cannot be compared.
	Changes []string
}

// Diff is the two runs compared.
type Diff struct {
	A, B   Run
	Stages []Stage
	// Policies are the policies both runs simulated, in A's order.
	Policies []Policy
	// OnlyA and OnlyB are the policies one run alone simulated.
	OnlyA, OnlyB []string
	// Confidence is the intervals' coverage; 0 where the runs' differ,
	// and then no difference has an interval.
	Confidence float64
}

// Policy is one policy's headline numbers in both runs.
type Policy struct {
	Name    string
	Numbers []Number
}

// Number is one headline number of a policy in both runs.
type Number struct {
	// Name is the report's ("P99 end-to-end latency").
	Name string
	// A and B are the runs' estimates (Lo and Hi NaN without an
	// interval; Mean NaN where the run lacks the number), Diff is B − A.
	A, B, Diff outputanalysis.Interval
	// Lower says that lower is better.
	Lower bool
	// Format writes a value, Delta a difference.
	Format, Delta func(float64) string
}

// Verdicts of a difference, as Number.Verdict gives them.
const (
	Better     = "better"
	Worse      = "worse"
	Same       = ""            // the interval holds zero
	NoInterval = "no interval" // A or B has none, or their coverages differ
	Missing    = "not in both" // one run lacks the number
)

// Verdict says whether B is better or worse than A at the number, with
// the interval's confidence, or why it cannot say.
func (n Number) Verdict() string {
	switch {
	case math.IsNaN(n.A.Mean) || math.IsNaN(n.B.Mean):
		return Missing
	case math.IsNaN(n.Diff.Lo) || math.IsNaN(n.Diff.Hi):
		return NoInterval
	case !n.Significant():
		return Same
	case (n.Diff.Mean < 0) == n.Lower:
		return Better
	}
	return Worse
}

// Significant says that the difference's interval excludes zero.
func (n Number) Significant() bool { return n.Diff.Lo > 0 || n.Diff.Hi < 0 }

// headline is a number the diff compares: the objective that names and
// formats it, and where metrics.parquet keeps it.
type headline struct {
	section.Objective
	scope, class, metric string
}

// headlines are the report's headline objectives (section.Headline), each
// where the stage writes it (Objective.Where), then the sustained load.
func headlines() []headline {
	var out []headline
	for _, o := range section.Headline() {
		scope, class, metric := o.Where()
		out = append(out, headline{o, scope, class, metric})
	}
	sustained := section.Objective{Name: "Sustained load", Format: report.Pct, Delta: report.PctPts}
	return append(out, headline{sustained, section.ScopeSustained, "", section.MetricSustainedLoad})
}

// Compare sets a against b, with the stages the command walked.
func Compare(a, b Run, stages []Stage) *Diff {
	d := &Diff{A: a, B: b, Stages: stages}
	if a.Confidence == b.Confidence {
		d.Confidence = a.Confidence
	}
	inA, inB := policies(a.Rows), policies(b.Rows)
	for _, p := range inA {
		if !slices.Contains(inB, p) {
			d.OnlyA = append(d.OnlyA, p)
			continue
		}
		pol := Policy{Name: p}
		for _, h := range headlines() {
			n := Number{Name: h.Name, Lower: h.Lower, Format: h.Format, Delta: h.Delta,
				A: estimate(a.Rows, p, h), B: estimate(b.Rows, p, h)}
			if math.IsNaN(n.A.Mean) && math.IsNaN(n.B.Mean) {
				continue // neither run has it: a sweep left out, a class without jobs
			}
			n.Diff = outputanalysis.IndependentDifference(n.A, n.B)
			if d.Confidence == 0 {
				n.Diff.Lo, n.Diff.Hi = math.NaN(), math.NaN()
			}
			pol.Numbers = append(pol.Numbers, n)
		}
		d.Policies = append(d.Policies, pol)
	}
	for _, p := range inB {
		if !slices.Contains(inA, p) {
			d.OnlyB = append(d.OnlyB, p)
		}
	}
	return d
}

// policies are the policies rows has numbers of, in their order.
func policies(rows []section.MetricRow) []string {
	var out []string
	for _, r := range rows {
		if r.Scope == section.ScopePolicy && !slices.Contains(out, r.Policy) {
			out = append(out, r.Policy)
		}
	}
	return out
}

// estimate is policy's number h in rows with its interval; Mean NaN where
// rows lack it, Lo and Hi NaN where it has no interval.
func estimate(rows []section.MetricRow, policy string, h headline) outputanalysis.Interval {
	iv := outputanalysis.Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	i := slices.IndexFunc(rows, func(r section.MetricRow) bool {
		return r.Scope == h.scope && r.Policy == policy && r.Class == h.class && r.Metric == h.metric && r.Baseline == ""
	})
	if i < 0 {
		return iv
	}
	r := rows[i]
	iv.Mean = r.Value
	if r.Lo != nil && r.Hi != nil {
		iv.Lo, iv.Hi = *r.Lo, *r.Hi
	}
	return iv
}

// Cells are the number's A, B and B − A as the report writes them:
// "9.36 ms (8.48 ms … 10.3 ms)", and for the difference "no difference
// (… )" where its interval holds zero.
func (n Number) Cells() (a, b, diff string) {
	a, b = section.IntervalText(n.A, n.Format), section.IntervalText(n.B, n.Format)
	if n.Verdict() == Missing {
		return a, b, "–"
	}
	x := metrics.Difference{Value: n.Diff.Mean, Lo: n.Diff.Lo, Hi: n.Diff.Hi, Significant: n.Significant()}
	return a, b, section.DiffText(x, n.Delta)
}
