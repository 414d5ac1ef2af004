package evaluate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/lib/policy"
)

// summarySection is the report's first: which policy to use for the
// objective evaluate.objective names, and for each objective the policy
// named best only where multiple comparisons with the best separate it
// (section.Analysis.Best), against the strongest baseline, then the
// capacity the best policy sustains, which the load sweep's section reads.
// When the profile was measured on a busy machine, the profile section's
// warning comes first: every number after it inherits the busy timings.
type summarySection struct {
	sweep   *sweepSection
	profile *profileSection
}

var _ section.Section = (*summarySection)(nil)

func (*summarySection) Name() string { return "summary" }

// Read reads nothing: the estimates are the analysis's, the capacity the
// sweep section's, the machine's load the profile section's.
func (*summarySection) Read(*section.Evaluation) error { return nil }

// Rows are each objective's verdict: the best policy's (or, where none is
// separated, the set's) estimate, with the MCB verdict in its metric name.
func (*summarySection) Rows(ev *section.Evaluation) []MetricRow {
	var rows []MetricRow
	for _, o := range section.Objectives() {
		v := verdictOf(ev, o)
		for _, i := range v.set {
			iv := ev.Analysis.Estimate(i, o.Diff)
			rows = append(rows, MetricRow{Scope: section.ScopeBest, Policy: ev.Policies[i], Metric: o.Diff + ":" + v.kind,
				Value: iv.Mean, Lo: new(iv.Lo), Hi: new(iv.Hi), Significant: v.kind == bestSeparated})
		}
	}
	return rows
}

// The kinds of verdict, as metrics.parquet's summary rows name them.
const (
	bestSeparated   = "separated"
	bestWithinDelta = "within_indifference"
	bestInseparable = "inseparable"
	bestNone        = "no_verdict"
)

// verdict is what the summary says of one objective.
type verdict struct {
	kind string
	// best is the policy named best, -1 where none is; set the policies
	// that cannot be separated from the best (best's alone when
	// separated), in listing order, or, with no verdict, the best
	// estimate's policy.
	best int
	set  []int
	// delta is the indifference zone, in the objective's unit.
	delta float64
	// reason says why there is no verdict.
	reason string
}

// verdictOf runs multiple comparisons with the best for the objective.
func verdictOf(ev *section.Evaluation, o section.Objective) verdict {
	delta := ev.Config.Indifference.Of(o.Diff)
	v := verdict{kind: bestNone, best: -1, delta: delta}
	c, err := ev.Analysis.Best(o, delta)
	switch {
	case ev.Analysis.Reps < 2:
		v.reason = "one replication varies nothing of the workload, so no best can be named with stated confidence (raise schedule.replications)"
	case err != nil:
		v.reason = err.Error()
	case c.Verdict == outputanalysis.Separated:
		v.kind, v.best, v.set = bestSeparated, c.Best, c.Set
	case c.Verdict == outputanalysis.WithinDelta:
		v.kind, v.best, v.set = bestWithinDelta, c.Best, c.Set
	case c.Verdict == outputanalysis.Inseparable:
		v.kind, v.set = bestInseparable, c.Set
	default:
		v.reason = c.Reason
	}
	if v.kind == bestNone {
		v.set = []int{ev.Analysis.Ranked(o)[0]}
	}
	return v
}

// Lead is what opens the report, under its title: the warning that the
// machine was busy, if it was, and the sentence a reader can act on.
func (s *summarySection) Lead(ev *section.Evaluation) string {
	var b strings.Builder
	if w := s.profile.busyWarning(); w != "" {
		b.WriteString(w + "\n\n")
	}
	if o, ok := section.ObjectiveOf(ev.Config.Objective); ok {
		b.WriteString(recommendation(ev, o))
	}
	return strings.TrimSpace(b.String())
}

// Render tabulates every objective's verdict, then states the capacities
// (the recommendation opens the report: Lead).
func (s *summarySection) Render(ev *section.Evaluation) (report.Section, error) {
	var b strings.Builder
	t := report.NewTable("objective", "best policy", ">estimate", "against the strongest baseline", "against the simplest", "confidence")
	for _, o := range section.Objectives() {
		v := verdictOf(ev, o)
		lead := v.best
		if lead < 0 {
			lead = v.set[0]
			for _, i := range v.set {
				if compareEst(ev, o, i, lead) < 0 {
					lead = i
				}
			}
		}
		est := section.IntervalText(ev.Analysis.Estimate(lead, o.Diff), o.Format)
		strong, simple := "–", "–"
		j := ev.Strongest(o, lead)
		if j >= 0 {
			strong = against(ev, o, lead, j)
		} else if slices.Contains(ev.Config.Baselines, ev.Policies[lead]) {
			strong = "is a baseline"
		}
		switch k := ev.Simplest(); {
		case k == lead:
			simple = "is the simplest"
		case k >= 0 && k == j:
			simple = "the strongest is the simplest"
		case k >= 0:
			simple = against(ev, o, lead, k)
		}
		t.Add(o.Name, bestText(ev, v, lead), est, strong, simple, confidenceText(ev, v, o))
	}
	b.WriteString(t.String())
	b.WriteString(capacitySummary(s.sweep.result, ev.Config.Baselines))
	b.WriteString(beyondCapacity(ev, s.sweep.result))
	return report.Section{Title: "Summary", Markdown: b.String()}, nil
}

// against is policy i's paired difference from baseline j, the
// baseline named first.
func against(ev *section.Evaluation, o section.Objective, i, j int) string {
	return report.Escape(ev.Policies[j]) + ": " + section.DiffText(ev.Analysis.Paired(i, j, o.Diff, ev.Policies[i], ev.Policies[j]), o.Delta)
}

// compareEst orders policies i and j best first by their estimates.
func compareEst(ev *section.Evaluation, o section.Objective, i, j int) int {
	x, y := ev.Analysis.Estimate(i, o.Diff).Mean, ev.Analysis.Estimate(j, o.Diff).Mean
	switch {
	case x == y:
		return 0
	case o.Lower == (x < y):
		return -1
	}
	return 1
}

// bestText names the best policy, or the policies that cannot be told
// apart from it.
func bestText(ev *section.Evaluation, v verdict, lead int) string {
	switch v.kind {
	case bestSeparated, bestWithinDelta:
		return "**" + report.Escape(ev.Policies[v.best]) + "**"
	case bestInseparable:
		names := make([]string, len(v.set))
		for k, i := range v.set {
			names[k] = report.Escape(ev.Policies[i])
		}
		return fmt.Sprintf("none separated: %s", strings.Join(names, ", "))
	}
	return report.Escape(ev.Policies[lead]) + " (best estimate)"
}

// confidenceText says at what confidence, by which procedure, the best
// is named (or why it is not).
func confidenceText(ev *section.Evaluation, v verdict, o section.Objective) string {
	mcb := fmt.Sprintf("%.0f%%, MCB over %d replications", 100*ev.Config.Confidence, ev.Replications)
	switch v.kind {
	case bestSeparated:
		return "separated from every other at " + mcb
	case bestWithinDelta:
		return fmt.Sprintf("within %s of the best at %s", o.Delta(v.delta), mcb)
	case bestInseparable:
		return fmt.Sprintf("%d cannot be separated at %s (indifference %s)", len(v.set), mcb, o.Delta(v.delta))
	}
	if ev.Analysis.Reps < 2 {
		return "none stated: one replication"
	}
	return "none stated: " + v.reason
}

// recommendation is the report's first sentence: which policy to use for
// the objective, by how much over the strongest baseline, at what
// confidence; or which policies cannot be told apart, and why.
func recommendation(ev *section.Evaluation, o section.Objective) string {
	v := verdictOf(ev, o)
	name := strings.ToLower(o.Name[:1]) + o.Name[1:]
	switch v.kind {
	case bestSeparated, bestWithinDelta:
		i := v.best
		text := fmt.Sprintf("**Use %s** for %s: %s", report.Escape(ev.Policies[i]), name, section.IntervalText(ev.Analysis.Estimate(i, o.Diff), o.Format))
		j := ev.Strongest(o, i)
		if j >= 0 {
			text += fmt.Sprintf(", %s against the strongest baseline, %s", section.DiffText(ev.Analysis.Paired(i, j, o.Diff, ev.Policies[i], ev.Policies[j]), o.Delta), report.Escape(ev.Policies[j]))
		}
		if k := ev.Simplest(); k >= 0 && k != i && k != j {
			text += fmt.Sprintf(", and %s against the simplest, %s", section.DiffText(ev.Analysis.Paired(i, k, o.Diff, ev.Policies[i], ev.Policies[k]), o.Delta), report.Escape(ev.Policies[k]))
		}
		if v.kind == bestSeparated {
			return text + fmt.Sprintf("; multiple comparisons with the best separate it from every other policy at %.0f%% over %d replications.", 100*ev.Config.Confidence, ev.Replications)
		}
		var others []string
		for _, k := range v.set {
			if k != i {
				others = append(others, report.Escape(ev.Policies[k]))
			}
		}
		return text + fmt.Sprintf("; it is within %s (evaluate.indifference) of the best at %.0f%% over %d replications, beside %s, which cannot be separated from it.",
			o.Delta(v.delta), 100*ev.Config.Confidence, ev.Replications, report.AndList(others))
	case bestInseparable:
		names := make([]string, len(v.set))
		for k, i := range v.set {
			names[k] = report.Escape(ev.Policies[i])
		}
		return fmt.Sprintf("**No single policy is best** for %s at %.0f%% over %d replications: %s cannot be separated (indifference %s); more replications, or a wider evaluate.indifference, may separate them.%s",
			name, 100*ev.Config.Confidence, ev.Replications, strings.Join(names, ", "), o.Delta(v.delta), simplerText(ev, v.set))
	}
	i := v.set[0]
	return fmt.Sprintf("**No policy is named best** for %s: %s. The best estimate is %s's, %s.",
		name, v.reason, report.Escape(ev.Policies[i]), section.IntervalText(ev.Analysis.Estimate(i, o.Diff), o.Format))
}

// capacitySummary is the summary's sentence on capacity: the load the best
// policy sustains, and how much more that is than each baseline's; none
// without a capacity search (or without the sweep's section to read it).
func capacitySummary(sw *sweepResult, baselines []string) string {
	if sw == nil || len(sw.capacity) == 0 {
		return ""
	}
	var b strings.Builder
	what := fmt.Sprintf("the highest offered load, as a fraction of the cluster's capacity, at which at least %s of interactive jobs meet their SLO", report.Pct(sw.target))
	if sw.searched() {
		what += fmt.Sprintf(" (capacity search to within %s", report.Pct(sw.tolerance))
	} else {
		what += " (load sweep grid"
	}
	what += fmt.Sprintf(", first %d jobs", sw.jobs)
	if sw.reps > 1 {
		what += fmt.Sprintf(", mean of %d replications", sw.reps)
	}
	what += ")"
	best := sw.sustained(sw.best)
	if !(best.mean > 0) {
		fmt.Fprintf(&b, "\n**Capacity**, %s: no policy sustains any load tried.\n", what)
		return b.String()
	}
	fmt.Fprintf(&b, "\n**Capacity**, %s: **%s** sustains %s", what, report.Escape(sw.best), loadText(best))
	var against []string
	strong := ""
	for _, base := range baselines {
		if base != sw.best && sw.capacity[base] != nil && (strong == "" || sw.sustained(base).mean > sw.sustained(strong).mean) {
			strong = base
		}
	}
	for k, base := range baselines {
		if base == sw.best || sw.capacity[base] == nil {
			continue
		}
		name, role := report.Escape(base), ""
		switch {
		case k == 0 && base == strong:
			role = " (the simplest baseline, and the strongest)"
		case k == 0:
			role = " (the simplest baseline)"
		case base == strong:
			role = " (the strongest baseline)"
		}
		bs := sw.sustained(base)
		if !(bs.mean > 0) {
			c := sw.capacity[base]
			against = append(against, fmt.Sprintf("%s%s sustains none of the loads tried (at best %s of its interactive jobs within SLO, at %s)",
				name, role, report.Pct(c.peak), report.Pct(c.peakLoad)))
			continue
		}
		r := sw.ratios[base]
		text := fmt.Sprintf("%s %s's %s%s", report.Ratio(r.mean), name, loadText(bs), role)
		if r.hasInterval() && !math.IsInf(r.hi, 0) {
			text = fmt.Sprintf("%s (%s … %s) %s's %s%s", report.Ratio(r.mean), report.Ratio(r.lo), report.Ratio(r.hi), name, loadText(bs), role)
		}
		against = append(against, text)
	}
	if len(against) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(against, "; "))
	}
	b.WriteString(".\n")
	ranked := slices.Clone(sw.order)
	slices.SortStableFunc(ranked, func(x, y string) int { return cmp.Compare(sw.sustained(y).mean, sw.sustained(x).mean) })
	var each []string
	for _, p := range ranked {
		each = append(each, fmt.Sprintf("%s %s", report.Escape(p), loadText(sw.sustained(p))))
	}
	fmt.Fprintf(&b, "\nEvery policy's sustained load: %s.\n", strings.Join(each, ", "))
	return b.String()
}

// beyondCapacity says plainly when the main comparison offers more load
// than any policy sustains at the capacity target: its figures then rank
// the policies under a load none of them serves as the target asks, and
// the reader should know before quoting them. Empty otherwise, or without
// a capacity search or a recorded offered load.
func beyondCapacity(ev *section.Evaluation, sw *sweepResult) string {
	offered := offeredLoad(ev)
	if sw == nil || len(sw.capacity) == 0 || !(offered > 0) {
		return ""
	}
	// The best interactive attainment at the offered load, over the
	// policies the report ranks.
	lead, violation := "", math.Inf(1)
	for i, p := range ev.Policies {
		if v := ev.Analysis.Estimate(i, metrics.MetricInteractiveSLOViolation).Mean; v < violation {
			lead, violation = p, v
		}
	}
	return beyondText(offered, sw.target, sw.best, sw.sustained(sw.best), lead, 1-violation)
}

// beyondText is beyondCapacity's paragraph: offered is the main
// comparison's load, best the policy that sustains the most at target,
// and lead the one that keeps the most interactive jobs within SLO at the
// offered load, attained of them. Empty unless offered exceeds the best
// sustained load (its interval's upper end, where it has one).
func beyondText(offered, target float64, best string, sustained estimate, lead string, attained float64) string {
	most, limit := sustained.mean, sustained.mean
	if sustained.hasInterval() {
		most, limit = sustained.hi, sustained.lo
	}
	if math.IsNaN(most) || offered <= most {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**The main comparison runs beyond every policy's capacity.** It offers %s of the cluster's capacity; the most any policy sustains with %s of its interactive jobs within SLO is %s's %s.",
		report.Pct(offered), report.Pct(target), report.Escape(best), loadText(sustained))
	if lead != "" && !math.IsNaN(attained) {
		fmt.Fprintf(&b, " At %s the best keeps %s of them (%s).", report.Pct(offered), report.Pct(attained), report.Escape(lead))
	}
	fmt.Fprintf(&b, " Its figures rank the policies under a load none serves as the target asks; to compare them where they meet it, set schedule.utilization to %s or less.\n", report.Pct(limit))
	return b.String()
}

// simplerText is the trade-off among policies that cannot be separated:
// where some of them need a trained network and some do not, the first
// that does not (the set is in rank order) is the one to run, as it does
// as well within the indifference zone without a model to train, ship
// and retrain. Empty where all or none of them need one.
func simplerText(ev *section.Evaluation, set []int) string {
	var rule, learned []string
	for _, i := range set {
		if sp, err := policy.ParseSpec(ev.Policies[i]); err == nil && sp.Learned() {
			learned = append(learned, report.Escape(ev.Policies[i]))
		} else {
			rule = append(rule, report.Escape(ev.Policies[i]))
		}
	}
	if len(rule) == 0 || len(learned) == 0 {
		return ""
	}
	return fmt.Sprintf(" Of them, **%s** needs no trained network: it does as well here as %s without a model to train and keep up to date.", rule[0], report.AndList(learned))
}
