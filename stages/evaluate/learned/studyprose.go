package learned

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// predictionErrorText charts the prediction-error study: per metric, a
// line per policy over the table's errors with train's predictor marked,
// a table of the values and a sentence on who degrades most.
func (l *runs) predictionErrorText(ev *section.Evaluation) (string, []report.Chart, error) {
	rows := l.study(schedulespec.StudyPredictionError)
	if len(rows) == 0 {
		return "", nil, nil
	}
	s := newPredictionError(rows, ev.Policies, confidenceOf(ev))
	s.style = ev.Style
	var b strings.Builder
	withTrain, crosses, alt := "", "", ""
	if slices.ContainsFunc(s.conditions, func(c condition) bool { return c.predictor != schedulespec.PredictorTable }) {
		withTrain = ", and with train's predictor"
		crosses = ", and its cross is its result with train's predictor"
		alt = ", a cross for each policy's result with train's predictor"
	}
	fmt.Fprintf(&b, "\n### Sensitivity to prediction error\n\nThe prediction-error study (schedule.studies) simulated every policy that reads predictions "+
		"on the first %d eval jobs at schedule.load, predicting with the profile's mean latencies, exact and scaled per job by 1 ± e for each "+
		"error e%s. %s The x axis is how far the predictions were from the means (their MAPE); each policy's line runs over the errors%s.\n",
		s.jobs, withTrain, repsText(s.reps), crosses)
	first := studyInteractive
	if !s.hasFinite(studyInteractive) {
		first = studySLO // no interactive jobs
	}
	// Many policies draw the featured few (the recommendation, the
	// runner-up and the baselines, those of them that read predictions),
	// every policy's chart folded beneath, as the latency and sweep
	// sections do.
	var few []string
	if len(s.policies) > section.Crowded {
		for _, i := range ev.Featured() {
			if p := ev.Policies[i]; slices.Contains(s.policies, p) {
				few = append(few, p)
			}
		}
	}
	crowd := len(few) > 0 && len(few) < len(s.policies)
	var charts []report.Chart
	for _, m := range []struct {
		metric studyMetric
		name   string
	}{{first, "prediction-error-slo"}, {studyMean, "prediction-error-mean-e2e"}} {
		what := fmt.Sprintf("%s against the predictions' MAPE, one line per policy%s", report.Capitalize(m.metric.name), alt)
		shown, link := s.policies, func(c report.Chart) string { return c.Link(what) }
		if crowd {
			names := make([]string, len(few))
			for i, p := range few {
				names[i] = report.Escape(p)
			}
			shown = few
			link = func(c report.Chart) string {
				return c.Link(fmt.Sprintf("%s: %s (the recommendation, the runner-up and the baselines)", what, strings.Join(names, ", ")))
			}
		}
		c, err := s.chart(m.metric, m.name+".svg", shown)
		if err != nil {
			return "", nil, err
		}
		if c != nil {
			charts = append(charts, *c)
			fmt.Fprintf(&b, "\n%s\n", link(*c))
			if crowd {
				all, err := s.chart(m.metric, m.name+"-all.svg", s.policies)
				if err != nil {
					return "", nil, err
				}
				charts = append(charts, *all)
				fmt.Fprintf(&b, "\n%s\n", all.Detail(fmt.Sprintf("%s, every policy (%d)", what, len(s.policies))))
			}
		}
		fmt.Fprintf(&b, "\n%s\n%s", s.table(m.metric), s.degradeText(m.metric))
	}
	return b.String(), charts, nil
}

// chart draws one metric of the study for policies (the study's, or some
// of them); nil when none has a value.
func (s *predictionError) chart(m studyMetric, name string, policies []string) (*report.Chart, error) {
	var series []chart.Series
	var marks []chart.Mark
	lo := math.Inf(1)
	for _, p := range policies {
		sr := chart.Series{Name: p}
		if s.style != nil {
			sr.Style = s.style(p)
		}
		for _, c := range s.tableErrors() {
			if r, ok := s.at[p][c]; ok && !math.IsNaN(r.mean(m)) {
				sr.X, sr.Y = append(sr.X, r.mape()), append(sr.Y, r.mean(m))
				lo = math.Min(lo, r.mean(m))
			}
		}
		var mk []chart.Mark
		for _, c := range s.conditions {
			if c.predictor == schedulespec.PredictorTable {
				continue
			}
			if r, ok := s.at[p][c]; ok && !math.IsNaN(r.mean(m)) {
				mk = append(mk, chart.Mark{Series: len(series), X: r.mape(), Y: r.mean(m)})
				lo = math.Min(lo, r.mean(m))
			}
		}
		if len(sr.X) == 0 {
			continue // a line needs a point; its crosses go with it
		}
		series = append(series, sr)
		marks = append(marks, mk...)
	}
	if len(series) == 0 {
		return nil, nil
	}
	opts := chart.LineOptions{Marks: marks, MarksLabel: "train's predictor"}
	if hi := maxOf(series); !m.higher && lo > 0 && hi/lo > 100 {
		// Latencies from milliseconds to minutes: on a linear axis every
		// policy but the worst would sit on zero.
		opts.LogY = true
	}
	if m.higher {
		// Attainment: up to 100%, down far enough below the lowest value
		// that the differences show, at least a percentage point.
		span := math.Max(1-lo, 0.01)
		opts.YMax, opts.YMin = new(1.0), new(math.Max(0, math.Floor(100*(1-1.25*span))/100))
	}
	svg, err := chart.Lines(fmt.Sprintf("%s against prediction error", report.Capitalize(m.name)), "MAPE of the predictions against the profile's means (fraction)", m.axis, series, opts)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	return &report.Chart{Name: name, SVG: svg}, nil
}

// table gives one metric of every policy under every condition, under a
// first row of the conditions' prediction MAPE (in the cells instead
// where the policies' differ).
func (s *predictionError) table(m studyMetric) string {
	head := []string{"policy"}
	mape := []string{"*prediction MAPE*"}
	shared := map[condition]bool{}
	for _, c := range s.conditions {
		head = append(head, ">"+report.Escape(c.String()))
		v, ok := s.mapeText(c)
		if !ok {
			v = "varies"
		}
		mape = append(mape, "*"+v+"*")
		shared[c] = ok
	}
	t := report.NewTable(head...)
	t.Add(mape...)
	for _, p := range s.policies {
		row := []string{report.Escape(p)}
		for _, c := range s.conditions {
			r, ok := s.at[p][c]
			switch {
			case !ok:
				row = append(row, "–")
			case shared[c]:
				row = append(row, m.format(r.mean(m)))
			default:
				row = append(row, fmt.Sprintf("%s (MAPE %s)", m.format(r.mean(m)), report.Pct(r.mape())))
			}
		}
		t.Add(row...)
	}
	return t.String()
}

func (m studyMetric) changeText(from, to float64) string {
	if m.higher {
		return report.Signed(to-from, report.PctPts)
	}
	return fmt.Sprintf("%+.1f%%", 100*(to/from-1))
}

// degradeText says which policies degrade most and least in m from
// exact predictions to the largest error, and then, for every policy
// that worse predictions left better off, whether that is more than
// noise (unexpectedText).
func (s *predictionError) degradeText(m studyMetric) string {
	errs := s.tableErrors()
	if len(errs) < 2 || errs[0].err != 0 {
		return ""
	}
	exact, worst := errs[0], errs[len(errs)-1]
	ms := s.moves(m, exact, worst)
	if len(ms) == 0 {
		return ""
	}
	span := fmt.Sprintf("from exact predictions to %s", report.Escape(worst.String()))
	if v, ok := s.mapeText(worst); ok {
		span += " (MAPE " + v + ")"
	}
	var better []unexpected
	for _, x := range ms {
		if x.by < 0 {
			better = append(better, unexpected{subject: x.policy, from: x.from, to: x.to, iv: x.iv, cause: predictionCause(x.policy)})
		}
	}
	// One paragraph for each: the largest error, then each predictor.
	var surprises []string
	for _, u := range append([]string{unexpectedText(m, "worse predictions", better, s.reps, s.confidence)}, s.predictorSurprises(m, exact)...) {
		if u != "" {
			surprises = append(surprises, u)
		}
	}
	surprise := strings.Join(surprises, "\n")
	// Most degraded first; ties keep schedule's order.
	slices.SortStableFunc(ms, func(a, b moved) int {
		switch {
		case a.by > b.by:
			return -1
		case a.by < b.by:
			return 1
		}
		return 0
	})
	top, bottom := ms[0], ms[len(ms)-1]
	names := func(by float64) string {
		var out []string
		for _, x := range ms {
			if x.by == by {
				out = append(out, "**"+report.Escape(x.policy)+"**")
			}
		}
		return report.AndList(out)
	}
	what := func(x moved) string {
		return fmt.Sprintf("%s → %s (%s)", m.format(x.from), m.format(x.to), m.changeText(x.from, x.to))
	}
	verb := "loses the most"
	if !m.higher {
		verb = "grows the most"
	}
	var text string
	switch {
	case top.by == 0 && bottom.by == 0:
		text = fmt.Sprintf("No policy's %s moves %s.\n", m.name, span)
	case top.by <= 0:
		text = fmt.Sprintf("No policy's %s gets worse %s; %s improves the most: %s.\n", m.name, span, names(bottom.by), what(bottom))
	case top.by == bottom.by:
		text = fmt.Sprintf("%s, every policy's %s moves alike: %s.\n", report.Capitalize(span), m.name, what(top))
	case !m.higher:
		subject := names(top.by) + "'s " + m.name + " " + verb
		text = fmt.Sprintf("%s, %s: %s; at the other end, %s: %s.\n", report.Capitalize(span), subject, what(top), names(bottom.by), what(bottom))
	default:
		text = fmt.Sprintf("%s, %s %s %s: %s; at the other end, %s: %s.\n", report.Capitalize(span), names(top.by), verb, m.name, what(top), names(bottom.by), what(bottom))
	}
	if surprise != "" {
		text += "\n" + surprise
	}
	return text
}

// moved is how a policy's figure went from one condition of the study to
// another.
type moved struct {
	policy   string
	from, to float64
	by       float64 // positive: worse
	iv       outputanalysis.Interval
}

// moves is how each policy with a finite change in m went from condition
// a to condition z, with its paired interval.
func (s *predictionError) moves(m studyMetric, a, z condition) []moved {
	var ms []moved
	for _, p := range s.policies {
		ca, okA := s.at[p][a]
		cz, okZ := s.at[p][z]
		if !okA || !okZ {
			continue
		}
		from, to := ca.mean(m), cz.mean(m)
		by := m.change(from, to)
		if math.IsNaN(by) || math.IsInf(by, 0) {
			continue
		}
		ms = append(ms, moved{p, from, to, by, change(m, ca, cz, s.confidence)})
	}
	return ms
}

// predictorSurprises says, for each predictor other than the table (train's),
// which policies it leaves better off in m than exact predictions, and
// whether that is more than noise (unexpectedText): its predictions are
// further from the means, so it goes against expectation as the largest
// error does.
func (s *predictionError) predictorSurprises(m studyMetric, exact condition) []string {
	var out []string
	for _, c := range s.conditions {
		if c.predictor == schedulespec.PredictorTable {
			continue
		}
		var better []unexpected
		for _, x := range s.moves(m, exact, c) {
			if x.by < 0 {
				better = append(better, unexpected{subject: x.policy, from: x.from, to: x.to, iv: x.iv, cause: predictorCause})
			}
		}
		agent := "train's predictor"
		if c.predictor != schedulespec.PredictorLearned {
			agent = "predictor " + report.Escape(c.predictor)
		}
		if v, ok := s.mapeText(c); ok {
			agent += "'s predictions (MAPE " + v + " against the means)"
		} else {
			agent += "'s predictions"
		}
		out = append(out, unexpectedText(m, agent, better, s.reps, s.confidence))
	}
	return out
}

// decisionCostText tabulates the decision-cost study, each figure the
// mean over its replications, and says what the dearest decisions do to
// each learned policy against the cheapest.
func (l *runs) decisionCostText(confidence float64) string {
	rows := l.study(schedulespec.StudyDecisionCost)
	if len(rows) == 0 {
		return ""
	}
	costs := costCells(rows)
	reps := 0
	for _, c := range costs {
		reps = max(reps, len(c))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The cost of a decision\n\nThe decision-cost study (schedule.studies) simulated each learned policy on the first %d eval jobs "+
		"at schedule.load with its decisions costing schedule.learned.cost and each of schedule.studies.decision_costs on the simulated "+
		"clock. Per decision is a batch of one decision's median charge: a duration is what any batch costs, and profile charges a batch a draw "+
		"from the profile's timing of the serving path at its size, or, for a profile without that timing, its tight-loop mlp's mean (charged from). %s\n\n",
		rows[0].Jobs, repsText(reps))
	t := report.NewTable("policy", "cost", ">per decision", "charged from", ">SLO attainment", ">interactive SLO attainment", ">mean e2e", ">P99 e2e")
	for _, c := range costs {
		first := c[0]
		t.Add(report.Escape(first.Policy), report.Escape(first.DecisionCost), report.Secs(first.DecisionCostS), sourceText(first.DecisionCostSource),
			report.Pct(c.mean(studySLO)), report.Pct(c.mean(studyInteractive)), report.Secs(c.mean(studyMean)), report.Secs(c.mean(studyP99)))
	}
	b.WriteString(t.String())
	for _, spec := range l.specs {
		var own []cell
		for _, c := range costs {
			if c[0].Policy == spec {
				own = append(own, c)
			}
		}
		if text := costText(spec, own, reps, confidence); text != "" {
			b.WriteString("\n" + text + "\n")
		}
	}
	return b.String()
}

// costCells groups the decision-cost study's rows by policy and cost,
// one cell each, in the study's order.
func costCells(rows []schedulespec.StudyRow) []cell {
	var out []cell
	index := map[[2]string]int{}
	for _, r := range rows {
		k := [2]string{r.Policy, r.DecisionCost}
		i, ok := index[k]
		if !ok {
			i, index[k] = len(out), len(out)
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	for _, c := range out {
		slices.SortFunc(c, func(a, b schedulespec.StudyRow) int { return cmp.Compare(a.Replication, b.Replication) })
	}
	return out
}

// costText compares a learned policy's dearest decisions with its
// cheapest, each change with its paired interval, and says where the
// dearest did better (unexpectedText).
func costText(spec string, cells []cell, reps int, confidence float64) string {
	if len(cells) < 2 {
		return ""
	}
	cheap, dear := cells[0], cells[0]
	for _, c := range cells[1:] {
		if c[0].DecisionCostS < cheap[0].DecisionCostS {
			cheap = c
		}
		if c[0].DecisionCostS > dear[0].DecisionCostS {
			dear = c
		}
	}
	if cheap[0].DecisionCostS == dear[0].DecisionCostS {
		return ""
	}
	att := studyInteractive
	if math.IsNaN(cheap.mean(studyInteractive)) || math.IsNaN(dear.mean(studyInteractive)) {
		att = studySLO
	}
	var better, worse, same, parts []string
	var surprises []string
	for _, m := range []studyMetric{att, studyMean, studyP99} {
		from, to := cheap.mean(m), dear.mean(m)
		iv := change(m, cheap, dear, confidence)
		part := fmt.Sprintf("%s %s against %s: %s", m.name, m.format(to), m.format(from), m.deltaText(iv))
		if !m.higher {
			part += ", " + m.changeText(from, to)
		}
		parts = append(parts, part)
		switch by := m.change(from, to); {
		case !math.IsNaN(iv.Lo) && iv.Covers(0):
			same = append(same, m.name) // within noise
		case by > 0:
			worse = append(worse, m.name)
		case by < 0:
			better = append(better, m.name)
			u := unexpected{subject: spec, from: from, to: to, iv: iv, cause: costCause}
			surprises = append(surprises, unexpectedText(m, "the dearest decisions", []unexpected{u}, reps, confidence))
		case by == 0:
			same = append(same, m.name)
		}
	}
	sameWord := "unchanged in"
	if reps > 1 {
		sameWord = "no different (the interval holds zero) on"
	}
	text := fmt.Sprintf("**%s at %s a decision** (%s, the dearest) against %s (%s, the cheapest): %s. With the dearest decisions, %s",
		report.Escape(spec), report.Secs(dear[0].DecisionCostS), report.Escape(dear[0].DecisionCost), report.Secs(cheap[0].DecisionCostS), report.Escape(cheap[0].DecisionCost), strings.Join(parts, "; "),
		judged(report.Escape(spec), better, worse, same, sameWord))
	for _, s := range surprises {
		text += "\n\n" + strings.TrimSuffix(s, "\n")
	}
	return text
}

// maxOf is the largest y of the series.
func maxOf(series []chart.Series) float64 {
	hi := math.Inf(-1)
	for _, s := range series {
		for _, y := range s.Y {
			hi = math.Max(hi, y)
		}
	}
	return hi
}
