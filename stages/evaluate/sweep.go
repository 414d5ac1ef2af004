package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// sweepSection charts the load sweep and states each policy's capacity,
// from the schedule artifact's sweep.parquet and capacity.parquet; the
// summary states the best's capacity from what it read.
type sweepSection struct {
	// result is the sweep as schedule ran it; nil before Read.
	result *sweepResult
}

var _ section.Section = (*sweepSection)(nil)

func (*sweepSection) Name() string { return "sweep" }

// Read reads the sweep's grid and the capacity search.
func (s *sweepSection) Read(ev *section.Evaluation) (err error) {
	s.result, err = readSweep(ev.Schedule, ev.Policies, ev.Config.Baselines, ev.Config.Confidence)
	return err
}

// Rows are the grid's points, each policy's capacity and the best's ratio
// to each baseline.
func (s *sweepSection) Rows(ev *section.Evaluation) []MetricRow { return s.result.rows(ev.Policies) }

// Render charts the grid and tabulates the capacities.
func (s *sweepSection) Render(ev *section.Evaluation) (report.Section, error) {
	sw := s.result
	if !sw.on() {
		return report.Section{Title: "Load sweep", Markdown: "The sweep is off (schedule.sweep.loads is empty and schedule.sweep.tolerance is 0).\n"}, nil
	}
	var md strings.Builder
	var charts []report.Chart
	if len(sw.loads) > 0 {
		target := sw.target
		zero, one := 0.0, 1.0
		mean := ""
		if sw.reps > 1 {
			mean = fmt.Sprintf(" Each point is the mean over %d replications.", sw.reps)
		}
		loads := make([]string, len(sw.loads))
		for i, u := range sw.loads {
			loads[i] = report.Pct(u)
		}
		fmt.Fprintf(&md, "The first %d eval jobs, offered at %s of the cluster's capacity (the lower bound's work over the span of the arrivals).%s\n\n",
			sw.jobs, strings.Join(loads, ", "), mean)
		// Many policies draw the featured few (the recommendation, the
		// runner-up and the baselines), every policy's chart folded
		// beneath, as the latency section does.
		every := make([]int, len(ev.Policies))
		for i := range every {
			every[i] = i
		}
		var few []int
		if len(every) > section.Crowded {
			few = ev.Featured()
		}
		crowd := len(few) > 0 && len(few) < len(every)
		for _, c := range []struct {
			name, title, y, alt string
			opts                chart.LineOptions
		}{
			{"sweep-slo", "SLO attainment vs offered load", "jobs within SLO", "SLO attainment of every job vs offered load", chart.LineOptions{YMin: &zero, YMax: &one}},
			{"sweep-interactive-slo", "Interactive SLO attainment vs offered load", "interactive jobs within SLO", "Interactive SLO attainment vs offered load, with the target and, on it, the load each policy sustains",
				chart.LineOptions{YMin: &zero, YMax: &one, HLine: &target, HLineLabel: "target " + report.Pct(target), MarksLabel: "load sustained"}},
			{"sweep-p99", "P99 end-to-end latency vs offered load", "P99 latency (s)", "P99 end-to-end latency vs offered load", chart.LineOptions{LogY: true}},
		} {
			draw := func(policies []int, name, title string, link func(report.Chart) string) error {
				series, marks := sw.series(ev, c.name, policies)
				if len(series) == 0 {
					return nil
				}
				opts := c.opts
				if opts.MarksLabel != "" {
					opts.Marks = marks
				}
				svg, err := chart.Lines(title, "offered load (fraction of capacity)", c.y, series, opts)
				if err != nil {
					return fmt.Errorf("chart %s: %w", name, err)
				}
				ch := report.Chart{Name: name, SVG: svg}
				charts = append(charts, ch)
				fmt.Fprintf(&md, "%s\n\n", link(ch))
				return nil
			}
			if !crowd {
				if err := draw(every, c.name+".svg", c.title, func(ch report.Chart) string { return ch.Link(c.alt) }); err != nil {
					return report.Section{}, err
				}
				continue
			}
			names := make([]string, len(few))
			for i, k := range few {
				names[i] = report.Escape(ev.Policies[k])
			}
			alt := fmt.Sprintf("%s: %s (the recommendation, the runner-up and the baselines)", c.alt, strings.Join(names, ", "))
			if err := draw(few, c.name+".svg", c.title, func(ch report.Chart) string { return ch.Link(alt) }); err != nil {
				return report.Section{}, err
			}
			detail := fmt.Sprintf("%s, every policy (%d)", c.alt, len(every))
			if err := draw(every, c.name+"-all.svg", c.title+", every policy", func(ch report.Chart) string { return ch.Detail(detail) }); err != nil {
				return report.Section{}, err
			}
		}
	}
	if len(sw.capacity) == 0 {
		return report.Section{Title: "Load sweep", Markdown: md.String(), Charts: charts}, nil
	}
	how := "the highest load of the grid that keeps"
	if sw.searched() {
		how = fmt.Sprintf("found by bisection on load to within %s of capacity between the highest grid load that keeps the target and the grid load after it (the whole grid is scanned first: attainment need not fall as load rises); the highest load found to keep", report.Pct(sw.tolerance))
	}
	fmt.Fprintf(&md, "The load each policy sustains: %s at least %s of its interactive jobs within SLO.", how, report.Pct(sw.target))
	if sw.reps > 1 {
		fmt.Fprintf(&md, " Mean over %d replications, with its %.0f%% Student-t interval.", sw.reps, 100*sw.confidence)
	}
	md.WriteString(" The search asks nothing of the batch jobs, which a policy may hold back to serve the interactive ones: " +
		"the last column says how many of all the jobs met their SLO at that load.\n\n")
	t := report.NewTable("policy", ">sustains", ">next load tried", ">all jobs within SLO there", ">search runs")
	var dipped []string
	for _, p := range ev.Policies {
		c := sw.capacity[p]
		if c == nil {
			continue
		}
		sus := loadText(sw.sustained(p))
		if slices.Max(c.sustained) == 0 {
			sus = "none"
		}
		t.Add(report.Escape(p), sus, loadText(estimateOf(c.failed, sw.confidence)), pctOrDash(meanOf(c.sloAtSustained)), fmt.Sprint(c.points))
		if c.dips > 0 {
			plural := "s"
			if c.dips == 1 {
				plural = ""
			}
			dipped = append(dipped, fmt.Sprintf("%s (%d grid load%s)", report.Escape(p), c.dips, plural))
		}
	}
	md.WriteString(t.String())
	if len(dipped) > 0 {
		fmt.Fprintf(&md, "\nAttainment is **not monotone in load** for %s: it missed the target at lower loads than the one it sustains "+
			"(counted over the replications), so the sustained load is not \"every load below it is safe\"; the chart above shows the curve.\n",
			strings.Join(dipped, ", "))
	}
	return report.Section{Title: "Load sweep", Markdown: md.String(), Charts: charts}, nil
}

// loadText writes a load estimate: a percentage of capacity, with its
// interval when it has one; "none" for 0.
func loadText(e estimate) string {
	switch {
	case math.IsInf(e.mean, 1):
		return "none failed"
	case e.mean == 0 && !e.hasInterval():
		return "none"
	case e.hasInterval():
		return fmt.Sprintf("%s (%s … %s)", report.Pct(e.mean), report.Pct(max(e.lo, 0)), report.Pct(e.hi))
	}
	return report.Pct(e.mean)
}

func pctOrDash(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return report.Pct(f)
}

// The metrics of a sweep point, as metrics.parquet names them.
const (
	metricSLO            = "slo_attainment"
	metricInteractiveSLO = "interactive_slo_attainment"
	metricMeanE2E        = "mean_e2e_s"
	metricP99E2E         = "p99_e2e_s"
	metricThroughput     = "throughput_jobs_per_s"
	metricGoodput        = section.MetricGoodputRate
	metricScheduleLoad   = "schedule_load"
	metricSustained      = section.MetricSustainedLoad
	metricFailed         = "failed_load"
	metricSearchPoints   = "search_points"
	metricSustainedRatio = "sustained_load_ratio"
	metricSLOAtSustained = "slo_attainment_at_sustained_load"
	metricPeakAttainment = "peak_target_attainment" // Load: the lowest load tried that reached it
)

// pointMetrics are a grid point's metrics, in metrics.parquet's order.
var pointMetrics = []struct {
	name  string
	value func(schedulespec.SweepRow) float64
}{
	{metricScheduleLoad, func(r schedulespec.SweepRow) float64 { return r.ScheduleLoad }},
	{metricSLO, func(r schedulespec.SweepRow) float64 { return r.SLOAttainment }},
	{metricInteractiveSLO, func(r schedulespec.SweepRow) float64 { return r.InteractiveSLOAttainment }},
	{metricMeanE2E, func(r schedulespec.SweepRow) float64 { return r.MeanE2ES }},
	{metricP99E2E, func(r schedulespec.SweepRow) float64 { return r.P99E2ES }},
	{metricThroughput, func(r schedulespec.SweepRow) float64 { return r.ThroughputJobsPerS }},
	{metricGoodput, func(r schedulespec.SweepRow) float64 { return r.GoodputJobsPerS }},
}

// estimate is a mean over replications with its Student-t interval (NaN
// bounds with one replication).
type estimate struct{ mean, lo, hi float64 }

func estimateOf(x []float64, confidence float64) estimate {
	iv := outputanalysis.TInterval(x, confidence)
	return estimate{iv.Mean, iv.Lo, iv.Hi}
}

// hasInterval says whether the estimate has an interval.
func (e estimate) hasInterval() bool { return !math.IsNaN(e.lo) && !math.IsNaN(e.hi) }

// capacityResult is what the capacity search found for one policy.
type capacityResult struct {
	sustained, failed []float64 // per replication
	points            int32     // search simulations, over the replications
	// dips is how many grid loads below its sustained load missed the
	// target, over the replications: attainment not monotone in load.
	dips int32
	// sloAtSustained is the SLO attainment of all jobs at each
	// replication's sustained load (NaN where none was sustained): the
	// search keeps the interactive jobs within SLO, not the batch ones.
	sloAtSustained []float64
	// peak is the highest interactive SLO attainment (all jobs' where a
	// point had no interactive job), mean over the replications, at any
	// load tried, grid or search, and peakLoad that load: what a policy
	// that sustains none came closest to.
	peak, peakLoad float64
}

// sweepResult is the load sweep and capacity search as schedule ran them.
type sweepResult struct {
	loads             []float64 // the grid, ascending
	jobs              int64     // simulated at each point
	target, tolerance float64
	reps              int
	// grid holds each policy's points, per grid load, per metric: the
	// mean over the replications.
	grid     map[string][]map[string]estimate
	capacity map[string]*capacityResult
	order    []string // the policies with a capacity, in schedule's order
	// best is the policy with the highest mean sustained load (ties to
	// the first in schedule's order); ratios its sustained load over each
	// baseline's, paired by replication.
	best   string
	ratios map[string]estimate
	// confidence is the intervals' coverage (evaluate.confidence).
	confidence float64
}

// on says whether schedule swept at all.
func (s *sweepResult) on() bool { return len(s.loads) > 0 || len(s.capacity) > 0 }

// searched says whether schedule searched for capacities.
func (s *sweepResult) searched() bool { return s.tolerance > 0 }

// sustained is the policy's mean sustained load over the replications.
func (s *sweepResult) sustained(policy string) estimate {
	c := s.capacity[policy]
	if c == nil {
		return estimate{math.NaN(), math.NaN(), math.NaN()}
	}
	return estimateOf(c.sustained, s.confidence)
}

// readSweep reads schedule's sweep.parquet and capacity.parquet.
func readSweep(dir string, policies, baselines []string, confidence float64) (*sweepResult, error) {
	points, err := parquetio.ReadAll[schedulespec.SweepRow](filepath.Join(dir, schedulespec.SweepFile))
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	caps, err := parquetio.ReadAll[schedulespec.CapacityRow](filepath.Join(dir, schedulespec.CapacityFile))
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	s := &sweepResult{grid: map[string][]map[string]estimate{}, capacity: map[string]*capacityResult{}, ratios: map[string]estimate{}, confidence: confidence}
	known := map[string]bool{}
	for _, p := range policies {
		known[p] = true
	}
	type at struct {
		policy string
		load   float64
	}
	grid := map[at][]schedulespec.SweepRow{}
	bySustained := map[at]map[int32]schedulespec.SweepRow{}
	for i, r := range points {
		if !known[r.Policy] {
			return nil, fmt.Errorf("read %s: row %d: policy %q was not simulated (runs: %v)", schedulespec.SweepFile, i+1, r.Policy, policies)
		}
		s.jobs = r.Jobs
		if !r.Search {
			if !slices.Contains(s.loads, r.Load) {
				s.loads = append(s.loads, r.Load)
			}
			grid[at{r.Policy, r.Load}] = append(grid[at{r.Policy, r.Load}], r)
		}
		k := at{r.Policy, r.Load}
		if bySustained[k] == nil {
			bySustained[k] = map[int32]schedulespec.SweepRow{}
		}
		bySustained[k][r.Replication] = r
	}
	slices.Sort(s.loads)
	for i, c := range caps {
		if !known[c.Policy] {
			return nil, fmt.Errorf("read %s: row %d: policy %q was not simulated (runs: %v)", schedulespec.CapacityFile, i+1, c.Policy, policies)
		}
		s.target, s.tolerance = c.Target, c.Tolerance
		r := s.capacity[c.Policy]
		if r == nil {
			r = &capacityResult{}
			s.capacity[c.Policy] = r
			s.order = append(s.order, c.Policy)
		}
		r.sustained = append(r.sustained, c.SustainedLoad)
		r.failed = append(r.failed, c.FailedLoad)
		r.points += c.Points
		r.dips += c.Dips
		slo := math.NaN()
		if p, ok := bySustained[at{c.Policy, c.SustainedLoad}][c.Replication]; ok && c.SustainedLoad > 0 {
			slo = p.SLOAttainment
		}
		r.sloAtSustained = append(r.sloAtSustained, slo)
		s.reps = max(s.reps, int(c.Replication))
	}
	for _, k := range slices.SortedFunc(maps.Keys(bySustained), func(a, b at) int { return cmp.Compare(a.load, b.load) }) {
		r := s.capacity[k.policy]
		if r == nil {
			continue
		}
		var sum float64
		for _, p := range bySustained[k] {
			sum += p.TargetAttainment()
		}
		if m := sum / float64(len(bySustained[k])); r.peakLoad == 0 || m > r.peak {
			r.peak, r.peakLoad = m, k.load
		}
	}
	for _, p := range policies {
		pts := make([]map[string]estimate, len(s.loads))
		for i, u := range s.loads {
			rows := grid[at{p, u}]
			slices.SortFunc(rows, func(a, b schedulespec.SweepRow) int { return cmp.Compare(a.Replication, b.Replication) })
			pts[i] = map[string]estimate{}
			for _, m := range pointMetrics {
				x := make([]float64, len(rows))
				for k, r := range rows {
					x[k] = m.value(r)
				}
				pts[i][m.name] = estimateOf(x, confidence)
			}
		}
		s.grid[p] = pts
	}
	if len(s.capacity) == 0 {
		return s, nil
	}
	top := math.Inf(-1)
	for _, p := range policies {
		if m := s.sustained(p).mean; m > top {
			top, s.best = m, p
		}
	}
	for _, b := range baselines {
		if b == s.best || s.capacity[b] == nil {
			continue
		}
		best, base := s.capacity[s.best].sustained, s.capacity[b].sustained
		x := make([]float64, len(best))
		for k := range x {
			x[k] = best[k] / base[k] // +Inf when the baseline sustains none
		}
		s.ratios[b] = estimateOf(x, confidence)
	}
	return s, nil
}

// at returns the mean over the replications of the policy's metric at grid
// load index i.
func (s *sweepResult) at(policy string, i int, metric string) float64 {
	return s.grid[policy][i][metric].mean
}

// rows lays the sweep out as metrics.parquet's rows: the grid's points,
// each policy's capacity, and the best's ratio to each baseline.
func (s *sweepResult) rows(policies []string) []MetricRow {
	if !s.on() {
		return nil
	}
	rows := []MetricRow{{Scope: section.ScopeSweep, Metric: "jobs", Value: float64(s.jobs)}}
	withInterval := func(r MetricRow, e estimate) MetricRow {
		r.Value = e.mean
		if e.hasInterval() {
			r.Lo, r.Hi = new(e.lo), new(e.hi)
		}
		return r
	}
	for _, p := range policies {
		for i, u := range s.loads {
			for _, m := range pointMetrics {
				rows = append(rows, withInterval(MetricRow{Scope: section.ScopeSweep, Policy: p, Load: u, Metric: m.name}, s.grid[p][i][m.name]))
			}
		}
	}
	for _, p := range policies {
		c := s.capacity[p]
		if c == nil {
			continue
		}
		base := MetricRow{Scope: section.ScopeSustained, Policy: p}
		rows = append(rows, withInterval(MetricRow{Scope: section.ScopeSustained, Policy: p, Metric: metricSustained}, s.sustained(p)))
		rows = append(rows, withInterval(MetricRow{Scope: section.ScopeSustained, Policy: p, Metric: metricFailed}, estimateOf(c.failed, s.confidence)))
		r := base
		r.Metric, r.Value = metricSearchPoints, float64(c.points)
		rows = append(rows, r)
		r.Metric, r.Value = metricSLOAtSustained, meanOf(c.sloAtSustained)
		rows = append(rows, r)
		r.Metric, r.Value, r.Load = metricPeakAttainment, c.peak, c.peakLoad
		rows = append(rows, r)
	}
	for _, b := range slices.Sorted(maps.Keys(s.ratios)) {
		rows = append(rows, withInterval(MetricRow{Scope: section.ScopeSustained, Policy: s.best, Baseline: b, Metric: metricSustainedRatio}, s.ratios[b]))
	}
	return rows
}

// meanOf is the mean of the values that are not NaN; NaN when none is.
func meanOf(x []float64) float64 {
	var sum float64
	n := 0
	for _, v := range x {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// series are the chart's lines (chart: sweep-slo, sweep-interactive-slo
// or sweep-p99) of the policies at the indices given, and, for the
// interactive chart, each policy's sustained load marked on the target
// line, whose axis then covers it, on the grid or not.
func (sw *sweepResult) series(ev *section.Evaluation, name string, policies []int) ([]chart.Series, []chart.Mark) {
	var out []chart.Series
	var marks []chart.Mark
	for _, k := range policies {
		p := ev.Policies[k]
		s := chart.Series{Name: p, Style: ev.Style(p)}
		for i, u := range sw.loads {
			var v float64
			switch name {
			case "sweep-slo":
				v = sw.at(p, i, metricSLO)
			case "sweep-interactive-slo":
				if v = sw.at(p, i, metricInteractiveSLO); math.IsNaN(v) {
					continue
				}
			default:
				if v = sw.at(p, i, metricP99E2E); !(v > 0) {
					continue
				}
			}
			s.X, s.Y = append(s.X, u), append(s.Y, v)
		}
		if len(s.X) == 0 && name != "sweep-slo" {
			continue
		}
		if name == "sweep-interactive-slo" {
			if c := sw.capacity[p]; c != nil && slices.Max(c.sustained) > 0 {
				marks = append(marks, chart.Mark{Series: len(out), X: sw.sustained(p).mean, Y: sw.target})
			}
		}
		out = append(out, s)
	}
	return out, marks
}
