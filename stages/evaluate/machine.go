package evaluate

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// The thresholds past which the report calls the profiled machine busy
// (any one is enough). A profile that ran at a load average of 10 on 2
// cores timed a ResNet-50 at 68 ms against 37 ms quiet; these catch far
// less than that, and a quiet machine stays well inside them.
const (
	// busyOthers is the share of all cores other processes used, over
	// the whole profile or over any interval of at least busyStretch
	// seconds of it (the idle second before it included): a tenth of the
	// machine is a neighbour the timings feel.
	busyOthers = 0.10
	// busySteal is the share a hypervisor stole, judged as busyOthers.
	busySteal = 0.02
	// busyLoad is the 1-minute load average before the profile started,
	// per core: half the cores busy just before it (the load averages
	// count the profile's own sessions once it runs).
	busyLoad = 0.5
	// busySlow and busySlowShare judge the reference timing: an
	// observation whose timing is more than busySlow times the fastest
	// did not get its core, and a machine where at least busySlowShare
	// of the observations did not is busy. One slow observation is a
	// moment's neighbour (a shared virtual machine has them); a fifth of
	// them is a machine that was not the profile's.
	busySlow      = 1.25
	busySlowShare = 0.2
	// busyStretch is the shortest interval judged alone, in seconds:
	// /proc/stat counts hundredths of a second, too few over less.
	busyStretch = 1.0
)

// machineLoad is how busy the machine was while the profile measured it,
// from machine.parquet's observations.
type machineLoad struct {
	rows  []profilespec.MachineRow
	cores int
	// others and steal are the shares over the measurements: every
	// interval after the idle one before them, weighted by its length.
	// othersMax and stealMax are the highest of any interval of at least
	// busyStretch, the idle one included, and othersAt and stealAt what
	// the profile measured in it. NaN where they could not be observed.
	others, othersMax, steal, stealMax float64
	othersAt, stealAt                  string
	// loadBefore and loadAfter are the 1-minute load averages at the
	// first and the last observation.
	loadBefore, loadAfter float64
	// fastest and slowest are the reference timing's extreme medians;
	// slow is how many of the timed observations took more than busySlow
	// times the fastest, and timed how many there are.
	fastest, slowest float64
	slow, timed      int
}

// readMachine reads the profile's machine.parquet; nil, and no error,
// where the profile has none.
func readMachine(path string) (*machineLoad, error) {
	if path == "" {
		return nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	rows, err := parquetio.ReadAll[profilespec.MachineRow](path)
	if err != nil {
		return nil, fmt.Errorf("read the profile's %s: %w", profilespec.MachineFile, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	m := machineLoadOf(rows)
	return &m, nil
}

// machineLoadOf sums up the observations, the first being the idle wait
// before the profile measured anything.
func machineLoadOf(rows []profilespec.MachineRow) machineLoad {
	nan := math.NaN()
	m := machineLoad{rows: rows, others: nan, othersMax: nan, steal: nan, stealMax: nan,
		loadBefore: rows[0].Load1, loadAfter: rows[len(rows)-1].Load1, fastest: nan, slowest: nan}
	var others, steal weighted
	for i, r := range rows {
		m.cores = int(r.Cores)
		if i > 0 {
			others.add(r.OthersCPU, r.IntervalS)
			steal.add(r.Steal, r.IntervalS)
		}
		if r.IntervalS >= busyStretch {
			if r.OthersCPU > m.othersMax || math.IsNaN(m.othersMax) && !math.IsNaN(r.OthersCPU) {
				m.othersMax, m.othersAt = r.OthersCPU, r.During
			}
			if r.Steal > m.stealMax || math.IsNaN(m.stealMax) && !math.IsNaN(r.Steal) {
				m.stealMax, m.stealAt = r.Steal, r.During
			}
		}
		if r.ReferenceS > 0 {
			if !(r.ReferenceS >= m.fastest) {
				m.fastest = r.ReferenceS
			}
			if !(r.ReferenceS <= m.slowest) {
				m.slowest = r.ReferenceS
			}
		}
	}
	m.others, m.steal = others.mean(), steal.mean()
	for _, r := range rows {
		if r.ReferenceS > 0 {
			m.timed++
			if r.ReferenceS > busySlow*m.fastest {
				m.slow++
			}
		}
	}
	return m
}

// weighted is a mean weighted by the intervals' lengths, of the values
// that could be observed.
type weighted struct{ sum, weight float64 }

func (w *weighted) add(v, weight float64) {
	if !math.IsNaN(v) && weight > 0 {
		w.sum += v * weight
		w.weight += weight
	}
}

func (w weighted) mean() float64 {
	if w.weight == 0 {
		return math.NaN()
	}
	return w.sum / w.weight
}

// spread is the reference timing's slowest median over its fastest.
func (m machineLoad) spread() float64 { return m.slowest / m.fastest }

// slowShare is the share of the timed observations that were slow.
func (m machineLoad) slowShare() float64 { return float64(m.slow) / float64(m.timed) }

// findings are the figures past their thresholds, a sentence each
// (without its full stop); none on a quiet machine. The sentences follow
// one that names the profile: "it" is the profile.
func (m machineLoad) findings() []string {
	var f []string
	cores := fmt.Sprintf("the %d cores", m.cores)
	if m.cores == 1 {
		cores = "the one core"
	}
	switch {
	case m.others > busyOthers:
		s := fmt.Sprintf("Other processes used %s of %s while it measured", report.Pct(m.others), cores)
		if m.othersMax > m.others {
			s += fmt.Sprintf(" (%s %s)", report.Pct(m.othersMax), during(m.othersAt))
		}
		f = append(f, s)
	case m.othersMax > busyOthers:
		f = append(f, fmt.Sprintf("Other processes used %s of %s %s (%s over the whole profile)",
			report.Pct(m.othersMax), cores, during(m.othersAt), report.Pct(m.others)))
	}
	switch {
	case m.steal > busySteal:
		f = append(f, fmt.Sprintf("A hypervisor stole %s of the cores' time while it measured", report.Pct(m.steal)))
	case m.stealMax > busySteal:
		f = append(f, fmt.Sprintf("A hypervisor stole %s of the cores' time %s", report.Pct(m.stealMax), during(m.stealAt)))
	}
	// The load average and the reference timing judge the machine only
	// where the others' share could not be read: a quiet fresh clone's
	// make run had a load average of 1.19 on 2 cores before its profile
	// (its own build, a minute before) and a reference timing over 1.25×
	// its fastest at 9 of 18 observations, while others used at most
	// 3.1% of the cores in any interval and nothing was stolen.
	if !math.IsNaN(m.others) {
		return f
	}
	if m.loadBefore > busyLoad*float64(m.cores) {
		f = append(f, fmt.Sprintf("The load average was %s on %s before it started", report.Num(m.loadBefore), cores))
	}
	if m.slowShare() >= busySlowShare {
		f = append(f, fmt.Sprintf("The reference timing took over %s its fastest (%s) at %d of %d observations, up to %s",
			report.Ratio(busySlow), report.Secs(m.fastest), m.slow, m.timed, report.Ratio(m.spread())))
	}
	return f
}

// during says when an interval was, by what the profile measured in it.
func during(what string) string {
	if what == profilespec.DuringBefore {
		return "in the second before it started"
	}
	return "during " + report.Escape(what)
}

// busy says whether any figure is past its threshold.
func (m machineLoad) busy() bool { return len(m.findings()) > 0 }

// warning is the report's warning of a busy machine, empty for a quiet
// one: the figures past their thresholds, and what they mean.
func (m machineLoad) warning() string {
	f := m.findings()
	if len(f) == 0 {
		return ""
	}
	return "**The profile was measured on a busy machine.** " + strings.Join(f, ". ") +
		". Its timings are a busy machine's, and every simulated result inherits them: run the profile again on a quiet machine (" +
		report.Code("mlsched run --force profile") + ")."
}

// quiet is the report's line on a quiet machine: the figures, none past
// its threshold.
func (m machineLoad) quiet() string {
	var f []string
	if !math.IsNaN(m.others) {
		s := fmt.Sprintf("other processes used %s of the %d cores", report.Pct(m.others), m.cores)
		if !math.IsNaN(m.othersMax) {
			s += fmt.Sprintf(" (at most %s in any second)", report.Pct(m.othersMax))
		}
		f = append(f, s)
	}
	if !math.IsNaN(m.steal) {
		f = append(f, report.Pct(m.steal)+" was stolen")
	}
	if !math.IsNaN(m.loadBefore) {
		f = append(f, "the load average was "+report.Num(m.loadBefore)+" before it started")
	}
	if !math.IsNaN(m.spread()) {
		s := "the reference timing varied " + report.Ratio(m.spread())
		if m.slow > 0 {
			s += fmt.Sprintf(" (over %s its fastest at %d of %d observations)", report.Ratio(busySlow), m.slow, m.timed)
		}
		f = append(f, s)
	}
	s := "The machine was quiet while the profile measured"
	if len(f) > 0 {
		s += ": " + report.AndList(f)
	}
	if math.IsNaN(m.others) && math.IsNaN(m.loadBefore) {
		s += " (this machine's load and CPU shares could not be read)"
	}
	return s + "."
}

// thresholds says when the report calls the machine busy.
func (m machineLoad) thresholds() string {
	return fmt.Sprintf("The report warns past %s of the cores used by others (over the profile, or in any second of it) or %s stolen; "+
		"where those shares cannot be read, past a load average of %s before the profile (%s a core) or a reference timing over %s its fastest at %s of the observations or more "+
		"(a %d×%d product in Go, timed after each part of the profile).",
		report.Pct(busyOthers), report.Pct(busySteal), report.Num(busyLoad*float64(m.cores)), report.Num(busyLoad),
		report.Ratio(busySlow), report.Pct(busySlowShare), profilespec.ReferenceN, profilespec.ReferenceN)
}

// markdown is the Profile section's paragraphs on the machine: the
// warning and every observation when it was busy, one line of the
// figures when it was quiet, and the thresholds.
func (m machineLoad) markdown() string {
	if !m.busy() {
		return m.quiet() + " " + m.thresholds() + "\n\n"
	}
	var b strings.Builder
	b.WriteString(m.warning() + " " + m.thresholds() + "\n\n")
	t := report.NewTable("what the profile measured", ">done at", ">load average (1 min)", ">others' share of the cores", ">stolen", ">reference timing")
	for _, r := range m.rows {
		what := report.Escape(r.During)
		if r.During == profilespec.DuringBefore {
			what = "nothing (the idle second before)"
		}
		t.Add(what, report.Secs(r.ElapsedS), report.Num(r.Load1), report.Pct(r.OthersCPU), report.Pct(r.Steal), report.Secs(r.ReferenceS))
	}
	b.WriteString(t.String() + "\n")
	return b.String()
}

// metricRows are the figures for metrics.parquet, with the verdict as
// busy 1 or 0.
func (m machineLoad) metricRows() []MetricRow {
	busy := 0.0
	if m.busy() {
		busy = 1
	}
	var rows []MetricRow
	for _, v := range []struct {
		metric string
		value  float64
	}{
		{"cores", float64(m.cores)},
		{"others_cpu", m.others},
		{"others_cpu_max", m.othersMax},
		{"steal", m.steal},
		{"steal_max", m.stealMax},
		{"load1_before", m.loadBefore},
		{"load1_after", m.loadAfter},
		{"reference_fastest_s", m.fastest},
		{"reference_spread", m.spread()},
		{"reference_slow_share", m.slowShare()},
		{"busy", busy},
	} {
		rows = append(rows, MetricRow{Scope: section.ScopeMachine, Metric: v.metric, Value: v.value})
	}
	return rows
}
