package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// xy is one data point.
type xy struct{ x, y float64 }

// runs splits the points of a series into runs of consecutive points whose
// coordinates are all finite, dropping the others; ok(i) reports whether
// point i is kept. A line is drawn through each run, broken between runs.
func runs(n int, ok func(i int) bool) [][]int {
	var out [][]int
	var cur []int
	for i := range n {
		if ok(i) {
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// polyline draws runs of points as lines, with an optional marker at every
// point.
type polyline struct {
	runs   [][]xy
	line   draw.LineStyle
	marker draw.GlyphStyle // no marker when Shape is nil
}

var _ plot.GlyphBoxer = (*polyline)(nil)

func (l *polyline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if l.line.Width > 0 {
		for _, run := range l.runs {
			if len(run) < 2 {
				continue
			}
			pts := make([]vg.Point, len(run))
			for i, q := range run {
				pts[i] = vg.Point{X: trX(q.x), Y: trY(q.y)}
			}
			c.StrokeLines(l.line, c.ClipLinesXY(pts)...)
		}
	}
	if l.marker.Shape != nil {
		for _, run := range l.runs {
			for _, q := range run {
				c.DrawGlyph(l.marker, vg.Point{X: trX(q.x), Y: trY(q.y)})
			}
		}
	}
}

// GlyphBoxes makes the plot leave room for markers at the edges.
func (l *polyline) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if l.marker.Shape == nil {
		return nil
	}
	var bs []plot.GlyphBox
	r := l.marker.Rectangle()
	for _, run := range l.runs {
		for _, q := range run {
			bs = append(bs, plot.GlyphBox{X: p.X.Norm(q.x), Y: p.Y.Norm(q.y), Rectangle: r})
		}
	}
	return bs
}

// polygon fills closed shapes given in data coordinates.
type polygon struct {
	shapes [][]xy
	fill   color.Color
}

func (g *polygon) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, s := range g.shapes {
		pts := make([]vg.Point, len(s))
		for i, q := range s {
			pts[i] = vg.Point{X: trX(q.x), Y: trY(q.y)}
		}
		if pts = c.ClipPolygonXY(pts); len(pts) > 2 {
			c.FillPolygon(g.fill, pts)
		}
	}
}

// hline draws a horizontal reference line across the whole data area.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h *hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	if y := trY(h.y); c.ContainsY(y) {
		c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	}
}

// vline draws a vertical reference line across the whole data area.
type vline struct {
	x     float64
	style draw.LineStyle
}

func (v *vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	if x := trX(v.x); c.ContainsX(x) {
		c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
	}
}

// diagonal draws the reference line y = x where both axes cover it. Both
// axes must have the same kind of scale, on which the line is straight.
type diagonal struct {
	style draw.LineStyle
}

func (d *diagonal) Plot(c draw.Canvas, p *plot.Plot) {
	lo, hi := max(p.X.Min, p.Y.Min), min(p.X.Max, p.Y.Max)
	if !(lo < hi) {
		return
	}
	trX, trY := p.Transforms(&c)
	pts := []vg.Point{{X: trX(lo), Y: trY(lo)}, {X: trX(hi), Y: trY(hi)}}
	c.StrokeLines(d.style, c.ClipLinesXY(pts)...)
}
