package section

import (
	"maps"
	"slices"
)

// Crowded is the most policies a chart overlays: beyond it the curves
// merge (twelve filled histograms read as one smear), and a chart shows
// the Featured few, every policy's chart folded beneath it.
const Crowded = 6

// Simplest is the first of evaluate.baselines, the simplest baseline, -1
// when there is none.
func (ev *Evaluation) Simplest() int {
	if len(ev.Config.Baselines) == 0 {
		return -1
	}
	return slices.Index(ev.Policies, ev.Config.Baselines[0])
}

// Strongest is the baseline with the best estimate for the objective
// other than besides, -1 when besides is the only baseline or there is
// none.
func (ev *Evaluation) Strongest(o Objective, besides int) int {
	for _, i := range ev.Analysis.Ranked(o) {
		if i != besides && slices.Contains(ev.Config.Baselines, ev.Policies[i]) {
			return i
		}
	}
	return -1
}

// Featured are the policies a chart of many shows by default, in
// schedule's order: the two best for the configured objective (the
// recommendation and the runner-up), the strongest baseline for it and
// the simplest baseline. A chart of every policy can follow them folded
// (report.Chart.Detail).
func (ev *Evaluation) Featured() []int {
	o, ok := ObjectiveOf(ev.Config.Objective)
	if !ok {
		o = Objectives()[0]
	}
	ranked := ev.Analysis.Ranked(o)
	pick := map[int]bool{}
	for _, i := range ranked[:min(2, len(ranked))] {
		pick[i] = true
	}
	if len(ranked) > 0 {
		if j := ev.Strongest(o, ranked[0]); j >= 0 {
			pick[j] = true
		}
	}
	if k := ev.Simplest(); k >= 0 {
		pick[k] = true
	}
	return slices.Sorted(maps.Keys(pick))
}
