package learned

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// The serving targets: one decision through onnxruntime, a
// decision in a batch of 32, a cache hit.
const (
	targetUncachedP50 = 20e-6
	targetUncachedP99 = 100e-6
	targetBatched     = 2e-6
	targetBatch       = 32
	targetCached      = 200e-9
)

// render is the report's part on the learned policies: the network
// against the rules, serving, and the two studies; untitled when
// schedule simulated no learned policy.
func render(ev *section.Evaluation, l *runs) (report.Section, error) {
	if l == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	fmt.Fprintf(&md, "The learned policy places and orders jobs as %s does; every migration decision is the train stage's placement network's, "+
		"evaluated inside the simulation, onnxruntime's decision whether onnxruntime or a forward pass in Go computed it (schedule.learned.evaluator): "+
		"decisions are batched (schedule.learned.batch and window), cached "+
		"(schedule.learned.cache) and charged their cost on the simulated clock (schedule.learned.cost). Learned specs simulated: %s.\n",
		policy.LearnedBase, strings.Join(report.EscapeAll(l.specs), ", "))

	md.WriteString(l.againstRulesText(ev))
	md.WriteString(l.servingText())
	text, cs, err := l.predictionErrorText(ev)
	if err != nil {
		return report.Section{}, err
	}
	md.WriteString(text)
	charts = append(charts, cs...)
	md.WriteString(l.decisionCostText(confidenceOf(ev)))
	return report.Section{Title: "Learned decisions", Markdown: md.String(), Charts: charts}, nil
}

// againstRulesText sets each learned spec against its counterparts, one
// table of paired differences each.
func (l *runs) againstRulesText(ev *section.Evaluation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The network against the rules\n\nEach learned spec first against its controlled ablations, each of which changes one thing: "+
		"the Threshold rule (move a waiting job when the predicted gain exceeds schedule.migration.min_gain) asked exactly as the network is, so that only the network differs, "+
		"and the network with its decisions costing nothing, so that only their cost differs. Then against plain %s with the same options, with the Threshold rule as +migrate asks it "+
		"(at once, stopping at its first no, where the learned policy asks about a candidate for every free lane), and with no migration. "+
		"All ran the same jobs with the same ground-truth draws in %s, so each difference is paired: "+
		"learned minus the other, with its %.0f%% interval (the first paragraph says how); an interval that contains zero is no difference.\n",
		policy.LearnedBase, section.ReplicationsText(ev.Replications), 100*ev.Config.Confidence)
	var missing []string
	for _, c := range l.comparisons {
		if !c.simulated {
			counterpart := report.Escape(c.counterpart)
			missing = append(missing, fmt.Sprintf("%s (%s, with %s's options; %s)", counterpart, c.rule, report.Escape(c.learned), c.enable))
			continue
		}
		learned, counterpart := report.Escape(c.learned), report.Escape(c.counterpart)
		fmt.Fprintf(&b, "\n**%s against %s** (%s):\n\n", learned, counterpart, c.rule)
		t := report.NewTable("metric", ">"+learned, ">"+counterpart, ">difference (interval)", learned+" is")
		var better, worse, same []string
		for _, o := range section.Headline() {
			i := slices.IndexFunc(c.diffs, func(x metrics.Difference) bool { return x.Metric == o.Diff })
			if i < 0 {
				continue
			}
			x := c.diffs[i]
			v := o.Verdict(x)
			name := lowerFirst(o.Name)
			switch v {
			case "better":
				better = append(better, name)
			case "worse":
				worse = append(worse, name)
			case "no difference":
				same = append(same, name)
			default:
				v = "–"
			}
			t.Add(o.Name, o.Format(x.PolicyValue), o.Format(x.BaselineValue), section.DiffText(x, o.Delta), v)
		}
		b.WriteString(t.String())
		fmt.Fprintf(&b, "\n%s\n", judged(learned, better, worse, same, "no different on"))
		if strings.HasSuffix(c.counterpart, "~"+policy.AblateFree) && len(better) > 0 {
			// Paying for decisions should not help: only their cost
			// differs between the two.
			fmt.Fprintf(&b, "\n**Against expectation**, %s, whose decisions cost time on the simulated clock, is better than %s, whose decisions cost nothing, on %s: "+
				"more than noise at %.0f%%. The likeliest cause, which this report cannot test: %s\n",
				learned, counterpart, report.AndList(better), 100*ev.Config.Confidence, costCause)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "\nNot simulated: %s.\n", missing[0])
	default:
		fmt.Fprintf(&b, "\nNot simulated:\n\n- %s\n", strings.Join(missing, "\n- "))
	}
	return b.String()
}

// chargedText says, for each learned spec's first replication, what the
// simulation charged a decision and from what (serving.parquet's
// cost_source): a draw from the profile's timing of the serving path, the
// tight-loop mlp's mean of a profile without it, or a configured
// duration; and, where the schedule noted them, sets the charge's median
// and P99 beside the wall-clock median and P99 of the uncached serving
// path, so that a charge that flatters the learned policy shows.
func (l *runs) chargedText() string {
	var parts []string
	for _, spec := range l.specs {
		if len(l.serving[spec]) == 0 {
			continue
		}
		r := l.serving[spec][0]
		part := report.Escape(spec) + " was charged " + chargeText(r)
		w, ok := l.wall[runName(spec, 1)]
		p := w.paths[slices.Index(servingPaths, "uncached")]
		switch {
		case ok && w.evaluator != schedulespec.EvaluatorONNXRuntime:
			part += ", with no served time in this run to set it beside: the Go forward pass computed its decisions, " +
				"onnxruntime's at a fraction of onnxruntime's time (schedule.learned.evaluator: onnxruntime times onnxruntime)"
		case ok && p.taken && p.p50 > 0:
			p99 := chargeP99(r)
			if r.CostSource == schedulespec.CostServing {
				part += fmt.Sprintf(": %.2f× and %.2f× the median (%s) and P99 (%s) that the uncached serving path took on the wall clock in this run",
					r.CostS/p.p50, p99/p.p99, report.Secs(p.p50), report.Secs(p.p99))
			} else {
				part += fmt.Sprintf(", %.2f× the uncached serving path's median on the wall clock in this run (%s) and %.2f× its P99 (%s)",
					r.CostS/p.p50, report.Secs(p.p50), p99/p.p99, report.Secs(p.p99))
			}
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\n**Charged against served.** The simulated clock charges each batch of decisions what schedule.learned.cost says, and serving.parquet "+
		"records what that was: with profile, by default, a draw per batch from the profile's timing of the serving path at the batch's size "+
		"(profile.serving: the same placementnet calls, on a network of the same shape, each call timed on the wall clock), keyed to the replication's seed and "+
		"the batch's ordinal; a profile without that timing falls back to its mean for the zoo's mlp, the same 10-64-64-1 network timed in a tight loop. "+
		"In the first replication, %s. A charge below the served time flatters the learned policy by that much; the learned~free ablation above bounds "+
		"what all of the charge is worth.\n", strings.Join(parts, "; "))
}

// chargeText says what a serving row's decisions were charged, and from
// what.
func chargeText(r schedulespec.ServingRow) string {
	switch r.CostSource {
	case schedulespec.CostServing:
		return fmt.Sprintf("draws from the serving path's measured distribution, %s at the median and %s at P99 for a batch of one decision",
			report.Secs(r.CostS), report.Secs(r.CostP99S))
	case schedulespec.CostTightLoop:
		return fmt.Sprintf("the tight-loop fallback, %s a decision (the profile's mean for its mlp, a tight loop's figure rather than this serving path's: "+
			"the profile has no timing of the serving path, being measured before profile.serving or imported without it)", report.Secs(r.CostS))
	case schedulespec.CostConfigured:
		return fmt.Sprintf("the configured %s a decision (schedule.learned.cost)", report.Secs(r.CostS))
	}
	return fmt.Sprintf("%s a decision (the schedule artifact does not say from what: it was made before serving.parquet recorded it)", report.Secs(r.CostS))
}

// chargeP99 is a serving row's P99 charge for one decision: cost_p99_s,
// or cost_s where the row predates it (a fixed charge).
func chargeP99(r schedulespec.ServingRow) float64 {
	if r.CostSource == "" {
		return r.CostS
	}
	return r.CostP99S
}

// sourceText names a decision cost's source in a table cell.
func sourceText(src string) string {
	switch src {
	case schedulespec.CostServing:
		return "serving path (profile)"
	case schedulespec.CostTightLoop:
		return "tight-loop mlp (profile)"
	case schedulespec.CostConfigured:
		return "configured"
	}
	return "–"
}

// judged says what a comparison found, plainly: "learned is better on
// a and b; worse on c; no different on d."
func judged(subject string, better, worse, same []string, sameWord string) string {
	var parts []string
	if len(better) > 0 {
		parts = append(parts, "better on "+report.AndList(better))
	}
	if len(worse) > 0 {
		parts = append(parts, "worse on "+report.AndList(worse))
	}
	if len(same) > 0 {
		parts = append(parts, sameWord+" "+report.AndList(same))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is %s.", subject, strings.Join(parts, "; "))
}

// servingText tabulates serving.parquet and the noted wall-clock figures
// of every learned run.
func (l *runs) servingText() string {
	var b strings.Builder
	b.WriteString("\n### Serving\n\nWhat serving the network's decisions did in each learned simulation (serving.parquet): the decisions it asked, " +
		"the migrations it made, how many decisions were answered together on average, the calls of the network, the share of decisions the " +
		"decision cache answered and how many of those hits it got wrong against an exact evaluation (counted when schedule.learned.cache.audit " +
		"is on), and what a decision was charged on the simulated clock (for a batch of one: the median, and the P99 where the charge is drawn) and from what.\n\n")
	t := report.NewTable("run", ">decisions", ">migrations", ">mean batch", ">network calls", ">hit rate", ">changed by the cache", ">charged a decision", "charged from")
	for _, spec := range l.specs {
		for k, s := range l.serving[spec] {
			changed := fmt.Sprintf("%d (%s of hits)", s.CacheChanged, report.Pct(float64(s.CacheChanged)/float64(s.CacheHits)))
			switch {
			case s.CacheHits == 0:
				changed = "0 (no hits)"
			case s.Evaluated < s.Decisions:
				changed = "– (not audited)" // the hits were not evaluated
			}
			charged := report.Secs(s.CostS)
			if s.CostSource == schedulespec.CostServing {
				charged = fmt.Sprintf("%s (P99 %s)", report.Secs(s.CostS), report.Secs(s.CostP99S))
			}
			t.Add(report.Escape(runName(spec, k+1)), fmt.Sprint(s.Decisions), fmt.Sprint(s.Migrations), fmt.Sprintf("%.2f", s.MeanBatch), fmt.Sprint(s.Calls),
				report.Pct(s.HitRate), changed, charged, sourceText(s.CostSource))
		}
	}
	b.WriteString(t.String())

	b.WriteString("\n**Wall clock.** The schedule stage timed each decision as it served it and left the figures in its manifest's notes " +
		"(`serving:<run>:<figure>`). They come from this run's notes: they measure this machine while the other simulations ran beside it, " +
		"and differ from run to run, unlike every other number of this report. Uncached is one decision alone through the run's evaluator: " +
		"onnxruntime, or the forward pass in Go (go), which asks onnxruntime too about the few decisions whose answer lies too close " +
		"to the threshold for the two to be sure to agree, so that every decision is onnxruntime's (the count it referred follows its name); " +
		"batched is a decision of a batch (the call's time over its decisions); a cache hit includes standardising the inputs and " +
		"computing the key. Only the uncached path is measured here as its target is, and only onnxruntime's meets the targets' terms; " +
		"the batched and cache-hit targets are benchmark figures (a decision at batch " + strconv.Itoa(targetBatch) + ", the lookup alone), given for scale.\n\n")
	t = report.NewTable("run", "evaluator", "path", ">decisions", ">P50", ">P99", "target")
	var none, inference []string
	for _, spec := range l.specs {
		for k := range l.serving[spec] {
			run := runName(spec, k+1)
			w, ok := l.wall[run]
			if !ok {
				none = append(none, report.Escape(run))
				continue
			}
			for i, p := range w.paths {
				if !p.taken {
					continue
				}
				var path, target string
				switch servingPaths[i] {
				case "uncached":
					path = "uncached: one decision"
					target = fmt.Sprintf("P50 ≤ %s: %s; P99 ≤ %s: %s", report.Secs(targetUncachedP50), metText(p.p50 <= targetUncachedP50),
						report.Secs(targetUncachedP99), metText(p.p99 <= targetUncachedP99))
					if w.evaluator != schedulespec.EvaluatorONNXRuntime {
						target = "– (onnxruntime's target; the Go pass served)"
					}
				case "batched":
					path = "batched: per decision"
					target = fmt.Sprintf("≤ %s at batch %d (benchmark); batches here average %.2f decisions", report.Secs(targetBatched), targetBatch, l.serving[spec][k].MeanBatch)
				case "cached":
					path = "cache hit, with standardising and the key"
					target = fmt.Sprintf("≤ %.0f ns for the lookup alone (benchmark)", targetCached*1e9)
				}
				t.Add(report.Escape(run), w.evaluatorText(), path, fmt.Sprint(p.n), report.Secs(p.p50), report.Secs(p.p99), target)
			}
			if !math.IsNaN(w.inference) {
				inference = append(inference, fmt.Sprintf("%s %s", report.Escape(run), report.Secs(w.inference)))
			}
		}
	}
	if t.Len() > 0 {
		b.WriteString(t.String())
	}
	if len(inference) > 0 {
		fmt.Fprintf(&b, "\nTime in the evaluator in all: %s.\n", strings.Join(inference, ", "))
	}
	b.WriteString(l.chargedText())
	if len(none) > 0 {
		fmt.Fprintf(&b, "\nThe schedule artifact's manifest notes no wall-clock serving figures for %s.\n", report.AndList(none))
	}
	return b.String()
}

func metText(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

// lowerFirst lowers a name's first letter for use inside a sentence,
// unless it starts an acronym or a symbol ("SLO", "P99").
func lowerFirst(s string) string {
	if len(s) < 2 || !unicode.IsLower(rune(s[1])) {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// evaluatorText names a run's evaluator in a table cell, with the points
// the Go pass's guard referred to onnxruntime.
func (w wallClock) evaluatorText() string {
	if w.evaluator == schedulespec.EvaluatorGo {
		return fmt.Sprintf("go (%d referred)", w.referred)
	}
	return w.evaluator
}
