package learned

import (
	"fmt"
	"math"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/lib/policy"
)

// defaultConfidence is the intervals' coverage where the evaluation has
// no analysis to take evaluate.confidence from.
const defaultConfidence = 0.95

// confidenceOf is the coverage of the evaluation's intervals.
func confidenceOf(ev *section.Evaluation) float64 {
	if ev == nil || ev.Analysis == nil {
		return defaultConfidence
	}
	return ev.Analysis.Confidence
}

// repsText says what a study's figures are over.
func repsText(reps int) string {
	if reps < 2 {
		return "Each figure comes from one replication, so no change has an interval (schedule.studies.replications)."
	}
	return fmt.Sprintf("Each figure is the mean over the first %d replications, each with its own workload and draws; "+
		"a change between two conditions is paired by replication, with its Student t interval (Law 2015, ch. 10).", reps)
}

// unexpected is a result that went against what anyone would expect: a
// policy better off when what it relies on got worse.
type unexpected struct {
	subject  string
	from, to float64
	// iv is the change, to − from in the metric's unit, with its
	// interval (NaN bounds where there is none).
	iv outputanalysis.Interval
	// cause is the likeliest cause, said where the change is more than
	// noise.
	cause string
}

// noise says whether the change cannot be told from zero: its interval
// holds zero, or there is no interval.
func (u unexpected) noise() bool {
	return math.IsNaN(u.iv.Lo) || math.IsNaN(u.iv.Hi) || u.iv.Covers(0)
}

// unexpectedText says of each unexpected result whether it is noise (its
// paired interval holds zero, or one replication gave no interval) or
// more than noise, and then gives its likeliest cause. agent is what
// got worse, e.g. "worse predictions". Empty where nothing went against
// expectation.
func unexpectedText(m studyMetric, agent string, us []unexpected, reps int, confidence float64) string {
	if len(us) == 0 {
		return ""
	}
	item := func(u unexpected) string {
		return fmt.Sprintf("**%s** %s → %s, %s", report.Escape(u.subject), m.format(u.from), m.format(u.to), m.deltaText(u.iv))
	}
	var b strings.Builder
	whom := fmt.Sprintf("%d policies", len(us))
	if len(us) == 1 {
		whom = "**" + report.Escape(us[0].subject) + "**"
	}
	fmt.Fprintf(&b, "**Against expectation**, %s leave %s better off in %s.", agent, whom, m.name)
	var noise, real []string
	causes := map[string][]string{}
	var order []string
	for _, u := range us {
		if u.noise() {
			noise = append(noise, item(u))
			continue
		}
		real = append(real, item(u))
		if _, ok := causes[u.cause]; !ok {
			order = append(order, u.cause)
		}
		causes[u.cause] = append(causes[u.cause], "**"+report.Escape(u.subject)+"**")
	}
	if len(noise) > 0 {
		if reps < 2 {
			fmt.Fprintf(&b, " With one replication of the study this cannot be told from noise (raise schedule.studies.replications): %s.", strings.Join(noise, "; "))
		} else {
			fmt.Fprintf(&b, " Within noise, the paired %.0f%% interval over %d replications holding zero: %s.", 100*confidence, reps, strings.Join(noise, "; "))
		}
	}
	if len(real) > 0 {
		fmt.Fprintf(&b, " More than noise at %.0f%% over %d replications: %s.", 100*confidence, reps, strings.Join(real, "; "))
		for _, c := range order {
			fmt.Fprintf(&b, " The likeliest cause for %s, which this report cannot test: %s", report.AndList(causes[c]), c)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// deltaText is a change in m's unit with its interval: percentage
// points for an attainment, a signed time for a latency.
func (m studyMetric) deltaText(iv outputanalysis.Interval) string {
	format := report.Secs
	if m.higher {
		format = report.PctPts
	}
	return section.IntervalText(iv, func(v float64) string { return report.Signed(v, format) })
}

// predictionCause is the likeliest reason why worse predictions would
// leave a policy better off.
func predictionCause(spec string) string {
	ps, err := policy.ParseSpec(spec)
	if err == nil && (ps.Migrate || ps.Learned()) {
		return "its migrations weigh predicted finishes, and errors make it move jobs that the exact means would leave where they are; " +
			"the means are averages, so some of those moves pay off against the draws the jobs really took."
	}
	return "with exact means, jobs of one model and batch size tie on equally free devices, and a tie goes to the first device in " +
		"schedule.cluster's order; errors break those ties at random and spread the load."
}

// predictorCause is the likeliest reason why train's predictor, further
// from the means than exact predictions, would leave a policy better off.
const predictorCause = "train's predictor is a fitted curve, off the same way for every job of one model, precision and batch size, " +
	"not at random per job; that shifts whole groups of jobs in the policy's order and placement, which on this workload can happen to help, " +
	"and the means are averages, not the draws the jobs really took."

// costCause is the likeliest reason why dearer decisions would leave a
// learned policy better off.
const costCause = "a charge delays each migration on the simulated clock, so a job moves later, after more of the queue has " +
	"played out; the network was trained on decisions that cost nothing and is not tuned to the moment it acts."
