package report

import (
	"bytes"
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// inlineCharts renders an image that links one of the report's charts as
// the chart itself, inside a figure captioned with the alt text. An image
// that links anything else is an error: the page must not reference a file
// it does not carry.
type inlineCharts struct {
	charts map[string][]byte
}

func (r *inlineCharts) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, r.image)
	reg.Register(ast.KindLink, r.link)
}

// link renders a link to one of the report's charts (Chart.Detail) as the
// chart folded under the link's text, and any other link as a link.
func (r *inlineCharts) link(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	l := n.(*ast.Link)
	dest := string(l.Destination)
	dir, name := path.Split(dest)
	if svg, ok := r.charts[name]; ok && dir == ChartsDir+"/" {
		if entering {
			fmt.Fprintf(w, "<details>\n<summary>%s</summary>\n<figure>\n%s\n</figure>\n</details>\n", html.EscapeString(altText(l, source)), stripProlog(svg))
		}
		return ast.WalkSkipChildren, nil
	}
	if entering {
		w.WriteString("<a")
		// As goldmark renders a link: no href that runs script.
		if !gmhtml.IsDangerousURL(l.Destination) {
			fmt.Fprintf(w, " href=\"%s\"", html.EscapeString(string(util.URLEscape(l.Destination, true))))
		}
		w.WriteString(">")
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func (r *inlineCharts) image(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	dest := string(img.Destination)
	dir, name := path.Split(dest)
	svg, ok := r.charts[name]
	if dir != ChartsDir+"/" || !ok {
		return ast.WalkStop, fmt.Errorf("report: image %q is not one of the report's charts", dest)
	}
	alt := altText(img, source)
	fmt.Fprintf(w, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n", stripProlog(svg), html.EscapeString(alt))
	return ast.WalkSkipChildren, nil
}

// altText is the image's text, as Markdown wrote it.
func altText(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(source))
		} else {
			b.WriteString(altText(c, source))
		}
	}
	return b.String()
}

// stripProlog drops the XML declaration and doctype an SVG file starts
// with, which have no place inside an HTML document.
func stripProlog(svg []byte) []byte {
	s := bytes.TrimSpace(svg)
	for bytes.HasPrefix(s, []byte("<?")) || bytes.HasPrefix(s, []byte("<!DOCTYPE")) {
		i := bytes.IndexByte(s, '>')
		if i < 0 {
			break
		}
		s = bytes.TrimSpace(s[i+1:])
	}
	return s
}

// headingIDs gives headings the ids the Markdown's table of contents links
// (see anchor); a repeated title gets -1, -2, ... appended.
type headingIDs struct{ seen map[string]int }

func (h *headingIDs) Generate(value []byte, kind ast.NodeKind) []byte {
	id := anchor(string(value))
	if n := h.seen[id]; n > 0 {
		h.seen[id]++
		return fmt.Appendf(nil, "%s-%d", id, n)
	}
	h.seen[id] = 1
	return []byte(id)
}

func (h *headingIDs) Put(value []byte) { h.seen[string(value)]++ }

// styleSheet is the page's whole style: readable type, tables with
// numbers aligned, charts that scale with the page.
const styleSheet = `body { margin: 0; background: #fafafa; color: #1f2328;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 1.8em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.35em; margin-top: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: .2em; }
h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; font-size: 13.5px; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 4px 9px; }
th { background: #f6f8fa; }
tr:nth-child(2n) td { background: #fbfcfd; }
code { background: #f6f8fa; padding: .1em .3em; border-radius: 4px; font-size: 90%; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; border-radius: 6px; font-size: 13px; }
pre code { background: none; padding: 0; }
figure { margin: 1.2em 0; }
figure svg { width: 100%; max-width: 880px; height: auto; }
figcaption { color: #57606a; font-size: 13px; }
.iv { color: #57606a; font-size: 12px; }
`
