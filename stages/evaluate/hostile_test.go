package evaluate

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestHostileNamesStayText builds the sections that show names from the
// config, the artifacts and the profiled machine with names that are
// Markdown and HTML: a device "a|b" once added a column to the devices
// table's header, and one named <script>alert(1)</script> appeared raw in
// report.md. The config refuses such device names now (package ident),
// but the report must not depend on it: every name is escaped where it
// reaches Markdown (report.Escape). The Markdown is kept in
// testdata/hostile-names.md; the HTML must hold no element a name made,
// and every table row as many cells as its header.
func TestHostileNamesStayText(t *testing.T) {
	devices := []string{"a|b", "<script>alert(1)</script>", "x*y_`z`\n[l](u)"}
	policies := []string{"fifo|evil", "<img src=x onerror=alert(1)>", "round_robin"}
	ev := &section.Evaluation{
		Config:   testConfig(),
		Policies: policies,
		Cluster:  metrics.Cluster{Devices: devices, Lanes: []int32{1, 2, 3}},
		Provenance: Provenance{
			Versions: []string{"evaluate@00`1", "schedule@<b>2</b>"},
			Config:   "schedule:\n  cluster:\n    - name: \"```\"\n",
			Machine:  map[string]string{"cpu": "<script>x</script> | Xeon", "cores|n": "2"},
			Commands: []string{"mlsched run --set a=```"},
		},
	}
	profile := &profileSection{curves: []profileCurve{{device: "d|1", model: "m|<b>", precision: "fp32", threads: 1,
		batch: []float64{1, 2}, runs: []int{3, 3}, p5: []float64{1e-3, 2e-3}, p50: []float64{2e-3, 3e-3}, p95: []float64{3e-3, 4e-3}}}}
	for _, dev := range devices {
		ev.Devices = append(ev.Devices, schedulespec.ClusterRow{Device: dev, Kind: schedulespec.KindDeclared, ProfileDevice: "<i>cpu</i>", Lanes: 1, Speed: 2})
	}
	var reps [][]metrics.Summary
	var series [][]section.Series
	for range policies {
		var s metrics.Summary
		for _, dev := range devices {
			s.Devices = append(s.Devices, metrics.DeviceUse{Device: dev, Utilization: 0.5})
		}
		ev.Results = append(ev.Results, section.Result{Summary: s})
		reps, series = append(reps, []metrics.Summary{s}), append(series, []section.Series{{}})
	}
	var err error
	if ev.Analysis, err = section.NewAnalysis(reps, series, 0.95); err != nil {
		t.Fatal(err)
	}
	doc := &report.Document{Title: "hostile", Intro: section.ClusterText(ev.Devices)}
	for _, s := range []section.Section{&devicesSection{}, policiesSection{}, profile, provenanceSection{}} {
		sec, err := s.Render(ev)
		if err != nil {
			t.Fatal(err)
		}
		doc.Sections = append(doc.Sections, sec)
	}
	md := doc.Markdown()
	golden.Check(t, "hostile-names.md", md, "the report with hostile names")
	if bytes.Contains(md, []byte("<script")) || bytes.Contains(md, []byte("<img")) {
		t.Errorf("report.md holds a raw tag:\n%s", md)
	}

	page, err := doc.HTML()
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "script", "img", "b", "i", "em", "strong", "code":
			if n.Data != "code" || n.Parent.Data != "pre" && n.Parent.Data != "li" {
				t.Errorf("report.html holds a <%s> element made from a name", n.Data)
			}
		case "a":
			// The contents' links are the report's own.
			for _, a := range n.Attr {
				if a.Key == "href" && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("report.html links to %q", a.Val)
				}
			}
		case "tr":
			cells := 0
			for c := range n.ChildNodes() {
				if c.Type == html.ElementNode {
					cells++
				}
			}
			if first := firstRowCells(n); cells != first {
				t.Errorf("a table row has %d cells, its header %d", cells, first)
			}
		}
	}
	// The devices table: the policy, one column per device, Jain's index;
	// in its header and in each row.
	_, devicesMD, _ := strings.Cut(string(md), "## Devices")
	devicesMD, _, _ = strings.Cut(devicesMD, "## ")
	rows := 0
	for _, line := range strings.Split(devicesMD, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		if got := len(splitRow(line)); got != len(devices)+2 {
			t.Errorf("a row of the devices table has %d cells, want %d: %s", got, len(devices)+2, line)
		}
	}
	if rows != len(policies)+2 {
		t.Errorf("the devices table has %d lines, want %d", rows, len(policies)+2)
	}
}

// firstRowCells counts the cells of the first row of the table that holds
// row.
func firstRowCells(row *html.Node) int {
	table := row.Parent
	for table != nil && table.Data != "table" {
		table = table.Parent
	}
	for n := range table.Descendants() {
		if n.Type == html.ElementNode && n.Data == "tr" {
			cells := 0
			for c := range n.ChildNodes() {
				if c.Type == html.ElementNode {
					cells++
				}
			}
			return cells
		}
	}
	return 0
}

// splitRow splits a Markdown table row on its unescaped pipes.
func splitRow(line string) []string {
	var cells []string
	var cur strings.Builder
	for i := 1; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			cur.WriteByte(line[i])
			cur.WriteByte(line[i+1])
			i++
		case line[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return cells
}
