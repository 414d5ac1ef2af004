package evaluate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// table builds a GitHub-style Markdown table; numeric columns (align
// right) are marked by a leading '>' in their header. Headers and cells
// are Markdown: a name or any other string from outside the report's own
// words goes in through report.Escape. The table keeps its own shape
// whatever they hold: every | left in a header or cell (in a code span,
// say) is escaped, and a line break becomes a space.
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func newTable(head ...string) *table {
	t := &table{}
	for _, h := range head {
		r := strings.HasPrefix(h, ">")
		t.head = append(t.head, strings.TrimPrefix(h, ">"))
		t.right = append(t.right, r)
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(mapf(t.head, tableCell), " | ") + " |\n|")
	for _, r := range t.right {
		if r {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.rows {
		b.WriteString("| " + strings.Join(mapf(row, tableCell), " | ") + " |\n")
	}
	return b.String()
}

// cellShape keeps a cell within its column and its row.
var cellShape = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// tableCell is c as one cell of a table row.
func tableCell(c string) string { return cellShape.Replace(c) }

// secs formats a duration in seconds with a unit that keeps three
// significant digits readable: µs, ms or s.
func secs(s float64) string {
	// The unit goes by the value rounded as shown: 999.9999 µs is 1 ms.
	a, err := strconv.ParseFloat(fmt.Sprintf("%.3g", math.Abs(s)), 64)
	if err != nil {
		a = math.Abs(s)
	}
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "–"
	case a == 0:
		return "0 s"
	case a < 1e-3:
		return fmt.Sprintf("%.3g µs", s*1e6)
	case a < 1:
		return fmt.Sprintf("%.3g ms", s*1e3)
	case a < 1000:
		return fmt.Sprintf("%.3g s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}

// pct formats a fraction as a percentage with one decimal.
func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// pctPts formats a difference of fractions in percentage points (signed
// by the caller, as every difference is).
func pctPts(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	if p := 100 * f; p != 0 && math.Abs(p) < 0.05 {
		// A difference that rounds to 0.0 is not nothing: two digits.
		return fmt.Sprintf("%.2g pp", p)
	}
	return fmt.Sprintf("%.1f pp", 100*f)
}

// num formats a plain number with three significant digits, and a large
// one whole.
func num(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case math.Abs(f) >= 1000:
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.3g", f)
}

// ratio formats a speedup: two decimals near 1, three significant digits
// far from it (round_robin can be ten thousand times slower).
func ratio(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || f == 0:
		return "–"
	case f >= 100:
		return fmt.Sprintf("%.0f×", f)
	case f < 0.1:
		return fmt.Sprintf("%.2g×", f)
	}
	return fmt.Sprintf("%.2f×", f)
}
