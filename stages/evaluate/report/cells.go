package report

import (
	"html"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	gmtext "github.com/yuin/goldmark/text"
)

// numberCells lays out the number cells (right-aligned) of the HTML
// page's tables so that wide tables fit the page instead of scrolling
// sideways. An estimate's interval goes on a line of its own:
// "73.6 ms (71.7 ms … 75.5 ms)" becomes the estimate over its interval
// in smaller type, the estimate still read first. A figure never breaks
// between a number and its unit (the space after a digit is a no-break
// space), while words may wrap: "too few jobs (needs 200)" takes two
// lines where the table needs the room. The Markdown keeps one line per
// cell, as a terminal or a pull request shows it best.
type numberCells struct{}

func (numberCells) Transform(doc *ast.Document, reader gmtext.Reader, _ parser.Context) {
	source := reader.Source()
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		cell, ok := n.(*extast.TableCell)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if cell.Alignment != extast.AlignRight {
			return ast.WalkSkipChildren, nil
		}
		var b strings.Builder
		for c := cell.FirstChild(); c != nil; c = c.NextSibling() {
			t, ok := c.(*ast.Text)
			if !ok {
				return ast.WalkSkipChildren, nil // emphasis, code, a link: leave the cell as it is
			}
			b.Write(t.Segment.Value(source))
		}
		out := html.EscapeString(keepUnits(b.String()))
		if est, iv, ok := splitInterval(b.String()); ok {
			out = html.EscapeString(keepUnits(est)) + `<br><span class="iv">` + html.EscapeString(keepUnits(iv)) + `</span>`
		}
		cell.RemoveChildren(cell)
		s := ast.NewString([]byte(out))
		s.SetCode(true) // written as it is: already escaped
		cell.AppendChild(cell, s)
		return ast.WalkSkipChildren, nil
	})
}

// splitInterval splits "estimate (lo … hi)" into the estimate and the
// parenthesised interval; ok is false for any other text.
func splitInterval(s string) (est, iv string, ok bool) {
	if !strings.HasSuffix(s, ")") {
		return "", "", false
	}
	i := strings.LastIndex(s, " (")
	if i <= 0 || !strings.Contains(s[i:], " … ") {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// keepUnits joins each number to what follows it with a no-break space,
// so that "279 ms" or "+1.2 pp" stays on one line.
func keepUnits(s string) string {
	var b strings.Builder
	prev := ' '
	for _, r := range s {
		if r == ' ' && (unicode.IsDigit(prev) || prev == '%') {
			r = '\u00a0'
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
