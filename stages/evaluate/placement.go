package evaluate

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// placementSection shows the placement network: its labels, training
// curve and scores on the test points beside the rules it competes with;
// left out without the train artifact.
type placementSection struct{ train *trainArtifact }

var _ section.Section = (*placementSection)(nil)

func (*placementSection) Name() string { return "placement" }

// Read reads the train artifact, unless the predictor's section did.
func (s *placementSection) Read(ev *section.Evaluation) error { return s.train.load(ev.Train) }

// Rows are the network's scores on the test points.
func (s *placementSection) Rows(*section.Evaluation) []MetricRow {
	return placementRows(s.train.trained)
}

// Render shows the labels, the training and the scores.
func (s *placementSection) Render(*section.Evaluation) (report.Section, error) {
	return renderPlacement(s.train.trained)
}

// placementRows are the placement network's headline numbers for
// metrics.parquet: its scores on the test points, with their intervals
// and regret, and the same on the holdout workload's points (metric
// holdout_<name>).
func placementRows(t *trained) []MetricRow {
	if t == nil || t.untrained {
		return nil
	}
	var rows []MetricRow
	for _, split := range []string{trainspec.SplitTest, trainspec.SplitHoldout} {
		prefix := ""
		if split == trainspec.SplitHoldout {
			prefix = split + "_"
		}
		for _, m := range []string{"accuracy", "auc", "log_loss", "ece", trainspec.MetricRegretS, trainspec.MetricRegretMisses} {
			v, ok := t.value(trainspec.ModelPlacement, trainspec.SectionScore, split, trainspec.ScorerNetwork, m)
			if !ok {
				continue
			}
			row := MetricRow{Scope: section.ScopePlacement, Metric: prefix + m, Value: v}
			lo, okLo := t.value(trainspec.ModelPlacement, trainspec.SectionScore, split, trainspec.ScorerNetwork, m+"_lo")
			hi, okHi := t.value(trainspec.ModelPlacement, trainspec.SectionScore, split, trainspec.ScorerNetwork, m+"_hi")
			if okLo && okHi {
				row.Lo, row.Hi = new(lo), new(hi)
			}
			rows = append(rows, row)
		}
	}
	// How often each other labelling agrees with the configured one
	// (metric label_agreement_<labelling>, as train names it).
	for _, a := range t.alternatives() {
		v, ok := t.value(trainspec.ModelLabels, trainspec.SectionAgreement, "", a, "agreement")
		if !ok {
			continue
		}
		row := MetricRow{Scope: section.ScopePlacement, Metric: "label_agreement_" + a, Value: v}
		lo, okLo := t.value(trainspec.ModelLabels, trainspec.SectionAgreement, "", a, "agreement_lo")
		hi, okHi := t.value(trainspec.ModelLabels, trainspec.SectionAgreement, "", a, "agreement_hi")
		if okLo && okHi {
			row.Lo, row.Hi = new(lo), new(hi)
		}
		rows = append(rows, row)
	}
	return rows
}

// scorerNames say what the placement scorers are.
var scorerNames = map[string]string{
	trainspec.ScorerNetwork:     "network",
	trainspec.ScorerThreshold:   "threshold rule",
	trainspec.ScorerBestFeature: "best single feature",
}

func scorerName(s string) string { return cmp.Or(scorerNames[s], s) }

// scorerRules say what a rule that metrics.parquet does not describe
// does.
var scorerRules = map[string]string{
	trainspec.ScorerThreshold: "migrate when the predicted gain exceeds schedule.migration.min_gain",
}

// ruleRow matches the best single-feature rule's description, as
// placement.Rule.String writes it: "x[3] < 0.05".
var ruleRow = regexp.MustCompile(`^x\[(\d+)\] ([<>]) `)

// rules returns each scorer's rule, in words and as Markdown, from the rows whose metric
// describes it ("rule: x[3] < 5e-05", the value its threshold); the
// feature is named from decisions.parquet's footer where it lists it.
func (t *trained) rules() map[string]string {
	out := map[string]string{}
	for _, r := range t.rows {
		text, ok := strings.CutPrefix(r.Metric, "rule: ")
		if r.Model != trainspec.ModelPlacement || r.Section != trainspec.SectionScore || !ok {
			continue
		}
		if m := ruleRow.FindStringSubmatch(text); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(t.features) {
				// The comparison stays as written: "<" before a space
				// starts no tag.
				out[r.Candidate] = fmt.Sprintf("migrate when %s %s %s", report.Escape(t.features[i]), m[2], report.Num(r.Value))
				continue
			}
		}
		out[r.Candidate] = report.Escape(text)
	}
	return out
}

// renderPlacement is the Placement network section; untitled without the
// train artifact.
func renderPlacement(t *trained) (report.Section, error) {
	if t == nil {
		return report.Section{}, nil
	}
	if t.untrained {
		return report.Section{Title: "Placement network", Markdown: "The placement network was not trained: no policy of schedule.policies or schedule.real.policies " +
			"is served by it (a learned policy is), so train trained the service-time predictor alone.\n"}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	add := func(name, alt string, svg []byte, err error) error {
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		c := report.Chart{Name: name, SVG: svg}
		charts = append(charts, c)
		fmt.Fprintf(&md, "\n%s\n", c.Link(alt))
		return nil
	}
	scorers := t.scorers()
	rules := t.rules()
	md.WriteString("The placement network (ten inputs, two hidden layers of 64, a sigmoid output) says whether to move a waiting job to another device. " +
		"It learns from decision points of simulations of the train workload, each labelled by playing it both ways in forked simulations: " +
		"migrate when moving did better than staying. It is scored on held-out test points beside rules that need no network")
	var others []string
	for _, s := range scorers {
		if s == trainspec.ScorerNetwork {
			continue
		}
		o := report.Escape(scorerName(s))
		switch r, ok := rules[s]; {
		case ok:
			o += " (" + r + ", fitted to the training points)"
		case scorerRules[s] != "":
			o += " (" + scorerRules[s] + ")"
		}
		others = append(others, o)
	}
	switch n := len(others); {
	case n == 1:
		md.WriteString(": the " + others[0])
	case n > 1:
		md.WriteString(": the " + strings.Join(others[:n-1], ", the ") + " and the " + others[n-1])
	}
	md.WriteString(".\n\n")
	md.WriteString(labelsText(t))
	md.WriteString(agreementText(t))

	// The training curve.
	eps := t.epochs()
	var train, val chart.Series
	train.Name, val.Name = "training loss", "validation loss"
	best := -1
	for i, e := range eps {
		train.X, train.Y = append(train.X, float64(e.n)), append(train.Y, e.trainLoss)
		val.X, val.Y = append(val.X, float64(e.n)), append(val.Y, e.valLoss)
		if e.best == 1 && best < 0 {
			best = i
		}
	}
	fmt.Fprintf(&md, "\n### Training\n\nTraining ran %d epochs", len(eps))
	opts := chart.LineOptions{YMin: new(0.0), NoMarkers: true}
	if best >= 0 {
		b := eps[best]
		opts.VLine, opts.VLineLabel = new(float64(b.n)), fmt.Sprintf("best epoch (%d)", b.n)
		fmt.Fprintf(&md, "; the lowest validation loss, %s at epoch %d, gives the weights the network keeps (validation accuracy there %s)",
			report.Num(b.valLoss), b.n, report.Pct(b.valAccuracy))
	}
	md.WriteString(".\n")
	svg, err := chart.Lines("Placement network: loss per epoch", "epoch", "cross-entropy loss", []chart.Series{train, val}, opts)
	if err := add("placement-training.svg", "Training and validation loss of the placement network per epoch, the best epoch marked", svg, err); err != nil {
		return report.Section{}, err
	}

	// The scores.
	n, pos := t.placementScore(scorers[0], "n"), t.placementScore(scorers[0], "positives")
	fmt.Fprintf(&md, "\n### Scores on the test points\n\nThe %s test points include %s labelled migrate (%s): a scorer that never migrates is right on %s of them.\n\n",
		count(n), count(pos), report.Pct(pos/n), report.Pct(1-pos/n))
	md.WriteString(t.scoresTable(trainspec.SplitTest, scorers))
	md.WriteString("\nThe last four columns are each scorer's confusion matrix: TP migrated where moving did better, FP migrated where staying did, " +
		"FN stayed where moving did better, TN stayed where staying did. AUC is the chance that a point labelled migrate scores above one " +
		"labelled stay (0.5: no better than chance); log loss and ECE (the expected calibration error) judge the probability of migrate " +
		"each scorer gives.\n")
	if hn := t.placementScoreOn(trainspec.SplitHoldout, scorers[0], "n"); !math.IsNaN(hn) {
		hpos := t.placementScoreOn(trainspec.SplitHoldout, scorers[0], "positives")
		fmt.Fprintf(&md, "\n### Scores on a workload training never touched\n\nThe same scorers on %s decision points labelled the same way from generate's holdout "+
			"workload (another seed and arrival process than the train workload's, and never the eval workload): %s labelled migrate (%s), so a scorer "+
			"that never migrates is right on %s of them. The rules keep the thresholds they were fitted with on the training points.\n\n",
			count(hn), count(hpos), report.Pct(hpos/hn), report.Pct(1-hpos/hn))
		md.WriteString(t.scoresTable(trainspec.SplitHoldout, scorers))
	}
	var roc []chart.Series
	for _, s := range scorers {
		fpr, tpr := t.roc(s)
		if len(fpr) > 0 {
			roc = append(roc, chart.Series{Name: fmt.Sprintf("%s (AUC %s)", scorerName(s), report.Num(t.placementScore(s, "auc"))), X: fpr, Y: tpr})
		}
	}
	if len(roc) > 0 {
		svg, err := chart.Lines("ROC on the test points", "false positive rate (stay points migrated)", "true positive rate (migrate points migrated)", roc,
			chart.LineOptions{YMin: new(0.0), YMax: new(1.0), Diagonal: true, DiagonalLabel: "chance", NoMarkers: true})
		if err := add("placement-roc.svg", "ROC curves of the network and the rules on the test points", svg, err); err != nil {
			return report.Section{}, err
		}
	}
	return report.Section{Title: "Placement network", Markdown: md.String(), Charts: charts}, nil
}

// labelsText describes the labelled decision points: each split's points
// and share labelled migrate, and the labeller's own counts.
func labelsText(t *trained) string {
	isCount := func(r trainspec.MetricRow) bool {
		return r.Model == trainspec.ModelLabels && r.Section == trainspec.SectionCounts
	}
	at := func(split, metric string) float64 {
		if v, ok := t.value(trainspec.ModelLabels, trainspec.SectionCounts, split, "", metric); ok {
			return v
		}
		return math.NaN()
	}
	var b strings.Builder
	splits := t.distinct(func(r trainspec.MetricRow) bool { return isCount(r) && r.Split != "" }, func(r trainspec.MetricRow) string { return r.Split })
	if len(splits) > 0 {
		tb := report.NewTable("split", ">points", ">migrate", ">share migrate")
		var points, migrate float64
		for _, s := range splits {
			p, m := at(s, "points"), at(s, "migrate")
			points, migrate = points+p, migrate+m
			tb.Add(report.Escape(s), count(p), count(m), report.Pct(m/p))
		}
		fmt.Fprintf(&b, "**Labels.** %s decision points, %s of them (%s) labelled migrate:\n\n%s", count(points), count(migrate), report.Pct(migrate/points), tb.String())
	}
	var counts []string
	for _, r := range t.rows {
		if isCount(r) && r.Split == "" {
			counts = append(counts, fmt.Sprintf("%s %s", report.Escape(strings.ReplaceAll(r.Metric, "_", " ")), count(r.Value)))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&b, "\nThe labeller's counts: %s.\n", strings.Join(counts, ", "))
	}
	return b.String()
}

// alternatives are the labellings train measured the configured one
// against, in its order.
func (t *trained) alternatives() []string {
	return t.distinct(func(r trainspec.MetricRow) bool {
		return r.Model == trainspec.ModelLabels && r.Section == trainspec.SectionAgreement && r.Candidate != trainspec.CandidateConfigured
	}, func(r trainspec.MetricRow) string { return r.Candidate })
}

// agreementText says how much the labels depend on how a fork is judged:
// for each other labelling train judged a sample of the points by, how
// many it labels as the configured labelling does, with the interval;
// empty without train's agreement rows.
func agreementText(t *trained) string {
	alts := t.alternatives()
	if len(alts) == 0 {
		return ""
	}
	at := func(candidate, metric string) float64 {
		if v, ok := t.value(trainspec.ModelLabels, trainspec.SectionAgreement, "", candidate, metric); ok {
			return v
		}
		return math.NaN()
	}
	judged := func(arrivals float64) string {
		if arrivals == 1 {
			return "the jobs present and later arrivals"
		}
		return "the jobs present"
	}
	ch, ca := at(trainspec.CandidateConfigured, "horizon_s"), at(trainspec.CandidateConfigured, "arrivals")
	configured := "the jobs in the system at the decision"
	if ca == 1 {
		configured += " and those arriving after it, before the horizon"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**How much the judgement matters.** Each point's label judges its fork on %s (train.placement.arrivals: %v), "+
		"over %s (train.placement.horizon). A seeded sample of %s of the points was also judged the ways below, "+
		"from the same forks; each row counts the points that way labels (its near ties left out) and how many of them it labels as the configured way does.\n\n",
		configured, ca == 1, report.Secs(ch), count(at(alts[0], "compared")))
	tb := report.NewTable("judged on", ">horizon", ">points", ">near ties", ">migrate: configured, this way", ">agree", ">share agreeing")
	worst, wilson := "", false
	for _, a := range alts {
		h, pts, agree := at(a, "horizon_s"), at(a, "points"), at(a, "agree")
		horizon := report.Secs(h)
		switch h {
		case ch / 2:
			horizon += " (half)"
		case 2 * ch:
			horizon += " (twice)"
		}
		share := fmt.Sprintf("%s (%s … %s)", report.Pct(at(a, "agreement")), report.Pct(at(a, "agreement_lo")), report.Pct(at(a, "agreement_hi")))
		if pts > 0 && (agree == pts || agree == 0) {
			share += "*"
			wilson = true
		}
		tb.Add(judged(at(a, "arrivals")), horizon, count(pts), count(at(a, "near_ties")),
			fmt.Sprintf("%s, %s", report.Pct(at(a, "configured_migrate")/pts), report.Pct(at(a, "migrate")/pts)), count(agree), share)
		if worst == "" || at(a, "agreement") < at(worst, "agreement") {
			worst = a
		}
	}
	b.WriteString(tb.String())
	lo, hi := at(worst, "agreement_lo"), at(worst, "agreement_hi")
	fmt.Fprintf(&b, "\nThe labels differ most judged on %s over %s: they agree with the configured labelling on %s of %s points (%s, 95%% interval %s … %s), ",
		judged(at(worst, "arrivals")), report.Secs(at(worst, "horizon_s")), count(at(worst, "agree")), count(at(worst, "points")),
		report.Pct(at(worst, "agreement")), report.Pct(lo), report.Pct(hi))
	if hi < 1 {
		fmt.Fprintf(&b, "so that choice changes %s to %s of the labels.", report.Pct(1-hi), report.Pct(1-lo))
	} else {
		fmt.Fprintf(&b, "so that choice changes at most %s of the labels.", report.Pct(1-lo))
	}
	fmt.Fprintf(&b, " The intervals are the block bootstrap's over the sample's %s blocks of the workload", count(at(worst, "blocks")))
	if wilson {
		b.WriteString("; * where every point agrees (or none does), no resample differs, and the interval is Wilson's with the blocks as the draws")
	}
	b.WriteString(".\n")
	return b.String()
}

// scoresTable tabulates the scorers' figures on split's points, with the
// block bootstrap's intervals where train wrote them.
func (t *trained) scoresTable(split string, scorers []string) string {
	var md strings.Builder
	regret, regretFormat, regretUnit := trainspec.MetricRegretS, report.Secs, "seconds of latency summed over the jobs judged"
	if !math.IsNaN(t.placementScoreOn(split, scorers[0], trainspec.MetricRegretMisses)) {
		regret, regretFormat, regretUnit = trainspec.MetricRegretMisses, report.Num, "missed SLOs among the jobs judged"
	}
	tb := report.NewTable("scorer", ">accuracy", ">AUC", ">regret / decision", ">log loss", ">ECE", ">TP", ">FP", ">FN", ">TN")
	blocks := math.NaN()
	for _, s := range scorers {
		sc := func(metric string) float64 { return t.placementScoreOn(split, s, metric) }
		withInterval := func(metric string, format func(float64) string) string {
			v, lo, hi := sc(metric), sc(metric+"_lo"), sc(metric+"_hi")
			if math.IsNaN(lo) || math.IsNaN(hi) {
				return format(v)
			}
			return fmt.Sprintf("%s (%s … %s)", format(v), format(lo), format(hi))
		}
		if math.IsNaN(blocks) {
			blocks = sc("blocks")
		}
		tb.Add(report.Escape(scorerName(s)), withInterval("accuracy", report.Pct), withInterval("auc", report.Num), withInterval(regret, regretFormat),
			report.Num(sc("log_loss")), report.Num(sc("ece")), count(sc("tp")), count(sc("fp")), count(sc("fn")), count(sc("tn")))
	}
	md.WriteString(tb.String())
	if !math.IsNaN(blocks) {
		fmt.Fprintf(&md, "\nAccuracy, AUC and regret have 95%% intervals by the block bootstrap: the points' %s blocks of the workload, "+
			"each a stretch of one simulation whose decisions depend on each other, resampled whole (Davison and Hinkley 1997, §3.8). "+
			"Regret charges each decision what it cost against the better of its fork's two branches, in the labelling objective's unit "+
			"(train.placement.objective: %s), averaged over the decisions: 0 for a right decision, and large only where a wrong one mattered.\n",
			count(blocks), regretUnit)
	}
	md.WriteString(t.againstRulesText(split, scorers, regret, regretFormat))
	return md.String()
}

// againstRulesText sets the network against each rule on split's points,
// each difference paired on the same points with train's block-bootstrap
// interval, and says where a rule does as well as the network or better,
// against what a learned model's place beside the rules implies: within
// noise where the interval holds zero, and otherwise with the likeliest
// cause. Empty where train wrote no such rows (an older train artifact).
func (t *trained) againstRulesText(split string, scorers []string, regret string, regretFormat func(float64) string) string {
	type diff struct {
		rule    string
		acc, rg outputanalysis.Interval
	}
	get := func(rule, metric string) outputanalysis.Interval {
		m := trainspec.MetricNetworkMinus + metric
		return outputanalysis.Interval{Mean: t.placementScoreOn(split, rule, m), Lo: t.placementScoreOn(split, rule, m+"_lo"), Hi: t.placementScoreOn(split, rule, m+"_hi")}
	}
	var ds []diff
	for _, s := range scorers {
		if s == trainspec.ScorerNetwork {
			continue
		}
		if d := (diff{s, get(s, "accuracy"), get(s, regret)}); !math.IsNaN(d.acc.Mean) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return ""
	}
	pp := func(v float64) string { return report.Signed(v, report.PctPts) }
	rg := func(v float64) string { return report.Signed(v, regretFormat) }
	var accs, regrets []string
	for _, d := range ds {
		accs = append(accs, fmt.Sprintf("%s over the %s", section.IntervalText(d.acc, pp), scorerName(d.rule)))
		regrets = append(regrets, section.IntervalText(d.rg, rg))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**The network against each rule**, paired on the same points (the network's figure less the rule's, with the block bootstrap's 95%% interval): "+
		"accuracy %s; regret per decision %s.\n", report.AndList(accs), report.AndList(regrets))
	for _, d := range ds {
		net, rule := t.placementScoreOn(split, trainspec.ScorerNetwork, "accuracy"), t.placementScoreOn(split, d.rule, "accuracy")
		if d.acc.Mean > 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**Against expectation**, the %s is as accurate as the network or more: %s against %s, a difference of %s. ",
			scorerName(d.rule), report.Pct(rule), report.Pct(net), section.IntervalText(d.acc, pp))
		if math.IsNaN(d.acc.Lo) || d.acc.Covers(0) {
			b.WriteString("Within noise: the interval holds zero, so these points cannot tell the two apart.\n")
			continue
		}
		fmt.Fprintf(&b, "More than noise at 95%%. The likeliest cause, which this report cannot test: the rule's threshold was fitted to the training points "+
			"for accuracy itself, while the network decides at a probability of 0.5 after fitting its log loss; their AUCs (%s against %s) say which ranks the points better.\n",
			report.Num(t.placementScoreOn(split, trainspec.ScorerNetwork, "auc")), report.Num(t.placementScoreOn(split, d.rule, "auc")))
	}
	return b.String()
}
