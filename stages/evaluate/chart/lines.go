package chart

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// refLine is the style of reference lines: dashed mid grey, thinner than data.
var refLine = draw.LineStyle{Color: refColor, Width: vg.Points(1), Dashes: []vg.Length{4, 3}}

// LineOptions adjusts a [Lines] chart. The zero value draws linear axes
// fitted to the data, a marker at every point and no reference line.
type LineOptions struct {
	// LogX and LogY put the axis on a log scale; every finite value on it
	// must then be positive.
	LogX, LogY bool
	// HLine, when set, draws a dashed horizontal reference line at that y
	// (the SLO target, say); the y axis is extended to include it.
	HLine *float64
	// HLineLabel names the reference line in the legend; empty leaves it
	// out of the legend.
	HLineLabel string
	// YMin and YMax, when set, fix the ends of the y axis (for SLO
	// attainment, 0 and 1); data beyond them is clipped.
	YMin, YMax *float64
	// VLine, when set, draws a dashed vertical reference line at that x
	// (the epoch whose weights a network keeps); the x axis is extended
	// to include it. VLineLabel names it in the legend.
	VLine      *float64
	VLineLabel string
	// Diagonal draws the dashed line y = x where both axes cover it (a
	// ROC curve's chance line); LogX and LogY must then be equal, so that
	// the line is straight. DiagonalLabel names it in the legend.
	Diagonal      bool
	DiagonalLabel string
	// NoMarkers leaves out the marker at each point: for curves of many
	// points (a ROC curve, a loss per epoch), where markers would merge
	// into a thick line. The series then differ by colour and, from the
	// ninth on, dash pattern.
	NoMarkers bool
	// Marks are single points drawn apart from the lines, each a cross in
	// the colour of the series it belongs to: one series' result under
	// another condition on the same axes (a policy's attainment with
	// train's predictor, beside its curve over prediction errors). A mark
	// with a non-finite coordinate is left out. MarksLabel names the marks
	// in the legend, with a grey cross; empty leaves them out of it.
	Marks      []Mark
	MarksLabel string
}

// Mark is one point of [LineOptions].Marks: at (X, Y), in the colour of
// series Series (an index into the series drawn).
type Mark struct {
	Series int
	X, Y   float64
}

// Lines draws each series as a line through its points (X[i], Y[i]) with a
// marker at every point: load-sweep curves, with x the offered load and y
// the SLO attainment or the P99 latency; with opts.NoMarkers, curves of
// many points such as a training curve or a ROC curve.
//
// Points are joined in the order given. A point with a non-finite
// coordinate is left out and the line breaks there (without markers, a
// point alone between two breaks is not drawn). Series i gets [Color](i)
// and the i-th marker shape; opts.Marks are drawn over the lines.
func Lines(title, xLabel, yLabel string, series []Series, opts LineOptions) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	xr, yr := emptyExtent(), emptyExtent()
	curves := make([][][]xy, len(series))
	for i, s := range series {
		ref := seriesRef(i, s.Name)
		if err := checkXY(ref, s.X, s.Y); err != nil {
			return nil, chartError(title, err)
		}
		if err := checkAxes(ref, s.X, s.Y, opts.LogX, opts.LogY); err != nil {
			return nil, chartError(title, err)
		}
		for _, run := range runs(len(s.X), func(k int) bool { return finite(s.X[k]) && finite(s.Y[k]) }) {
			pts := make([]xy, len(run))
			for j, k := range run {
				pts[j] = xy{s.X[k], s.Y[k]}
				xr.add(s.X[k])
				yr.add(s.Y[k])
			}
			curves[i] = append(curves[i], pts)
		}
		if len(curves[i]) == 0 {
			return nil, chartError(title, fmt.Errorf("%s has %w", ref, ErrNoFinite))
		}
	}
	var marks []Mark
	for k, m := range opts.Marks {
		if m.Series < 0 || m.Series >= len(series) {
			return nil, chartError(title, fmt.Errorf("Marks[%d].Series = %d, want 0 to %d: %w", k, m.Series, len(series)-1, ErrInvalid))
		}
		ref := fmt.Sprintf("Marks[%d]", k)
		if err := checkAxes(ref, []float64{m.X}, []float64{m.Y}, opts.LogX, opts.LogY); err != nil {
			return nil, chartError(title, err)
		}
		if finite(m.X) && finite(m.Y) {
			marks = append(marks, m)
			xr.add(m.X)
			yr.add(m.Y)
		}
	}
	if h := opts.HLine; h != nil {
		if !finite(*h) || (opts.LogY && *h <= 0) {
			return nil, chartError(title, fmt.Errorf("HLine = %g: %w", *h, ErrInvalid))
		}
		yr.add(*h)
	}
	if v := opts.VLine; v != nil {
		if !finite(*v) || (opts.LogX && *v <= 0) {
			return nil, chartError(title, fmt.Errorf("VLine = %g: %w", *v, ErrInvalid))
		}
		xr.add(*v)
	}
	if opts.Diagonal && opts.LogX != opts.LogY {
		return nil, chartError(title, fmt.Errorf("Diagonal with LogX %v and LogY %v: the line y = x needs both axes linear or both log: %w", opts.LogX, opts.LogY, ErrInvalid))
	}
	yr, err = fixRange(yr, opts.YMin, opts.YMax, opts.LogY)
	if err != nil {
		return nil, chartError(title, err)
	}

	p := newPlot(xLabel, yLabel)
	setRange(&p.X, xr, opts.LogX)
	setRange(&p.Y, yr, opts.LogY)
	p.Add(grid(true, true))
	var legend []legendEntry
	if opts.HLine != nil {
		p.Add(&hline{y: *opts.HLine, style: refLine})
	}
	if opts.VLine != nil {
		p.Add(&vline{x: *opts.VLine, style: refLine})
	}
	if opts.Diagonal {
		p.Add(&diagonal{style: refLine})
	}
	for i, c := range curves {
		l := &polyline{runs: c, line: lineStyle(style(series, i), 1.5)}
		if !opts.NoMarkers {
			l.marker = markerStyle(style(series, i))
		}
		p.Add(l)
		if series[i].Name != "" {
			legend = append(legend, legendEntry{series[i].Name, []plot.Thumbnailer{sample{line: l.line, marker: l.marker}}})
		}
	}
	for _, m := range marks {
		p.Add(&polyline{runs: [][]xy{{{m.X, m.Y}}}, marker: markStyle(Color(style(series, m.Series)))})
	}
	if len(marks) > 0 && opts.MarksLabel != "" {
		legend = append(legend, legendEntry{opts.MarksLabel, []plot.Thumbnailer{sample{marker: markStyle(refColor)}}})
	}
	for _, ref := range []struct {
		on    bool
		label string
	}{{opts.HLine != nil, opts.HLineLabel}, {opts.VLine != nil, opts.VLineLabel}, {opts.Diagonal, opts.DiagonalLabel}} {
		if ref.on && ref.label != "" {
			legend = append(legend, legendEntry{ref.label, []plot.Thumbnailer{sample{line: refLine}}})
		}
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}

// checkAxes checks that the finite values on log axes are positive.
func checkAxes(ref string, xs, ys []float64, logX, logY bool) error {
	if logX {
		if err := checkLog(ref, "X", xs); err != nil {
			return err
		}
	}
	if logY {
		if err := checkLog(ref, "Y", ys); err != nil {
			return err
		}
	}
	return nil
}

// fixRange applies explicit axis ends to the data extent e.
func fixRange(e extent, lo, hi *float64, log bool) (extent, error) {
	if lo != nil {
		if !finite(*lo) || (log && *lo <= 0) {
			return e, fmt.Errorf("YMin = %g: %w", *lo, ErrInvalid)
		}
		e.lo = *lo
	}
	if hi != nil {
		if !finite(*hi) || (log && *hi <= 0) {
			return e, fmt.Errorf("YMax = %g: %w", *hi, ErrInvalid)
		}
		e.hi = *hi
	}
	if e.lo > e.hi || (lo != nil && hi != nil && e.lo == e.hi) {
		return e, fmt.Errorf("y axis from %g to %g is empty: %w", e.lo, e.hi, ErrInvalid)
	}
	return e, nil
}

// markStyle is the glyph of a [Mark]: a cross, larger than the series'
// markers and unlike any of their shapes, so that it reads as another
// kind of point in the series' colour.
func markStyle(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(4.2), Shape: crossGlyph{}}
}

// crossGlyph draws an ×.
type crossGlyph struct{}

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 0.8
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}
