package report

import "strings"

// Table builds a GitHub-style Markdown table; numeric columns (align
// right) are marked by a leading '>' in their header. Headers and cells
// are Markdown: a name or any other string from outside the report's own
// words goes in through Escape. The table keeps its own shape whatever
// they hold: every | left in a header or cell (in a code span, say) is
// escaped, and a line break becomes a space.
type Table struct {
	head  []string
	right []bool
	rows  [][]string
}

// NewTable starts a table with the given column headers.
func NewTable(head ...string) *Table {
	t := &Table{}
	for _, h := range head {
		r := strings.HasPrefix(h, ">")
		t.head = append(t.head, strings.TrimPrefix(h, ">"))
		t.right = append(t.right, r)
	}
	return t
}

// Add appends a row of cells.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows added: a section leaves out a table without
// any.
func (t *Table) Len() int { return len(t.rows) }

// String writes the table as Markdown, ending in a newline.
func (t *Table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(cells(t.head), " | ") + " |\n|")
	for _, r := range t.right {
		if r {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.rows {
		b.WriteString("| " + strings.Join(cells(row), " | ") + " |\n")
	}
	return b.String()
}

// cellShape keeps a cell within its column and its row.
var cellShape = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// cells are row's cells as they go into a table row.
func cells(row []string) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = cellShape.Replace(c)
	}
	return out
}
