package chart

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"
	"unicode/utf8"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Page geometry, in points (1 pt = 4/3 CSS px): 480×300 pt is 640×400 px.
const (
	chartWidth  vg.Length = 480
	chartHeight vg.Length = 300
	margin      vg.Length = 8
)

// Text sizes in points.
const (
	titleSize  = 12
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
)

var (
	inkColor   = color.NRGBA{0x22, 0x22, 0x22, 0xFF} // title, labels
	tickColor  = color.NRGBA{0x44, 0x44, 0x44, 0xFF} // tick labels
	axisColor  = color.NRGBA{0x66, 0x66, 0x66, 0xFF} // axis and tick lines
	gridColor  = color.NRGBA{0xE4, 0xE4, 0xE4, 0xFF} // grid lines
	refColor   = color.NRGBA{0x55, 0x55, 0x55, 0xFF} // reference lines, error bars
	stripColor = color.NRGBA{0xF4, 0xF4, 0xF4, 0xFF} // alternate Gantt rows
)

// sans returns the Liberation Sans font at size points. gonum/plot measures
// text with the Liberation metrics it carries; the SVG names Arial and
// Helvetica as fallbacks, which share those metrics, so labels keep their
// measured widths in a browser that lacks Liberation.
func sans(size float64, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// textStyle is the style of every piece of text in a chart.
func textStyle(size float64, bold bool, c color.Color, x text.XAlignment, y text.YAlignment) text.Style {
	return text.Style{
		Color:   c,
		Font:    sans(size, bold),
		XAlign:  x,
		YAlign:  y,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot returns a plot with the package's axis look and no title or
// legend: the frame draws those outside the plot area.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	styleAxis(&p.X, xLabel)
	styleAxis(&p.Y, yLabel)
	p.X.Tick.Label.YAlign = draw.YTop
	p.Y.Tick.Label.XAlign = draw.XRight
	p.Y.Tick.Label.YAlign = draw.YCenter
	return p
}

func styleAxis(a *plot.Axis, label string) {
	a.Label.Text = label
	a.Label.TextStyle = textStyle(labelSize, false, inkColor, draw.XCenter, draw.YBottom)
	a.Label.Padding = vg.Points(3)
	a.LineStyle = draw.LineStyle{Color: axisColor, Width: vg.Points(0.75)}
	a.Padding = vg.Points(4)
	a.Tick.Label = textStyle(tickSize, false, tickColor, a.Tick.Label.XAlign, a.Tick.Label.YAlign)
	a.Tick.LineStyle = draw.LineStyle{Color: axisColor, Width: vg.Points(0.75)}
	a.Tick.Length = vg.Points(4)
	a.Tick.Marker = linearTicks{}
}

// setRange sets the axis to cover e, on a log scale when log; a degenerate
// extent is widened so the single value sits in the middle.
func setRange(a *plot.Axis, e extent, log bool) {
	lo, hi := e.widened(log, 2, 1)
	a.Min, a.Max = lo, hi
	if log {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
	} else {
		a.Scale = plot.LinearScale{}
		a.Tick.Marker = linearTicks{}
	}
}

// grid returns a light grid at the major ticks of the axes named.
func grid(vertical, horizontal bool) plot.Plotter {
	g := &gridLines{}
	sty := draw.LineStyle{Color: gridColor, Width: vg.Points(0.6)}
	if vertical {
		g.vertical = sty
	}
	if horizontal {
		g.horizontal = sty
	}
	return g
}

// gridLines draws lines across the data area at every labelled tick.
type gridLines struct{ vertical, horizontal draw.LineStyle }

func (g *gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if g.vertical.Color != nil {
		for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			if x := trX(t.Value); !t.IsMinor() && c.ContainsX(x) {
				c.StrokeLine2(g.vertical, x, c.Min.Y, x, c.Max.Y)
			}
		}
	}
	if g.horizontal.Color != nil {
		for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
			if y := trY(t.Value); !t.IsMinor() && c.ContainsY(y) {
				c.StrokeLine2(g.horizontal, c.Min.X, y, c.Max.X, y)
			}
		}
	}
}

// linearTicks labels a linear axis at multiples of a step of 1, 2, 2.5 or 5
// times a power of ten, the step that gives closest to five intervals over
// the range, with unlabelled minor ticks between the labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo)}}
	}
	const intervals = 5
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/intervals)))
	step, minors, bestErr := 0.0, 0.0, math.Inf(1)
	for _, m := range []struct{ mult, minors float64 }{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}, {10, 5}} {
		s := m.mult * mag
		if e := math.Abs(math.Log((hi - lo) / s / intervals)); e < bestErr {
			step, minors, bestErr = s, m.minors, e
		}
	}
	var ts []plot.Tick
	minor := step / minors
	eps := step * 1e-9
	for k := math.Ceil((lo - eps) / minor); k*minor <= hi+eps; k++ {
		v := k * minor
		if math.Mod(math.Abs(k), minors) == 0 {
			ts = append(ts, plot.Tick{Value: v, Label: formatTick(v)})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// logTicks labels a log axis at powers of ten, adding 2× and 5× when the
// axis spans few decades and thinning the powers when it spans many; the
// other integer multiples get unlabelled minor ticks. Only ticks inside the
// range are returned, so no off-axis label widens the margins.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return linearTicks{}.Ticks(lo, hi)
	}
	first := int(math.Floor(math.Log10(lo)))
	last := int(math.Ceil(math.Log10(hi)))
	decades := math.Log10(hi) - math.Log10(lo)
	var labelled [10]bool // by multiplier of the power of ten
	labelled[1] = true
	switch {
	case decades <= 1.2:
		labelled[2], labelled[3], labelled[5] = true, true, true
	case decades <= 2.5:
		labelled[2], labelled[5] = true, true
	}
	every := 1 + int(decades)/8 // label every power up to 8 decades
	minor := decades <= 6
	var ts []plot.Tick
	nlabels := 0
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			// Parsing the decimal form gives exactly the float a reader
			// expects (3e-3, not 3*0.001 = 0.0030000000000000005).
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
				continue
			}
			switch {
			case labelled[m] && (m != 1 || mod(e, every) == 0):
				ts = append(ts, plot.Tick{Value: v, Label: formatTick(v)})
				nlabels++
			case minor:
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	if nlabels < 2 {
		// A narrow range inside one decade: plain linear labels read better.
		return linearTicks{}.Ticks(lo, hi)
	}
	return ts
}

func mod(a, b int) int { return ((a % b) + b) % b }

// formatTick formats a tick value compactly: plain decimals between 1e-4
// and 1e6, otherwise a short exponent form ("2e-5", "1e7").
func formatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e-4 && a < 1e6 {
		// Round away float noise from tick arithmetic (0.30000000000000004).
		s := strconv.FormatFloat(v, 'g', 10, 64)
		f, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // "2e-05", "1.5e+07"
	mant, exp, _ := bytes.Cut([]byte(s), []byte("e"))
	e, _ := strconv.Atoi(string(exp))
	return string(mant) + "e" + strconv.Itoa(e)
}

// legendEntry is one item of the legend: a name after a small sample of how
// its data is drawn.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Legend geometry in points.
const (
	thumbWidth  vg.Length = 18
	thumbHeight vg.Length = 9
	thumbGap    vg.Length = 4  // between sample and name
	entryGap    vg.Length = 14 // between entries on a row
	rowHeight   vg.Length = 13
)

// drawLegend lays the entries out in centred rows from the top of c,
// wrapping when a row is full, and returns the height used.
func drawLegend(c draw.Canvas, entries []legendEntry) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	sty := textStyle(legendSize, false, inkColor, draw.XLeft, draw.YCenter)
	widths := make([]vg.Length, len(entries))
	for i, e := range entries {
		widths[i] = thumbWidth + thumbGap + sty.Width(e.name)
	}
	avail := c.Max.X - c.Min.X
	type row struct {
		from, to int
		width    vg.Length
	}
	var rows []row
	cur := row{}
	for i, w := range widths {
		if i > cur.from && cur.width+entryGap+w > avail {
			rows = append(rows, cur)
			cur = row{from: i}
		}
		if i > cur.from {
			cur.width += entryGap
		}
		cur.width += w
		cur.to = i + 1
	}
	rows = append(rows, cur)

	for r, rw := range rows {
		yc := c.Max.Y - rowHeight*(vg.Length(r)+0.5)
		x := c.Min.X + (avail-rw.width)/2
		for i := rw.from; i < rw.to; i++ {
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: yc - thumbHeight/2},
				Max: vg.Point{X: x + thumbWidth, Y: yc + thumbHeight/2},
			}}
			for _, t := range entries[i].thumbs {
				t.Thumbnail(&icon)
			}
			c.FillText(sty, vg.Point{X: x + thumbWidth + thumbGap, Y: yc}, entries[i].name)
			x += widths[i] + entryGap
		}
	}
	return rowHeight * vg.Length(len(rows))
}

// sample is a legend thumbnail: an optional filled box behind an optional
// horizontal line with an optional marker in the middle.
type sample struct {
	fill   color.Color
	line   draw.LineStyle
	marker draw.GlyphStyle
}

func (s sample) Thumbnail(c *draw.Canvas) {
	if s.fill != nil {
		c.SetColor(s.fill)
		c.Fill(c.Rectangle.Path())
	}
	if s.line.Color != nil && s.line.Width > 0 {
		y := c.Center().Y
		c.StrokeLine2(s.line, c.Min.X, y, c.Max.X, y)
	}
	if s.marker.Shape != nil {
		c.DrawGlyphNoClip(s.marker, c.Center())
	}
}

// lineStyle returns the line style of series i: its palette colour, solid
// for the first PaletteSize series and dashed beyond, so that series that
// share a colour still differ.
func lineStyle(i int, width vg.Length) draw.LineStyle {
	dashes := [][]vg.Length{nil, {5, 3}, {1.5, 2}, {6, 2, 1.5, 2}}
	return draw.LineStyle{
		Color:  Color(i),
		Width:  width,
		Dashes: dashes[(i/PaletteSize)%len(dashes)],
	}
}

// markerStyle returns the point marker of series i.
func markerStyle(i int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: Color(i), Radius: vg.Points(2.8), Shape: marker(i % int(numMarkers))}
}

// marker is a point glyph shape; filled shapes first, outlines after.
type marker int

const (
	markCircle marker = iota
	markSquare
	markTriangle
	markDiamond
	markTriangleDown
	markRing
	markOpenSquare
	markOpenDiamond
	numMarkers
)

func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var p vg.Path
	poly := func(pts ...vg.Point) {
		p.Move(pt.Add(pts[0]))
		for _, q := range pts[1:] {
			p.Line(pt.Add(q))
		}
		p.Close()
	}
	s := r * 0.85 // squares look larger than circles of the same radius
	t := r * 1.2  // triangles look smaller
	switch m {
	case markCircle, markRing:
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
	case markSquare, markOpenSquare:
		poly(vg.Point{X: -s, Y: -s}, vg.Point{X: s, Y: -s}, vg.Point{X: s, Y: s}, vg.Point{X: -s, Y: s})
	case markTriangle:
		poly(vg.Point{X: 0, Y: t}, vg.Point{X: -t * 0.866, Y: -t / 2}, vg.Point{X: t * 0.866, Y: -t / 2})
	case markTriangleDown:
		poly(vg.Point{X: 0, Y: -t}, vg.Point{X: t * 0.866, Y: t / 2}, vg.Point{X: -t * 0.866, Y: t / 2})
	case markDiamond, markOpenDiamond:
		poly(vg.Point{X: 0, Y: t}, vg.Point{X: t, Y: 0}, vg.Point{X: 0, Y: -t}, vg.Point{X: -t, Y: 0})
	}
	switch m {
	case markRing, markOpenSquare, markOpenDiamond:
		c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)})
		c.Stroke(p)
	default:
		c.SetColor(sty.Color)
		c.Fill(p)
	}
}

// frame is a chart ready to draw: title on top, legend rows under it, the
// plot below.
type frame struct {
	title  string
	plot   *plot.Plot
	legend []legendEntry
	height vg.Length // zero means chartHeight
}

// svg draws the frame and returns the SVG document.
func (f *frame) svg() ([]byte, error) {
	h := f.height
	if h == 0 {
		h = chartHeight
	}
	cv := vgsvg.New(chartWidth, h)
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	area := draw.Crop(dc, margin, -margin, margin/2, -margin)
	if f.title != "" {
		sty := textStyle(titleSize, true, inkColor, draw.XCenter, draw.YTop)
		area.FillText(sty, vg.Point{X: area.Center().X, Y: area.Max.Y}, f.title)
		area.Max.Y -= sty.Height(f.title) + 4
	}
	if lh := drawLegend(area, f.legend); lh > 0 {
		area.Max.Y -= lh + 4
	}
	f.plot.Draw(area)

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("write svg: %w", err)
	}
	return finishSVG(buf.Bytes(), f.title), nil
}

// finishSVG gives the text metric-compatible font fallbacks, adds a <title>
// element (what screen readers and hover tooltips show), and replaces what
// XML forbids (control characters, invalid UTF-8) in the caller's labels
// with U+FFFD, so the document always parses.
func finishSVG(doc []byte, title string) []byte {
	doc = bytes.ReplaceAll(doc,
		[]byte("font-family:Liberation Sans;"),
		[]byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;"))
	open := []byte(`xmlns:xlink="http://www.w3.org/1999/xlink">` + "\n")
	if i := bytes.Index(doc, open); title != "" && i >= 0 {
		i += len(open)
		var out bytes.Buffer
		out.Grow(len(doc) + len(title) + 32)
		out.Write(doc[:i])
		out.WriteString("<title>" + html.EscapeString(title) + "</title>\n")
		out.Write(doc[i:])
		doc = out.Bytes()
	}
	return bytes.Map(xmlChar, doc)
}

// xmlChar maps a rune XML 1.0 does not allow to U+FFFD.
func xmlChar(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return r
	case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
		return utf8.RuneError
	}
	return r
}
