package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The report writes its numbers with the functions below, so that a
// latency, a share or a speedup reads the same in every section. A number
// that is not one (NaN, an infinity) is written "–".

// Secs formats a duration in seconds with a unit that keeps three
// significant digits readable: µs, ms or s.
func Secs(s float64) string {
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

// Pct formats a fraction as a percentage with one decimal.
func Pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// PctPts formats a difference of fractions in percentage points (signed
// by the caller, as every difference is).
func PctPts(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	if p := 100 * f; p != 0 && math.Abs(p) < 0.05 {
		// A difference that rounds to 0.0 is not nothing: two digits.
		return fmt.Sprintf("%.2g pp", p)
	}
	return fmt.Sprintf("%.1f pp", 100*f)
}

// Num formats a plain number with three significant digits, and a large
// one whole.
func Num(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case math.Abs(f) >= 1000:
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.3g", f)
}

// Ratio formats a speedup: two decimals near 1, three significant digits
// far from it (round_robin can be ten thousand times slower).
func Ratio(f float64) string {
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

// Signed formats a difference with format (Num when nil), a plus sign
// before a positive one.
func Signed(v float64, format func(float64) string) string {
	if format == nil {
		format = Num
	}
	if v > 0 {
		return "+" + format(v)
	}
	return format(v)
}

// AndList joins items as prose: "a", "a and b", "a, b and c".
func AndList(items []string) string {
	switch n := len(items); n {
	case 0:
		return ""
	case 1:
		return items[0]
	default:
		return strings.Join(items[:n-1], ", ") + " and " + items[n-1]
	}
}

// EscapeAll is every name passed through Escape.
func EscapeAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Escape(n)
	}
	return out
}

// Capitalize upper-cases a sentence's first letter (an ASCII one).
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
