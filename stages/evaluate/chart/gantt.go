package chart

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Span is one busy interval of a [Gantt] chart: lane rows[Row] was busy from
// Start to End (seconds) with work of category categories[Category].
type Span struct {
	Row        int
	Start, End float64
	Category   int
}

// Gantt geometry: rows up to ganttRows fit the standard page; each further
// row adds ganttPitch points of height.
const (
	ganttRows             = 14
	ganttPitch  vg.Length = 13
	ganttFill             = 0.72 // part of a row's height a bar fills
	ganttMinBar vg.Length = 0.6  // narrowest bar drawn, so short work shows

	// ganttColumns is the time resolution of a row with many spans: about
	// one column per point of the plot area (4/3 of a CSS pixel).
	ganttColumns = 480
	// ganttDense is the span count above which a row is drawn by columns.
	ganttDense = ganttColumns / 4
)

// Gantt draws the busy intervals of lanes over the window [from, to]: one row
// per lane label (rows[0] at the top), one bar per span coloured by its
// category ([Color](Category)), and a legend of the categories that occur in
// the window. The x axis is time in seconds, the simulator's unit.
//
// Spans are clipped to the window; spans outside it, empty ones and ones
// with a non-finite start or end are dropped. Spans of one row and category that
// touch (gaps under half a point on the page) are merged; a row with more than
// 120 spans is drawn at the page's resolution instead, in 480 columns each
// showing the category that covers most of it (see rasterize); and every
// category's bars form one SVG path. So the SVG stays bounded, at most 480
// bars per row, however busy the window. A
// span with a row or category out of range, or that ends before it starts,
// is an error. The chart grows taller beyond 14 rows.
func Gantt(title string, rows []string, categories []string, spans []Span, from, to float64) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(rows) == 0 {
		return nil, chartError(title, fmt.Errorf("no rows: %w", ErrNoSeries))
	}
	if !finite(from) || !finite(to) || from >= to {
		return nil, chartError(title, fmt.Errorf("window [%g, %g] is empty: %w", from, to, ErrInvalid))
	}
	kept := make([]Span, 0, len(spans))
	for i, s := range spans {
		if s.Row < 0 || s.Row >= len(rows) {
			return nil, chartError(title, fmt.Errorf("span %d: row %d out of range [0, %d): %w", i, s.Row, len(rows), ErrInvalid))
		}
		if s.Category < 0 || s.Category >= len(categories) {
			return nil, chartError(title, fmt.Errorf("span %d: category %d out of range [0, %d): %w", i, s.Category, len(categories), ErrInvalid))
		}
		if !finite(s.Start) || !finite(s.End) {
			continue
		}
		if s.End < s.Start {
			return nil, chartError(title, fmt.Errorf("span %d: end %g before start %g: %w", i, s.End, s.Start, ErrInvalid))
		}
		s.Start, s.End = max(s.Start, from), min(s.End, to)
		if s.End > s.Start {
			kept = append(kept, s)
		}
	}
	kept = mergeSpans(kept, (to-from)/ganttColumns/2)
	kept = rasterize(kept, len(categories), from, to)

	p := newPlot("time (s)", "")
	setRange(&p.X, extent{from, to}, false)
	p.X.Padding = 0
	n := len(rows)
	ticks := make(plot.ConstantTicks, n)
	for i, r := range rows {
		ticks[i] = plot.Tick{Value: float64(n - 1 - i), Label: r}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Tick.Length = 0
	p.Y.Padding = 0
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5

	p.Add(&stripes{rows: n})
	p.Add(grid(true, false))
	p.Add(&ganttBars{rows: n, categories: len(categories), spans: kept})
	used := make([]bool, len(categories))
	for _, s := range kept {
		used[s.Category] = true
	}
	var legend []legendEntry
	for c, name := range categories {
		if used[c] && name != "" {
			legend = append(legend, legendEntry{name, []plot.Thumbnailer{sample{fill: Color(c)}}})
		}
	}
	f := &frame{title: title, plot: p, legend: legend}
	if n > ganttRows {
		f.height = chartHeight + ganttPitch*vg.Length(n-ganttRows)
	}
	doc, err := f.svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}

// mergeSpans sorts the spans by row, start, end and category, and merges
// neighbours of one row and category separated by at most gap.
func mergeSpans(spans []Span, gap float64) []Span {
	slices.SortFunc(spans, func(a, b Span) int {
		return cmp.Or(
			cmp.Compare(a.Row, b.Row),
			cmp.Compare(a.Start, b.Start),
			cmp.Compare(a.End, b.End),
			cmp.Compare(a.Category, b.Category))
	})
	out := spans[:0]
	for _, s := range spans {
		if k := len(out) - 1; k >= 0 && out[k].Row == s.Row && out[k].Category == s.Category && s.Start-out[k].End <= gap {
			out[k].End = max(out[k].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}

// stripes shades every other row so that long rows are easy to follow.
type stripes struct{ rows int }

func (s *stripes) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	c.SetColor(stripColor)
	for y := 1; y < s.rows; y += 2 {
		r := vg.Rectangle{
			Min: vg.Point{X: c.Min.X, Y: trY(float64(y) - 0.5)},
			Max: vg.Point{X: c.Max.X, Y: trY(float64(y) + 0.5)},
		}
		c.Fill(r.Path())
	}
}

// ganttBars draws the spans: each category's bars are one path of
// horizontal strokes as thick as a bar, about half the bytes of rectangles.
type ganttBars struct {
	rows, categories int
	spans            []Span
}

func (g *ganttBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	paths := make([]vg.Path, g.categories)
	for _, s := range g.spans {
		y := float64(g.rows - 1 - s.Row)
		x0, x1 := trX(s.Start), trX(s.End)
		if x1-x0 < ganttMinBar {
			x1 = min(x0+ganttMinBar, c.Max.X)
			x0 = x1 - ganttMinBar
		}
		paths[s.Category].Move(vg.Point{X: x0, Y: trY(y)})
		paths[s.Category].Line(vg.Point{X: x1, Y: trY(y)})
	}
	thick := trY(ganttFill) - trY(0)
	for k, path := range paths {
		if len(path) > 0 {
			c.SetLineStyle(draw.LineStyle{Color: Color(k), Width: thick})
			c.Stroke(path)
		}
	}
}

// rasterize redraws every row with more than ganttDense spans at the
// resolution of the page: the window is cut into ganttColumns columns, a
// column is busy when spans cover at least half of it and then shows the
// category that covers most of it (the lowest index on a tie), and runs of
// columns alike become one span. A row of sparse spans is kept exact. This
// bounds the drawing to ganttColumns bars per row, whatever the input, at
// little visible cost: what it merges is about a pixel wide. The spans
// must be sorted by row (mergeSpans does).
func rasterize(spans []Span, categories int, from, to float64) []Span {
	out := spans[:0:0]
	w := (to - from) / ganttColumns
	var cover []float64 // column*categories + category → time covered
	for lo := 0; lo < len(spans); {
		hi := lo
		for hi < len(spans) && spans[hi].Row == spans[lo].Row {
			hi++
		}
		row := spans[lo:hi]
		lo = hi
		if len(row) <= ganttDense {
			out = append(out, row...)
			continue
		}
		if cover == nil {
			cover = make([]float64, ganttColumns*categories)
		}
		clear(cover)
		for _, s := range row {
			k0 := max(0, int((s.Start-from)/w))
			k1 := min(ganttColumns-1, int((s.End-from)/w))
			for k := k0; k <= k1; k++ {
				c0, c1 := from+float64(k)*w, from+float64(k+1)*w
				if d := min(s.End, c1) - max(s.Start, c0); d > 0 {
					cover[k*categories+s.Category] += d
				}
			}
		}
		runStart, runCat := 0, -1
		flush := func(end int) {
			if runCat >= 0 {
				out = append(out, Span{Row: row[0].Row, Start: from + float64(runStart)*w, End: from + float64(end)*w, Category: runCat})
			}
		}
		for k := range ganttColumns {
			best, total := -1, 0.0
			for c := range categories {
				v := cover[k*categories+c]
				total += v
				if v > 0 && (best < 0 || v > cover[k*categories+best]) {
					best = c
				}
			}
			if total < w/2 {
				best = -1
			}
			if best != runCat {
				flush(k)
				runStart, runCat = k, best
			}
		}
		flush(ganttColumns)
	}
	return out
}
