package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
)

// Series is one named line or set of values.
//
// [CDF] and [Histogram] read the raw values from X and ignore Y; [Lines]
// and [Scatter] read X and Y as the coordinates of their points.
type Series struct {
	Name string
	X, Y []float64
	// Style, when not zero, is the series' style number plus one: series
	// given the same Style look alike in every chart (colour, dash and
	// marker), so that a policy keeps its look across a report whatever
	// other series a chart shows. Zero styles a series by its position.
	Style int
}

// style is the style number of series i of series: its Style's, or else
// its position.
func style(series []Series, i int) int {
	if s := series[i].Style; s > 0 {
		return s - 1
	}
	return i
}

// Errors returned (wrapped, with the chart and series named) by the chart
// functions; test for them with errors.Is.
var (
	// ErrNoSeries means the chart was given no series, no categories or no rows.
	ErrNoSeries = errors.New("no series")
	// ErrEmpty means a series has no values at all.
	ErrEmpty = errors.New("no values")
	// ErrNoFinite means a series has values but none of them is finite.
	ErrNoFinite = errors.New("no finite values")
	// ErrLength means two slices that must be parallel differ in length.
	ErrLength = errors.New("mismatched lengths")
	// ErrNotPositive means a value on a log axis is zero or negative.
	ErrNotPositive = errors.New("value on a log axis is not positive")
	// ErrInvalid means some other argument is out of range.
	ErrInvalid = errors.New("invalid argument")
	// ErrRender means gonum/plot panicked while drawing.
	ErrRender = errors.New("render failed")
)

// okabeIto is the Okabe-Ito palette in the order series get it: the darker,
// higher-contrast colours first, yellow (weak on white) last.
var okabeIto = [...]color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
}

// PaletteSize is the number of distinct colours [Color] cycles through.
const PaletteSize = len(okabeIto)

// Color returns the colour of series (or category) i: the Okabe-Ito palette
// in a fixed order, repeating after [PaletteSize] entries. Negative i is
// treated as its absolute value.
func Color(i int) color.NRGBA {
	if i < 0 {
		i = -i
	}
	return okabeIto[i%len(okabeIto)]
}

// withAlpha returns c with opacity a in [0, 1].
func withAlpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Round(a * 255))
	return c
}

// chartError prefixes err with the chart's title.
func chartError(title string, err error) error {
	return fmt.Errorf("chart %q: %w", title, err)
}

// seriesRef names series i in errors: by name, or by index when unnamed.
func seriesRef(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("series #%d", i)
	}
	return fmt.Sprintf("series %q", name)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

// guard turns a panic raised while drawing into an [ErrRender] error naming
// the chart. It must be deferred directly by the exported function.
func guard(title string, out *[]byte, err *error) {
	if r := recover(); r != nil {
		*out = nil
		*err = chartError(title, fmt.Errorf("%w: %v", ErrRender, r))
	}
}

// checkLog returns an error naming the series and index if a finite value in
// vs is not positive.
func checkLog(ref, field string, vs []float64) error {
	for i, v := range vs {
		if finite(v) && v <= 0 {
			return fmt.Errorf("%s: %s[%d] = %g: %w", ref, field, i, v, ErrNotPositive)
		}
	}
	return nil
}

// checkLen returns an error if got differs from want.
func checkLen(ref, field string, got int, wantField string, want int) error {
	if got != want {
		return fmt.Errorf("%s: len(%s) = %d, want len(%s) = %d: %w", ref, field, got, wantField, want, ErrLength)
	}
	return nil
}

// extent is a closed interval of data values; empty while lo > hi.
type extent struct{ lo, hi float64 }

func emptyExtent() extent { return extent{math.Inf(1), math.Inf(-1)} }

func (e *extent) add(v float64) {
	e.lo = math.Min(e.lo, v)
	e.hi = math.Max(e.hi, v)
}

// widened returns e's bounds, or for a single value bounds around it: a
// factor each way on a log axis, half each way around 0, a tenth of the
// value each way otherwise.
func (e extent) widened(log bool, factor, half float64) (lo, hi float64) {
	lo, hi = e.lo, e.hi
	if lo != hi {
		return lo, hi
	}
	switch {
	case log:
		return lo / factor, hi * factor
	case lo == 0:
		return -half, half
	}
	d := math.Abs(lo) / 10
	return lo - d, hi + d
}

// checkValues checks the raw values (X) of series i of a distribution
// chart: some values, at least one finite, all positive on a log axis.
func checkValues(i int, s Series, logX bool) error {
	ref := seriesRef(i, s.Name)
	if len(s.X) == 0 {
		return fmt.Errorf("%s has %w", ref, ErrEmpty)
	}
	if logX {
		if err := checkLog(ref, "X", s.X); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(s.X, finite) {
		return fmt.Errorf("%s has %w", ref, ErrNoFinite)
	}
	return nil
}

// checkXY checks the X and Y of a line series: some values, as many of
// each.
func checkXY(ref string, x, y []float64) error {
	if len(x) == 0 && len(y) == 0 {
		return fmt.Errorf("%s has %w", ref, ErrEmpty)
	}
	return checkLen(ref, "Y", len(y), "X", len(x))
}

// Positive keeps the values above zero: a log axis can show no other.
func Positive(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}
