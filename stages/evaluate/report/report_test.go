package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

const testSVG = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><path d="M0 0L10 10"/></svg>`

func testDoc() *Document {
	cdf := Chart{Name: "latency-cdf.svg", SVG: []byte(testSVG)}
	return &Document{
		Title: "mlsched evaluation",
		Intro: "Two policies on a tiny workload.",
		Sections: []Section{
			{Title: "Summary", Markdown: "| policy | mean (s) |\n|---|---:|\n| fifo | 0.120 |\n| edf | 0.095 |\n"},
			{Title: "Latency: CDFs", Markdown: "The end-to-end latency of every job.\n\n" + cdf.Link("CDF of end-to-end latency"), Charts: []Chart{cdf}},
			{Title: "Summary", Markdown: "A second section with the same title."},
		},
	}
}

// TestHTMLIsSelfContained parses the page and checks that every chart is
// inline, that nothing points outside the page, and that the contents'
// links land on headings.
func TestHTMLIsSelfContained(t *testing.T) {
	page, err := testDoc().HTML()
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("HTML does not parse: %v", err)
	}
	ids := map[string]bool{}
	var links []string
	var svgs, imgs, tables int
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "svg":
			svgs++
		case "img", "script", "link", "iframe":
			imgs++
		case "table":
			tables++
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "id":
				ids[a.Val] = true
			case "href", "src":
				links = append(links, a.Val)
			}
		}
	}
	if svgs != 1 || imgs != 0 || tables != 1 {
		t.Errorf("%d inline svg, %d img/script/link/iframe, %d tables; want 1, 0, 1", svgs, imgs, tables)
	}
	for _, l := range links {
		if !strings.HasPrefix(l, "#") || !ids[l[1:]] {
			t.Errorf("link %q does not land on a heading of the page (ids %v)", l, ids)
		}
	}
	if want := []string{"#summary", "#latency-cdfs", "#summary-1"}; !slices.Equal(links, want) {
		t.Errorf("links %v, want the contents' %v", links, want)
	}
	for _, ext := range []string{"http://", "https://", "//"} {
		if i := bytes.Index(bytes.ReplaceAll(page, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil), []byte(ext)); i >= 0 {
			t.Errorf("page references %q at byte %d", ext, i)
		}
	}
	if bytes.Contains(page, []byte("<?xml")) {
		t.Error("the chart's XML declaration was left inside the page")
	}
}

func TestBadDocuments(t *testing.T) {
	tests := []struct {
		name string
		doc  Document
		want string
	}{
		{"foreign image", Document{Title: "t", Sections: []Section{{Title: "s", Markdown: "![x](https://example.com/x.png)"}}}, `image "https://example.com/x.png" is not one of the report's charts`},
		{"missing chart", Document{Title: "t", Sections: []Section{{Title: "s", Markdown: "![x](charts/a.svg)"}}}, `image "charts/a.svg" is not one of the report's charts`},
		{"bad name", Document{Title: "t", Sections: []Section{{Title: "s", Charts: []Chart{{Name: "../a.svg", SVG: []byte(testSVG)}}}}}, `chart name "../a.svg"`},
		{"empty chart", Document{Title: "t", Sections: []Section{{Title: "s", Charts: []Chart{{Name: "a.svg"}}}}}, "chart a.svg is empty"},
		{"twice", Document{Title: "t", Sections: []Section{{Title: "s", Charts: []Chart{{Name: "a.svg", SVG: []byte(testSVG)}, {Name: "a.svg", SVG: []byte(testSVG)}}}}}, "chart a.svg appears twice"},
		{"untitled", Document{Title: "t", Sections: []Section{{Markdown: "x"}}}, "a section has no title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.doc.HTML()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("HTML() error %v, want one containing %q", err, tt.want)
			}
			if err := tt.doc.Write(t.TempDir(), "r.md", "r.html"); err == nil {
				t.Error("Write accepted the document")
			}
		})
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := testDoc().Write(dir, "report.md", "report.html"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.html", "charts/latency-cdf.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestDetailFoldsAChart: a chart offered with Detail is a link in the
// Markdown and, in the HTML, the chart itself folded under the link's
// text; other links stay links, and one that would run script loses its
// href.
func TestDetailFoldsAChart(t *testing.T) {
	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>`)
	c := Chart{Name: "all.svg", SVG: svg}
	d := &Document{Title: "T", Sections: []Section{{Title: "Latency", Charts: []Chart{c},
		Markdown: c.Detail("Every policy's CDF") + "\n\nSee [the docs](https://example.com/a?b=1&c) and [this](javascript:alert(1)).\n"}}}
	if md := string(d.Markdown()); !strings.Contains(md, "[Every policy's CDF](charts/all.svg)") {
		t.Errorf("Markdown does not link the chart:\n%s", md)
	}
	page, err := d.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<details>\n<summary>Every policy&#39;s CDF</summary>\n<figure>\n<svg",
		`<a href="#latency">Latency</a>`,
		`<a href="https://example.com/a?b=1&amp;c">the docs</a>`,
		`<a>this</a>`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q:\n%s", want, page)
		}
	}
}

// TestNumberCells checks that a number cell's interval goes on a line of
// its own in the page, escaped, that a number keeps its unit, and that
// every other cell is left as the Markdown wrote it.
func TestNumberCells(t *testing.T) {
	md := "| policy | mean | note |\n|---|---:|---|\n" +
		"| fifo | 73.6 ms (71.7 ms … 75.5 ms) | kept (a … b) |\n" +
		"| a<b | no difference (-308 µs … +662 µs) | x |\n" +
		"| edf | 75.8 ms | y |\n" +
		"| greedy | (just brackets) | z |\n" +
		"| learned | *5.2 pp (4.7 pp … 5.6 pp)* | w |\n"
	page, err := (&Document{Title: "T", Sections: []Section{{Title: "All", Markdown: md}}}).HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		want string
		in   bool
	}{
		{">73.6\u00a0ms<br><span class=\"iv\">(71.7\u00a0ms … 75.5\u00a0ms)</span></td>", true},
		{">no difference<br><span class=\"iv\">(-308\u00a0µs … +662\u00a0µs)</span></td>", true},
		{">75.8\u00a0ms</td>", true},
		{">(just brackets)</td>", true},
		{">kept (a … b)</td>", true},                // left-aligned: text, not a number
		{"<em>5.2 pp (4.7 pp … 5.6 pp)</em>", true}, // emphasis: left as it is
		{`&lt;b`, true},
	} {
		if got := strings.Contains(string(page), tc.want); got != tc.in {
			t.Errorf("page contains %q = %v, want %v:\n%s", tc.want, got, tc.in, page)
		}
	}
}

func TestSplitInterval(t *testing.T) {
	for _, tc := range []struct{ in, est, iv string }{
		{"83.1% (78.8% … 87.9%)", "83.1%", "(78.8% … 87.9%)"},
		{"no difference (-44.5 ms … +10.9 ms)", "no difference", "(-44.5 ms … +10.9 ms)"},
		{"83.1%", "", ""},
		{"(78.8% … 87.9%)", "", ""},
		{"x (a, b)", "", ""},
	} {
		est, iv, ok := splitInterval(tc.in)
		if est != tc.est || iv != tc.iv || ok != (tc.est != "") {
			t.Errorf("splitInterval(%q) = %q, %q, %v; want %q, %q", tc.in, est, iv, ok, tc.est, tc.iv)
		}
	}
}
