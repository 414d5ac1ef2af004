package fidelity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// relPct formats a relative error as a signed percentage.
func relPct(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case f == 0:
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

// render is the report's part on the simulator against the real runs:
// the error table, the rankings, the distributions and the main
// remaining source of error; untitled when schedule ran nothing for real.
func render(f *comparison) (report.Section, error) {
	if f == nil {
		return report.Section{}, nil
	}
	var md strings.Builder
	md.WriteString(f.introText())
	md.WriteString(f.targetText())
	md.WriteString(f.errorText())
	md.WriteString(f.repeatText())
	md.WriteString(f.sensitivityText())
	md.WriteString(f.bandText())
	md.WriteString(f.rankingText())
	md.WriteString(f.replayText())
	text, charts, err := f.charts()
	if err != nil {
		return report.Section{}, err
	}
	md.WriteString(text)
	md.WriteString(f.sourcesText())
	return report.Section{Title: "Fidelity", Markdown: md.String(), Charts: charts}, nil
}

func (f *comparison) introText() string {
	var loads []string
	for _, rk := range f.rankings {
		loads = append(loads, report.Pct(rk.load))
	}
	var spans []string
	for _, r := range f.runs {
		if s := report.Secs(r.row.SpanS); !slices.Contains(spans, s) {
			spans = append(spans, s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The schedule stage ran %s for real (schedule.real) at offered loads of %s of the real cluster's capacity: "+
		"each run takes the eval jobs that arrive within its first %s, carries out the policy's decisions with onnxruntime on this machine, "+
		"and is simulated on the same jobs (same ids, same arrival times) on the same devices with the same policy. "+
		"Each run's real trace is set against its simulation's; an error is simulated minus real, relative to real.\n",
		report.AndList(report.EscapeAll(f.policies())), report.AndList(loads), strings.Join(spans, " or "))
	fmt.Fprintf(&b, "\nThe real cluster: %s.", section.ClusterText(f.cluster))
	if len(f.left) > 0 {
		var left []string
		for _, d := range f.left {
			why := "declared: no hardware here to run it on"
			if d.Kind != schedulespec.KindDeclared {
				why = "its profile device was not measured on this machine"
			}
			left = append(left, fmt.Sprintf("%s (%s)", report.Escape(d.Device), why))
		}
		fmt.Fprintf(&b, " Left out of it, of the simulated cluster: %s; the loads are fractions of the real cluster's capacity alone.", report.AndList(left))
	}
	if len(f.cluster) == 1 {
		var movers []string
		for _, p := range f.policies() {
			if sp, err := policy.ParseSpec(p); err == nil && sp.Migrates() {
				movers = append(movers, p)
			}
		}
		if len(movers) > 0 {
			who := "each"
			if len(movers) == 1 {
				who = "it"
			}
			fmt.Fprintf(&b, " With one device there is nowhere to move a job to, so %s never migrated or asked for a decision: "+
				"%s ran as its queue order alone, and says nothing here of its migration rule.", report.AndList(report.EscapeAll(movers)), who)
		}
		if len(f.skipped) > 0 {
			fmt.Fprintf(&b, " Not run for real (schedule.real.policies): %s. With one device there is nowhere to move a job to, "+
				"so each would run as its queue order alone and repeat that order's run; the simulation tells of migration, and a second real device would let it run.",
				report.AndList(report.EscapeAll(f.skipped)))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// targetText states the target and how many runs meet it.
func (f *comparison) targetText() string {
	lists := map[outcome][]string{}
	held := 0
	for i, r := range f.runs {
		o, _ := f.verdict(i)
		if o != notHeld {
			held++
			lists[o] = append(lists[o], r.label())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Target**: |simulated − real| ≤ %s of real at P50 and at P99 for %s at each load, with the ranking of the policies preserved, "+
		"each percentile judged only on a run with at least %d completed jobs beyond it (%d for P50, %d for P99). ",
		report.Pct(targetTolerance), report.AndList(targetPolicies), f.enough, f.needed(statistics[1]), f.needed(statistics[3]))
	if held == 0 {
		fmt.Fprintf(&b, "No run is of %s, so none is held to it.\n", report.AndList(targetPolicies))
		return b.String()
	}
	var parts []string
	for _, o := range []struct {
		o    outcome
		word string
	}{{met, "met in"}, {missed, "**missed** in"}, {notJudged, "not judged in"}} {
		if l := lists[o.o]; len(l) > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", o.word, len(l), report.AndList(l)))
		}
	}
	fmt.Fprintf(&b, "Of the %d runs held to it: %s.", held, strings.Join(parts, "; "))
	if n := len(lists[notJudged]); n > 0 {
		fmt.Fprintf(&b, " A run not judged is too short to tell: a longer schedule.real.duration gives it more jobs.")
	}
	b.WriteString("\n")
	b.WriteString(f.coverageText())
	return b.String()
}

// errorText is the error table and the per-job errors, SLO attainment
// and utilization.
func (f *comparison) errorText() string {
	var b strings.Builder
	b.WriteString("\n### The error table\n\nEnd-to-end latency percentiles over each trace's completed jobs (nearest rank), real and simulated, " +
		"and the target's verdict with the errors it rests on.\n\n")
	t := report.NewTable("run", ">jobs", ">P50 real", ">P50 sim", ">error", ">P95 real", ">P95 sim", ">error", ">P99 real", ">P99 sim", ">error", "target")
	for i, r := range f.runs {
		_, verdict := f.verdict(i)
		t.Add(r.label(), fmt.Sprint(r.row.Jobs),
			report.Secs(r.real.E2E.P50), report.Secs(r.sim.E2E.P50), relPct(relErr(r.sim.E2E.P50, r.real.E2E.P50)),
			report.Secs(r.real.E2E.P95), report.Secs(r.sim.E2E.P95), relPct(relErr(r.sim.E2E.P95, r.real.E2E.P95)),
			report.Secs(r.real.E2E.P99), report.Secs(r.sim.E2E.P99), relPct(relErr(r.sim.E2E.P99, r.real.E2E.P99)), verdict)
	}
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nPer job: the two traces joined on job id, each job's error (simulated − real)/real in end-to-end latency, over the jobs both completed; "+
		"the median and P90 of its absolute value and the share of jobs within ±%s. SLO attainment is the share of all the run's jobs within their SLO "+
		"(a rejected job never is); utilization the cluster's busy lane-seconds over its lanes times the run's makespan.\n\n", report.Pct(targetTolerance))
	t = report.NewTable("run", ">jobs compared", ">median abs. error", ">P90 abs. error", ">within ±"+report.Pct(targetTolerance),
		">SLO attainment real", ">SLO attainment sim", ">difference", ">utilization real", ">utilization sim", ">difference")
	for _, r := range f.runs {
		ra, sa := 1-r.real.SLOViolation, 1-r.sim.SLOViolation
		t.Add(r.label(), fmt.Sprint(len(r.pairedReal)), report.Pct(r.jobErr.median), report.Pct(r.jobErr.p90), report.Pct(r.jobErr.within),
			report.Pct(ra), report.Pct(sa), report.Signed(sa-ra, report.PctPts), report.Pct(r.realUtil), report.Pct(r.simUtil), report.Signed(r.simUtil-r.realUtil, report.PctPts))
	}
	b.WriteString(t.String())
	return b.String()
}

// repeatText sets the simulation against every real run of its jobs, when
// schedule.real.repeats ran them more than once: how far real runs of the
// same jobs fall apart is how close a simulation can be expected to come
// to any one of them.
func (f *comparison) repeatText() string {
	var b strings.Builder
	t := report.NewTable("run", ">real runs", ">P50 real, each run", ">P50 sim", ">sim − median real", ">P99 real, each run", ">P99 sim", ">sim − median real")
	var spread50, spread99 float64
	in50, in99, n := 0, 0, 0
	for _, r := range f.runs {
		if len(r.repeats) == 0 {
			continue
		}
		n++
		p50, p99 := r.realPercentiles()
		m50, s50, w50 := repeatStats(p50, r.sim.E2E.P50)
		m99, s99, w99 := repeatStats(p99, r.sim.E2E.P99)
		spread50, spread99 = max(spread50, s50), max(spread99, s99)
		if w50 {
			in50++
		}
		if w99 {
			in99++
		}
		each := func(v []float64) string {
			out := make([]string, len(v))
			for i, x := range v {
				out[i] = report.Secs(x)
			}
			return strings.Join(out, ", ")
		}
		t.Add(r.label(), fmt.Sprint(len(p50)), each(p50), report.Secs(r.sim.E2E.P50), relPct(relErr(r.sim.E2E.P50, m50)),
			each(p99), report.Secs(r.sim.E2E.P99), relPct(relErr(r.sim.E2E.P99, m99)))
	}
	if n == 0 {
		return ""
	}
	b.WriteString("\n### Real against real\n\nEach slice was run for real more than once (schedule.real.repeats), the same jobs under the same policy on the same " +
		"devices, one run of every slice before any second: how far two real runs of the same jobs fall apart is how close a simulation can be expected " +
		"to come to any one of them. The target above holds the simulation to each slice's first run; here it is set against the median of the real runs.\n\n")
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nReal runs of the same jobs differed by up to %s at P50 and %s at P99 (the largest over the smallest, less one). "+
		"The simulation lies within the real runs' range at P50 in %d of %d runs and at P99 in %d of %d.\n", pctSpread(spread50), pctSpread(spread99), in50, n, in99, n)
	return b.String()
}

// sensitivityText shows how far each simulation moves when every
// service time is shorter or longer by schedule.real.sensitivity: where a
// small error in the service-time model moves a percentile much, no
// simulator can be held to that percentile of one real run.
func (f *comparison) sensitivityText() string {
	var s float64
	t := report.NewTable("run", ">P50 real", ">sim, faster", ">sim", ">sim, slower", ">real within", ">P99 real", ">sim, faster", ">sim", ">sim, slower", ">real within")
	var worst float64
	worstRun := ""
	for _, r := range f.runs {
		if r.faster == nil {
			continue
		}
		s = r.row.Sensitivity
		band := func(real, lo, mid, hi float64) string {
			if min(lo, mid, hi) <= real && real <= max(lo, mid, hi) {
				return "yes"
			}
			return "no"
		}
		p50 := [3]float64{r.faster.E2E.P50, r.sim.E2E.P50, r.slower.E2E.P50}
		p99 := [3]float64{r.faster.E2E.P99, r.sim.E2E.P99, r.slower.E2E.P99}
		for _, v := range []float64{p50[0], p50[2]} {
			if e := math.Abs(relErr(v, p50[1])); e > worst {
				worst, worstRun = e, r.name()
			}
		}
		t.Add(r.label(), report.Secs(r.real.E2E.P50), report.Secs(p50[0]), report.Secs(p50[1]), report.Secs(p50[2]), band(r.real.E2E.P50, p50[0], p50[1], p50[2]),
			report.Secs(r.real.E2E.P99), report.Secs(p99[0]), report.Secs(p99[1]), report.Secs(p99[2]), band(r.real.E2E.P99, p99[0], p99[1], p99[2]))
	}
	if worstRun == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Sensitivity\n\nEach slice simulated again with every service time %s shorter (faster) and %s longer (slower) than the profile's "+
		"(schedule.real.sensitivity), as if the device ran that much faster or slower: how far the simulation moves for a service-time model off by "+
		"that much either way, and whether the real run lies within that band.\n\n", report.Pct(s), report.Pct(s))
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\nService times %s off move the simulated P50 by up to %s (%s).\n", report.Pct(s), pctSpread(worst), report.Escape(worstRun))
	return b.String()
}

// coverageText is the prediction band's verdict over every real run, one
// row per statistic: how many runs had enough jobs to be judged on it,
// how many of those lie inside their band, and the signed errors of the
// simulation (its first draw) over them.
func (f *comparison) coverageText() string {
	t := report.NewTable("figure", ">runs judged", ">real inside the band", ">signed error, median", ">signed error, range")
	for _, st := range statistics {
		var judged, inside int
		var errs []float64
		for _, r := range f.runs {
			if !f.judged(r, st) {
				continue
			}
			judged++
			if lo, hi := r.band(st); lo <= st.of(r.real) && st.of(r.real) <= hi {
				inside++
			}
			if e := relErr(st.of(r.sim), st.of(r.real)); !math.IsNaN(e) {
				errs = append(errs, e)
			}
		}
		runs := fmt.Sprintf("%d of %d", judged, len(f.runs))
		if judged < len(f.runs) {
			runs += fmt.Sprintf(" (needs %d jobs)", f.needed(st))
		}
		if judged == 0 {
			t.Add(st.name, runs, "—", "—", "—")
			continue
		}
		slices.Sort(errs)
		med, rng := "—", "—"
		if len(errs) > 0 {
			med, rng = relPct(quantileOf(errs, 0.5)), relPct(errs[0])+" to "+relPct(errs[len(errs)-1])
		}
		t.Add(st.name, runs, fmt.Sprintf("%d of %d", inside, judged), med, rng)
	}
	var b strings.Builder
	b.WriteString("\n**The prediction band** over all the real runs: a real figure is predicted inside the range of the simulated one over the service-time draws, " +
		"widened by the profile's own run-to-run variation (The prediction band, below). A signed error is (simulated − real)/real, the simulation's first draw; " +
		"negative, the simulation is faster.\n\n")
	b.WriteString(t.String())
	return b.String()
}

// bandText sets each real run against its prediction band: the range of
// each statistic over the slice simulated with every seed of the
// service-time draws (schedule.real.draws), widened either way by how far
// the simulation moves with every service time shorter and longer by the
// profile's run-to-run variation. The target's verdict stays on the
// first draw.
func (f *comparison) bandText() string {
	var head []string
	head = append(head, "run", ">jobs", ">draws")
	for _, st := range []statistic{statistics[0], statistics[1], statistics[3]} {
		head = append(head, ">"+st.name+" real", ">"+st.name+" band", ">inside")
	}
	t := report.NewTable(head...)
	var variation float64
	from := ""
	runs := 0
	for _, r := range f.runs {
		if len(r.draws) == 0 && r.bandFaster == nil {
			continue
		}
		runs++
		if r.bandFaster != nil {
			variation, from = r.row.Variation, r.row.VariationFrom
		} else if from == "" {
			from = r.row.VariationFrom
		}
		cells := []string{r.label(), fmt.Sprint(len(r.realE2E)), fmt.Sprint(len(r.draws) + 1)}
		for _, st := range []statistic{statistics[0], statistics[1], statistics[3]} {
			lo, hi := r.band(st)
			v := st.of(r.real)
			in := "yes"
			switch {
			case !f.judged(r, st):
				in = fmt.Sprintf("too few jobs (needs %d)", f.needed(st))
			case !(lo <= v && v <= hi):
				in = "**no**"
			}
			cells = append(cells, report.Secs(v), report.Secs(lo)+" – "+report.Secs(hi), in)
		}
		t.Add(cells...)
	}
	if runs == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### The prediction band\n\nEach slice simulated again with other seeds of the service-time draws (schedule.real.draws; " +
		"the sweep's replications), the same jobs, policy and profile: a simulated batch takes a draw from the profile's measured distribution, " +
		"so the simulated figures of a slice this short are themselves samples. ")
	if variation > 0 {
		fmt.Fprintf(&b, "The draws' range is widened on each side by how far the simulation moves with every service time %s shorter and longer, "+
			"the profile's run-to-run variation: %s. ", report.Pct(variation), report.Escape(from))
	} else if from != "" {
		fmt.Fprintf(&b, "The band is not widened further: %s. ", report.Escape(from))
	}
	fmt.Fprintf(&b, "A percentile is judged only on a run with at least %d completed jobs beyond it.\n\n", f.enough)
	b.WriteString(t.String())
	return b.String()
}

// pctSpread formats a spread as a percentage.
func pctSpread(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// rankingText compares the real and simulated order of the policies at
// each load.
func (f *comparison) rankingText() string {
	var b strings.Builder
	b.WriteString("\n### Ranking\n\nThe policies at each load ordered by mean end-to-end latency over their completed jobs, best first.\n\n")
	t := report.NewTable("load", "real", "simulated", "same winner", "same order")
	order := func(idx []int, mean func(*realRun) float64) string {
		var parts []string
		for _, i := range idx {
			parts = append(parts, fmt.Sprintf("%s (%s)", report.Escape(f.runs[i].row.Policy), report.Secs(mean(f.runs[i]))))
		}
		return strings.Join(parts, ", ")
	}
	var kept, broken []string
	for _, rk := range f.rankings {
		measured := order(rk.real, func(r *realRun) float64 { return r.real.E2E.Mean })
		simulated := order(rk.sim, func(r *realRun) float64 { return r.sim.E2E.Mean })
		if !rk.ranked() {
			t.Add(report.Pct(rk.load), measured, simulated, "– (one policy)", "–")
			continue
		}
		t.Add(report.Pct(rk.load), measured, simulated, yesNo(rk.sameWinner()), yesNo(rk.sameOrder()))
		if rk.sameOrder() {
			kept = append(kept, report.Pct(rk.load))
		} else {
			broken = append(broken, report.Pct(rk.load))
		}
	}
	b.WriteString(t.String())
	switch {
	case len(kept) == 0 && len(broken) == 0:
		b.WriteString("\nNo load ran more than one policy, so there is no ranking to compare.\n")
	case len(broken) == 0:
		b.WriteString("\nThe simulator ranks the policies as the real runs do at every load.\n")
	case len(kept) == 0:
		fmt.Fprintf(&b, "\nThe simulator's ranking **differs** from the real runs' at every load (%s).\n", report.AndList(broken))
	default:
		fmt.Fprintf(&b, "\nThe simulator ranks the policies as the real runs do at %s, and **differently** at %s.\n", report.AndList(kept), report.AndList(broken))
	}
	return b.String()
}

// replayText sets each run against its replay: the simulator's own
// decisions, queues and clock with every batch taking the time the real
// run measured. What the replay misses is the share of the error that no
// service-time model could close; the rest is the service-time model's.
func (f *comparison) replayText() string {
	var rows [][]string
	for _, r := range f.runs {
		p := r.replay
		if p == nil {
			continue
		}
		rows = append(rows, []string{r.name(),
			report.Secs(r.real.E2E.P50), report.Secs(p.E2E.P50), relPct(relErr(p.E2E.P50, r.real.E2E.P50)), relPct(relErr(r.sim.E2E.P50, r.real.E2E.P50)),
			report.Secs(r.real.E2E.P99), report.Secs(p.E2E.P99), relPct(relErr(p.E2E.P99, r.real.E2E.P99)), relPct(relErr(r.sim.E2E.P99, r.real.E2E.P99)),
			fmt.Sprint(r.row.ReplayMissed)})
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Replay: the simulator with the real run's times\n\n" +
		"Each run replayed: the same jobs, policy and devices simulated again, each batch taking exactly the time (decision to end, dispatch included) " +
		"that the batch its lead job led took in the real run, instead of a draw from the profile. " +
		"The replay's error is what the simulator's queues, decisions and clock make of real times (with the scheduler's lateness left out); " +
		"the simulation's error beyond it comes from the service-time model: the profile's latencies and contention factors. " +
		"A batch the real run had no counterpart for (its decisions parted from the replay's) takes the profile's mean, and is counted.\n\n")
	t := report.NewTable("run", ">P50 real", ">P50 replay", ">replay error", ">sim error", ">P99 real", ">P99 replay", ">replay error", ">sim error", ">batches without a real time")
	for _, row := range rows {
		t.Add(row...)
	}
	b.WriteString(t.String())
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// sourcesText gives the figures of each source of error, their estimated
// contributions, and names the largest.
func (f *comparison) sourcesText() string {
	var b strings.Builder
	b.WriteString("\n### Where the error comes from\n\n" +
		"The real runs did things the simulator does not model. Each column measures one of them, from the run's dispatch.parquet and runs.parquet:\n\n" +
		"- **Dispatch overhead**: from the policy's decision to onnxruntime's Run (run_s − start_s), median / P99 over the batches.\n" +
		"- **Notice lag**: from a batch's end until the scheduler noticed it (noticed_s − end_s), median / P99.\n" +
		"- **Run / model**: the measured run time (end_s − run_s) over the time the simulator's model gives the batch on the run's own timeline. " +
		"The model is the profile's mean, slowed by the profiled contention factor while other lanes of the device ran beside it. " +
		"Alone sums the batches that ran alone throughout; beside others, those that shared the device at some point. " +
		"A batch weighs by its time, so the mlp's microsecond batches do not outvote the rest.\n" +
		"- **Modelled slowdown**: the slowdown the model gave the batches beside others (modelled time over profile means).\n" +
		"- **Late events** and **lateness**: how late the scheduler handled events due at a given time.\n" +
		"- **Pages faulted in**: memory the lanes' threads touched for the first time during the runs. The profile's warm runs do not pay for it.\n" +
		"- **Warm-up**: the untimed runs that warmed each session at its largest batch size before the clock started, until a run faulted no page in.\n\n")
	t := report.NewTable("run", ">batches", ">dispatch overhead", ">notice lag", ">run / model, alone", ">run / model, beside others", ">modelled slowdown",
		">late events per job", ">lateness P50 / P99", ">pages faulted in", ">warm-up")
	for _, r := range f.runs {
		s := r.src
		t.Add(r.label(), fmt.Sprint(s.batches), report.Secs(s.dispatchP50)+" / "+report.Secs(s.dispatchP99), report.Secs(s.lagP50)+" / "+report.Secs(s.lagP99),
			ratioOf(s.alone, s.aloneN), ratioOf(s.contended, s.contendedN), factorText(s.factor, s.contendedN),
			report.Num(s.latePerJob), report.Secs(r.row.LateP50S)+" / "+report.Secs(r.row.LateP99S), faultsText(s.faults), warmText(r.row))
	}
	b.WriteString(t.String())

	b.WriteString("\nMethod: each source's contribution is the time it adds to a real job's own end-to-end latency beyond the simulator's model, " +
		"averaged over the run's completed jobs (a batch counts once per job in it): run time beyond the model's for a batch that ran alone, " +
		"and for one that ran beside others, the dispatch overhead, and the median lateness times the " +
		"late events per job. Queueing behind a delayed batch is not counted, so they need not add up to the gap, the real mean end-to-end latency " +
		"less the simulated.\n\n")
	head := []string{"run", ">gap (real − sim)"}
	for _, info := range sourceInfo {
		head = append(head, ">"+info.column)
	}
	t = report.NewTable(append(head, "largest")...)
	var total [numSources]float64
	var gap float64
	jobs := 0
	for _, r := range f.runs {
		s := r.src
		row := []string{r.label(), report.Signed(s.gap, report.Secs)}
		for k := range sourceInfo {
			row = append(row, report.Signed(s.contrib[k], report.Secs))
		}
		row = append(row, sourceName(largest(s.contrib), s.contrib))
		t.Add(row...)
		if s.jobs > 0 {
			for k := range total {
				total[k] += s.contrib[k] * float64(s.jobs)
			}
			gap += s.gap * float64(s.jobs)
			jobs += s.jobs
		}
	}
	b.WriteString(t.String())
	k := largest(total)
	if jobs == 0 || k < 0 {
		b.WriteString("\nNo run has a batch to weigh, so no source can be named.\n")
		return b.String()
	}
	for i := range total {
		total[i] /= float64(jobs)
	}
	gap /= float64(jobs)
	var sum float64
	for _, v := range total {
		sum += v
	}
	fmt.Fprintf(&b, "\n**The main remaining source of error is %s**: %s per job, over the %d completed real jobs of the %d runs, against a mean gap of %s "+
		"(%s). The four sources together come to %s per job.\n",
		sourceName(k, total), report.Signed(total[k], report.Secs), jobs, len(f.runs), report.Signed(gap, report.Secs), gapText(gap), report.Signed(sum, report.Secs))
	if math.Abs(sum) < math.Abs(gap)/2 {
		b.WriteString("They come to less than half the gap: the rest is queueing, each job waiting behind batches that took longer or shorter " +
			"than simulated, which the method does not count")
		for _, r := range f.runs {
			if r.faster != nil {
				b.WriteString(" and which grows with the load (the Sensitivity table)")
				break
			}
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// largest is the index of the contribution largest in size; -1 when none
// is a number.
func largest(c [numSources]float64) int {
	k := -1
	for i, v := range c {
		if !math.IsNaN(v) && (k < 0 || math.Abs(v) > math.Abs(c[k])) {
			k = i
		}
	}
	return k
}

// sourceName names source k by the sign of its contribution; "–" for -1.
func sourceName(k int, c [numSources]float64) string {
	if k < 0 {
		return "–"
	}
	if c[k] < 0 {
		return sourceInfo[k].less
	}
	return sourceInfo[k].more
}

func gapText(gap float64) string {
	switch {
	case gap > 0:
		return "the real runs slower than simulated"
	case gap < 0:
		return "the real runs faster than simulated"
	}
	return "no gap"
}

func ratioOf(v float64, n int) string {
	if n == 0 {
		return "– (none)"
	}
	return fmt.Sprintf("%.2f (%d)", v, n)
}

func factorText(v float64, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

// faultsText is a run's count of pages faulted in, or why there is none.
func faultsText(n int64) string {
	if n < 0 {
		return "not counted"
	}
	return fmt.Sprint(n)
}

// warmText is a run's warm-up: its runs and time, and the sessions
// still faulting pages in when it stopped.
func warmText(row schedulespec.RealRunRow) string {
	if row.WarmRuns == 0 {
		return "none"
	}
	t := fmt.Sprintf("%d runs, %s", row.WarmRuns, report.Secs(row.WarmS))
	if row.WarmFaulting > 0 {
		t += fmt.Sprintf(", %d still faulting", row.WarmFaulting)
	}
	return t
}
