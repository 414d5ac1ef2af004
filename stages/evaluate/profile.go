package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// profileSection shows the profile the simulator draws its service times
// from: how busy the machine was while it measured, and each model's
// latency against batch size, on the devices the cluster uses, from the
// profile's samples. The summary opens with its warning when the machine
// was busy.
type profileSection struct {
	// curves are the profile's, read by Read.
	curves []profileCurve
	// machine is how busy the machine was while the profile measured
	// it; nil where the profile recorded none.
	machine *machineLoad
}

var _ section.Section = (*profileSection)(nil)

func (*profileSection) Name() string { return "profile" }

// Read reads the inference runs alone on the cluster's devices from the
// profile's samples, and how busy the machine was.
func (s *profileSection) Read(ev *section.Evaluation) (err error) {
	if s.curves, err = profileCurves(ev.Samples, ev.Devices); err != nil {
		return err
	}
	s.machine, err = readMachine(ev.Machine)
	return err
}

// Rows are each curve's runs and percentiles at each batch size, and the
// machine's figures.
func (s *profileSection) Rows(*section.Evaluation) []MetricRow {
	rows := profileRows(s.curves)
	if s.machine != nil {
		rows = append(rows, s.machine.metricRows()...)
	}
	return rows
}

// busyWarning is the sentence the report opens with when the profile
// was measured on a busy machine; empty otherwise.
func (s *profileSection) busyWarning() string {
	if s.machine == nil {
		return ""
	}
	return s.machine.warning()
}

// Render says how busy the machine was, then charts and tabulates the
// curves.
func (s *profileSection) Render(*section.Evaluation) (report.Section, error) {
	machine := ""
	switch {
	case s.machine != nil:
		machine = s.machine.markdown()
	case slices.ContainsFunc(s.curves, func(c profileCurve) bool { return c.source == profilespec.SourceMeasured }):
		machine = "This profile does not say how busy the machine was while it measured: it was made before profiles recorded that.\n\n"
	}
	if len(s.curves) == 0 {
		return report.Section{Title: "Profile", Markdown: machine + "The profile holds no inference samples.\n"}, nil
	}
	// Where the cluster's devices' runs come from: this machine, or a
	// profile imported from another (a GPU's, say).
	var devices []string
	from := map[string]string{}
	for _, c := range s.curves {
		if _, ok := from[c.device]; !ok {
			devices = append(devices, c.device)
			from[c.device] = c.source
		}
	}
	several := len(devices) > 1
	var series []chart.BandSeries
	cols := []string{"model", "precision", ">threads", ">batch", ">runs", ">P5", ">median", ">P95"}
	if several {
		cols = append([]string{"device"}, cols...)
	}
	t := report.NewTable(cols...)
	for _, c := range s.curves {
		name := c.label()
		if several {
			name = c.device + ": " + name
		}
		series = append(series, chart.BandSeries{Name: name, X: c.batch, Y: c.p50, Lo: c.p5, Hi: c.p95})
		for i := range c.batch {
			row := []string{report.Escape(c.model), report.Escape(c.precision), fmt.Sprint(c.threads), fmt.Sprint(c.batch[i]), fmt.Sprint(c.runs[i]), report.Secs(c.p5[i]), report.Secs(c.p50[i]), report.Secs(c.p95[i])}
			if several {
				row = append([]string{report.Escape(c.device)}, row...)
			}
			t.Add(row...)
		}
	}
	svg, err := chart.Band("Measured latency vs batch size", "batch size (samples)", "latency (s)", series, true, true)
	if err != nil {
		return report.Section{}, fmt.Errorf("chart profile: %w", err)
	}
	c := report.Chart{Name: "profile.svg", SVG: svg}
	origins := make([]string, len(devices))
	for i, dev := range devices {
		where := "measured on this machine"
		if file, ok := strings.CutPrefix(from[dev], "import:"); ok {
			where = "imported from " + report.Code(file)
		}
		origins[i] = report.Escape(dev) + " " + where
	}
	line := "one line per model and precision"
	if several {
		line = "one line per device, model and precision"
	}
	md := machine + c.Link("Measured inference latency vs batch size per model: median, with the band from the 5th to the 95th percentile of the runs") +
		"\n\nThe profile's inference runs alone (no concurrent sessions), " + line + " at the thread count the cluster's devices use (" +
		strings.Join(origins, "; ") + "); the simulator draws every service time from these runs.\n\n" + t.String()
	return report.Section{Title: "Profile", Markdown: md, Charts: []report.Chart{c}}, nil
}

// profileCurve is one model's measured latency vs batch size, alone on a
// profiled device at one thread count.
type profileCurve struct {
	device, model, precision string
	// source is where the device's runs came from: profilespec.SourceMeasured
	// (this machine) or "import:<file>".
	source       string
	threads      int32
	batch        []float64
	runs         []int
	p5, p50, p95 []float64
}

func (c profileCurve) label() string {
	return fmt.Sprintf("%s %s (%d thr)", c.model, c.precision, c.threads)
}

// profileCurves reads the profile's inference samples run alone on the
// (device, threads) pairs the cluster's devices use.
func profileCurves(samplesPath string, devices []schedulespec.ClusterRow) ([]profileCurve, error) {
	samples, err := parquetio.ReadAll[profilespec.Sample](samplesPath)
	if err != nil {
		return nil, fmt.Errorf("read profile samples: %w", err)
	}
	type key struct {
		device, model, precision string
		threads, batch           int32
	}
	source := map[string]string{} // device → where its runs came from
	type curveOf struct {
		device  string
		threads int32
	}
	used := map[curveOf]bool{}
	for _, d := range devices {
		used[curveOf{d.ProfileDevice, d.Threads}] = true
	}
	runs := map[key][]float64{}
	for _, s := range samples {
		if s.Kind != profilespec.KindInference || s.Concurrency != 1 || !used[curveOf{s.Device, s.Threads}] {
			continue
		}
		k := key{s.Device, s.Model, s.Precision, s.Threads, s.Batch}
		runs[k] = append(runs[k], s.LatencyS)
		source[s.Device] = s.Source
	}
	keys := slices.SortedFunc(maps.Keys(runs), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.model, b.model), cmp.Compare(a.precision, b.precision),
			cmp.Compare(a.threads, b.threads), cmp.Compare(a.batch, b.batch))
	})
	var out []profileCurve
	for _, k := range keys {
		v := runs[k]
		slices.Sort(v)
		if n := len(out); n == 0 || out[n-1].device != k.device || out[n-1].model != k.model || out[n-1].precision != k.precision || out[n-1].threads != k.threads {
			out = append(out, profileCurve{device: k.device, model: k.model, precision: k.precision, source: source[k.device], threads: k.threads})
		}
		c := &out[len(out)-1]
		c.batch = append(c.batch, float64(k.batch))
		c.runs = append(c.runs, len(v))
		c.p5 = append(c.p5, stat.Quantile(0.05, stat.Empirical, v, nil))
		c.p50 = append(c.p50, stat.Quantile(0.5, stat.Empirical, v, nil))
		c.p95 = append(c.p95, stat.Quantile(0.95, stat.Empirical, v, nil))
	}
	return out, nil
}

// profileRows are the profile section's numbers: each curve's runs and
// percentiles at each batch size.
func profileRows(curves []profileCurve) []MetricRow {
	var rows []MetricRow
	for _, c := range curves {
		for i, b := range c.batch {
			base := MetricRow{Scope: section.ScopeProfile, Device: c.device, Model: c.model, Precision: c.precision, Threads: c.threads, Batch: int32(b)}
			for _, m := range []struct {
				name string
				v    float64
			}{{"runs", float64(c.runs[i])}, {"p5_latency_s", c.p5[i]}, {"p50_latency_s", c.p50[i]}, {"p95_latency_s", c.p95[i]}} {
				r := base
				r.Metric, r.Value = m.name, m.v
				rows = append(rows, r)
			}
		}
	}
	return rows
}
