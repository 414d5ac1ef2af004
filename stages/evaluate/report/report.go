// Package report assembles mlsched's evaluation report from sections of
// Markdown and SVG charts, and writes it in two forms from the one source:
// report.md, which links its charts as files, and report.html, the same
// Markdown rendered by goldmark into a single self-contained page with the
// charts inline and the style sheet embedded, so that it reads the same
// offline, mailed or attached to a review.
//
// It also holds what every section writes with: Escape, Code and Fence
// for strings from outside the report, Table for Markdown tables, and the
// number formats (Secs, Pct, Num and the rest), so that a number reads the
// same in every section.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// ChartsDir is the directory, beside the report, that holds its charts.
const ChartsDir = "charts"

// Document is a report: a title, an introduction and sections in order.
type Document struct {
	Title string
	// Lead is Markdown shown right under the title: what a reader acts on
	// (the recommendation), on the first screen.
	Lead string
	// Intro is Markdown shown after the lead, before the contents.
	Intro    string
	Sections []Section
}

// Section is one part of the report. Markdown links each of Charts as
// ![alt](charts/<name>); Document.Markdown adds the heading.
type Section struct {
	Title    string
	Markdown string
	Charts   []Chart
}

// Chart is an SVG chart a section shows.
type Chart struct {
	// Name is the file's name under ChartsDir, ending in .svg.
	Name string
	SVG  []byte
}

// Link returns the Markdown that shows the chart with the given alt text.
func (c Chart) Link(alt string) string {
	return fmt.Sprintf("![%s](%s)", alt, path.Join(ChartsDir, c.Name))
}

// Detail returns the Markdown that offers the chart without showing it:
// in report.md a link to the chart's file, in report.html the chart folded
// under the link's text, shown by a click. For a chart of every series
// beside one that shows the few that matter.
func (c Chart) Detail(text string) string {
	return fmt.Sprintf("[%s](%s)", text, path.Join(ChartsDir, c.Name))
}

var chartName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\.svg$`)

// check reports duplicate or badly named charts and sections without a
// title.
func (d *Document) check() (map[string][]byte, error) {
	charts := map[string][]byte{}
	var errs []error
	for _, s := range d.Sections {
		if s.Title == "" {
			errs = append(errs, errors.New("report: a section has no title"))
		}
		for _, c := range s.Charts {
			switch {
			case !chartName.MatchString(c.Name):
				errs = append(errs, fmt.Errorf("report: section %q: chart name %q is not a lower-case file name ending in .svg", s.Title, c.Name))
			case charts[c.Name] != nil:
				errs = append(errs, fmt.Errorf("report: chart %s appears twice", c.Name))
			case len(c.SVG) == 0:
				errs = append(errs, fmt.Errorf("report: section %q: chart %s is empty", s.Title, c.Name))
			default:
				charts[c.Name] = c.SVG
			}
		}
	}
	return charts, errors.Join(errs...)
}

// Markdown returns the report as Markdown: the title, the introduction, a
// table of contents, and the sections under second-level headings.
func (d *Document) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", d.Title)
	if d.Lead != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(d.Lead))
	}
	if d.Intro != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(d.Intro))
	}
	b.WriteString("Contents:\n\n")
	ids := &headingIDs{seen: map[string]int{}}
	ids.Generate([]byte(d.Title), 0) // the title's heading comes first
	for i, s := range d.Sections {
		fmt.Fprintf(&b, "%d. [%s](#%s)\n", i+1, s.Title, ids.Generate([]byte(s.Title), 0))
	}
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", s.Title, strings.TrimSpace(s.Markdown))
	}
	return []byte(b.String())
}

// anchor is the id goldmark's auto heading ids give a title: lower case,
// spaces as hyphens, other punctuation dropped.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// HTML renders the Markdown into one self-contained page: GitHub-style
// tables, the charts inline as SVG inside figures, and the style sheet in
// the head. It references nothing outside itself.
func (d *Document) HTML() ([]byte, error) {
	charts, err := d.check()
	if err != nil {
		return nil, err
	}
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table),
		goldmark.WithParserOptions(parser.WithAutoHeadingID(), parser.WithASTTransformers(util.Prioritized(numberCells{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(&inlineCharts{charts: charts}, 100))),
	)
	var body bytes.Buffer
	ctx := parser.NewContext(parser.WithIDs(&headingIDs{seen: map[string]int{}}))
	if err := md.Convert(d.Markdown(), &body, parser.WithContext(ctx)); err != nil {
		return nil, fmt.Errorf("report: render HTML: %w", err)
	}
	var page bytes.Buffer
	fmt.Fprintf(&page, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n",
		html.EscapeString(d.Title), styleSheet)
	page.Write(body.Bytes())
	page.WriteString("</main>\n</body>\n</html>\n")
	return page.Bytes(), nil
}

// Write writes report.md, report.html and the charts into dir.
func (d *Document) Write(dir, mdName, htmlName string) error {
	charts, err := d.check()
	if err != nil {
		return err
	}
	page, err := d.HTML()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for name, svg := range charts {
		if err := os.WriteFile(filepath.Join(dir, ChartsDir, name), svg, 0o644); err != nil {
			return fmt.Errorf("report: write chart %s: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, mdName), d.Markdown(), 0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", mdName, err)
	}
	if err := os.WriteFile(filepath.Join(dir, htmlName), page, 0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", htmlName, err)
	}
	return nil
}
