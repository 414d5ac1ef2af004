package evaluate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// devicesSection gives each device's utilization under every policy, and
// a timeline of every lane under the policy best on SLO violations, which
// it reads from that policy's devices.parquet.
type devicesSection struct {
	// timeline is the Gantt chart's window; nil before Read.
	timeline *timeline
}

var _ section.Section = (*devicesSection)(nil)

func (*devicesSection) Name() string { return "devices" }

// Read reads the timeline's window (evaluate.timeline) of the batches of
// the policy best on SLO violations, from its first replication.
func (s *devicesSection) Read(ev *section.Evaluation) (err error) {
	slo, _ := section.ObjectiveOf(metrics.MetricSLOViolation)
	best := ev.Policies[ev.Analysis.Ranked(slo)[0]]
	from := ev.Config.Timeline.Start * ev.Bounds.MakespanLBS
	path := filepath.Join(ev.Schedule, filepath.FromSlash(ev.Runs[best][0].Devices))
	s.timeline, err = readTimeline(path, best, ev.Cluster, from, from+ev.Config.Timeline.Span.Seconds())
	return err
}

// Rows are none: the devices' numbers are the policies' section's rows.
func (*devicesSection) Rows(*section.Evaluation) []MetricRow { return nil }

// Render tabulates the utilizations and draws the timeline.
func (s *devicesSection) Render(ev *section.Evaluation) (report.Section, error) {
	head := []string{"policy"}
	for _, dev := range ev.Cluster.Devices {
		head = append(head, ">"+report.Escape(dev))
	}
	head = append(head, ">Jain")
	t := report.NewTable(head...)
	for i, p := range ev.Policies {
		row := []string{report.Escape(p)}
		for _, u := range ev.Results[i].Summary.Devices {
			row = append(row, report.Pct(u.Utilization))
		}
		row = append(row, report.Num(ev.Results[i].Summary.Jain))
		t.Add(row...)
	}
	md := "Utilization is a device's busy lane-seconds over its lanes times the policy's makespan.\n\n" + t.String()
	var charts []report.Chart
	if tl := s.timeline; tl != nil && len(tl.spans) > 0 {
		svg, err := chart.Gantt(fmt.Sprintf("%s: lanes from %s to %s", tl.policy, report.Secs(tl.from), report.Secs(tl.to)), tl.rows, tl.categories, tl.spans, tl.from, tl.to)
		if err != nil {
			return report.Section{}, fmt.Errorf("chart timeline: %w", err)
		}
		c := report.Chart{Name: "timeline.svg", SVG: svg}
		charts = append(charts, c)
		md += fmt.Sprintf("\n%s\n\nThe timeline shows every lane of the cluster under %s (best on SLO violations) for %s from %s, "+
			"batches coloured by their size in samples.\n",
			c.Link("Busy intervals of every lane in a window of time"), report.Escape(tl.policy), report.Secs(tl.to-tl.from), report.Secs(tl.from))
	}
	return report.Section{Title: "Devices", Markdown: md, Charts: charts}, nil
}

// timeline is the Gantt chart's data: every lane's batches in a window.
type timeline struct {
	policy     string
	from, to   float64
	rows       []string
	categories []string
	spans      []chart.Span
}

// sizeClass is a range of batch sizes, up to max samples.
type sizeClass struct {
	name string
	max  int32
}

// sizeClasses colour a timeline's batches by their samples.
var sizeClasses = []sizeClass{{"1 sample", 1}, {"2–8", 8}, {"9–32", 32}, {"33+", 1 << 30}}

// readTimeline reads the batches of policy that overlap [from, to) from
// its devices.parquet at path, streaming it a row group at a time.
func readTimeline(path, policy string, cl metrics.Cluster, from, to float64) (*timeline, error) {
	tl := &timeline{policy: policy, from: from, to: to}
	first := make(map[string]int, len(cl.Devices)) // a device's first row
	lanes := make(map[string]int32, len(cl.Devices))
	for d, name := range cl.Devices {
		first[name], lanes[name] = len(tl.rows), cl.Lanes[d]
		for l := range cl.Lanes[d] {
			tl.rows = append(tl.rows, fmt.Sprintf("%s/%d", name, l))
		}
	}
	for _, s := range sizeClasses {
		tl.categories = append(tl.categories, s.name)
	}
	name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[schedulespec.BatchRow](f)
	defer r.Close()
	buf := make([]schedulespec.BatchRow, 4096)
	// No more rows asked for than are left (see parquetio.ReadAll).
	for left := r.NumRows(); left > 0; {
		n, err := r.Read(buf[:min(int64(len(buf)), left)])
		left -= int64(n)
		for _, b := range buf[:n] {
			if b.StartS >= to || b.EndS <= from {
				continue
			}
			base, ok := first[b.Device]
			if !ok || b.Lane < 0 || b.Lane >= lanes[b.Device] {
				return nil, fmt.Errorf("read %s: batch %d on unknown lane %s/%d", name, b.BatchID, b.Device, b.Lane)
			}
			cat := slices.IndexFunc(sizeClasses, func(c sizeClass) bool { return b.Samples <= c.max })
			tl.spans = append(tl.spans, chart.Span{Row: base + int(b.Lane), Start: max(b.StartS, from), End: min(b.EndS, to), Category: cat})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	slices.SortFunc(tl.spans, func(a, b chart.Span) int { return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Start, b.Start)) })
	return tl, nil
}
