package evaluate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// summarySection is the report's first: the best policy at each
// objective, against the best baseline, and the capacity the best policy
// sustains, which the load sweep's section reads.
type summarySection struct{ sweep *sweepSection }

var _ section.Section = (*summarySection)(nil)

func (*summarySection) Name() string { return "summary" }

// Read reads nothing: the summaries are the stage's, the capacity the
// sweep section's.
func (*summarySection) Read(*section.Evaluation) error { return nil }

// Rows are none: every number the summary states is another section's.
func (*summarySection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render tabulates the best policy at each objective, then states the
// capacities.
func (s *summarySection) Render(ev *section.Evaluation) (report.Section, error) {
	t := report.NewTable("objective", "best policy", ">value", "runner-up", "against the best baseline")
	for _, o := range section.Objectives() {
		r := ev.Ranked(o)
		best, second := r[0], -1
		// Policies that tie with the best share the first place.
		tied := []string{report.Escape(ev.Policies[best])}
		for _, i := range r[1:] {
			if o.Value(ev.Results[i].Summary) != o.Value(ev.Results[best].Summary) {
				second = i
				break
			}
			tied = append(tied, report.Escape(ev.Policies[i]))
		}
		runner := "–"
		if second >= 0 {
			runner = fmt.Sprintf("%s (%s)", report.Escape(ev.Policies[second]), o.Format(o.Value(ev.Results[second].Summary)))
		}
		if len(tied) > 1 {
			t.Add(o.Name, fmt.Sprintf("%d tie: %s", len(tied), strings.Join(tied, ", ")), o.Format(o.Value(ev.Results[best].Summary)), runner, "–")
			continue
		}
		against := "is a baseline"
		if !slices.Contains(ev.Config.Baselines, ev.Policies[best]) {
			against = "–"
			// The best baseline for this objective.
			for _, i := range r {
				if !slices.Contains(ev.Config.Baselines, ev.Policies[i]) {
					continue
				}
				if x, ok := ev.Diff(best, ev.Policies[i], o.Diff); ok {
					against = fmt.Sprintf("%s vs %s", section.DiffText(x, o.Delta), report.Escape(ev.Policies[i]))
				}
				break
			}
		}
		t.Add(o.Name, report.Escape(ev.Policies[best]), o.Format(o.Value(ev.Results[best].Summary)), runner, against)
	}
	var b strings.Builder
	b.WriteString(t.String())
	b.WriteString(capacitySummary(s.sweep.result, ev.Config.Baselines))
	return report.Section{Title: "Summary", Markdown: b.String()}, nil
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
	for _, base := range baselines {
		if base == sw.best || sw.capacity[base] == nil {
			continue
		}
		bs := sw.sustained(base)
		if !(bs.mean > 0) {
			c := sw.capacity[base]
			against = append(against, fmt.Sprintf("%s sustains none of the loads tried (at best %s of its interactive jobs within SLO, at %s)",
				report.Escape(base), report.Pct(c.peak), report.Pct(c.peakLoad)))
			continue
		}
		r := sw.ratios[base]
		text := fmt.Sprintf("%s %s's %s", report.Ratio(r.mean), report.Escape(base), loadText(bs))
		if r.hasInterval() && !math.IsInf(r.hi, 0) {
			text = fmt.Sprintf("%s (%s … %s) %s's %s", report.Ratio(r.mean), report.Ratio(r.lo), report.Ratio(r.hi), report.Escape(base), loadText(bs))
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
