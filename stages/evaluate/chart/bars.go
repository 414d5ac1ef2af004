package chart

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarSeries is one bar in every group of a [Bars] chart: Values[i] is its
// height in category i. Lo and Hi, when both set, give each bar an error bar
// from Lo[i] to Hi[i] (absolute values, not offsets from Values[i]); nil
// means no error bars.
type BarSeries struct {
	Name           string
	Values, Lo, Hi []float64
}

// Bars draws grouped bars: one group per category (a policy, say) along x,
// one bar per series (P50, P95, P99) in each group, series i in [Color](i).
// With logY the bars rise from the bottom of the axis, a power of ten below
// the smallest value.
//
// A bar whose value is not finite is not drawn; an error bar with a
// non-finite end is not drawn.
func Bars(title, yLabel string, categories []string, series []BarSeries, logY bool) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	if len(categories) == 0 {
		return nil, chartError(title, fmt.Errorf("no categories: %w", ErrInvalid))
	}
	yr := emptyExtent()
	for i, s := range series {
		ref := seriesRef(i, s.Name)
		if len(s.Values) == 0 {
			return nil, chartError(title, fmt.Errorf("%s has %w", ref, ErrEmpty))
		}
		if err := checkLen(ref, "Values", len(s.Values), "categories", len(categories)); err != nil {
			return nil, chartError(title, err)
		}
		if (s.Lo == nil) != (s.Hi == nil) {
			return nil, chartError(title, fmt.Errorf("%s: Lo and Hi must be both set or both nil: %w", ref, ErrInvalid))
		}
		if s.Lo != nil {
			if err := checkLen(ref, "Lo", len(s.Lo), "categories", len(categories)); err != nil {
				return nil, chartError(title, err)
			}
			if err := checkLen(ref, "Hi", len(s.Hi), "categories", len(categories)); err != nil {
				return nil, chartError(title, err)
			}
		}
		for _, f := range []struct {
			name string
			vs   []float64
		}{{"Values", s.Values}, {"Lo", s.Lo}, {"Hi", s.Hi}} {
			if logY {
				if err := checkLog(ref, f.name, f.vs); err != nil {
					return nil, chartError(title, err)
				}
			}
			for _, v := range f.vs {
				if finite(v) {
					yr.add(v)
				}
			}
		}
		n := 0
		for k, v := range s.Values {
			if finite(v) {
				n++
			}
			if s.Lo != nil && finite(s.Lo[k]) && finite(s.Hi[k]) && s.Lo[k] > s.Hi[k] {
				return nil, chartError(title, fmt.Errorf("%s: Lo[%d] = %g > Hi[%d] = %g: %w", ref, k, s.Lo[k], k, s.Hi[k], ErrInvalid))
			}
		}
		if n == 0 {
			return nil, chartError(title, fmt.Errorf("%s has %w", ref, ErrNoFinite))
		}
	}

	p := newPlot("", yLabel)
	if logY {
		// Strictly below the smallest value, so that no bar is flat.
		yr.lo = math.Pow(10, math.Floor(math.Log10(yr.lo*0.99)))
		yr.hi *= 1.25
	} else {
		yr.add(0)
		yr.hi += (yr.hi - yr.lo) * 0.04 // headroom above the tallest bar
	}
	setRange(&p.Y, yr, logY)
	nominalX(p, categories)
	p.Add(grid(false, true))
	p.Add(&bars{series: series, log: logY})
	var legend []legendEntry
	for i, s := range series {
		if s.Name != "" {
			legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{sample{fill: Color(i)}}})
		}
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}

// nominalX makes the x axis name the categories at 0, 1, ..., rotating the
// names when they are too wide to sit side by side.
func nominalX(p *plot.Plot, categories []string) {
	ticks := make(plot.ConstantTicks, len(categories))
	widest := vg.Length(0)
	for i, c := range categories {
		ticks[i] = plot.Tick{Value: float64(i), Label: c}
		widest = max(widest, p.X.Tick.Label.Width(c))
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Length = 0
	p.X.Padding = 0
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	// The plot area is about the page less the y axis (~50 pt).
	slot := (chartWidth - 2*margin - 50) / vg.Length(len(categories))
	if widest > slot*0.9 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
}

// bars draws the grouped bars and their error bars.
type bars struct {
	series []BarSeries
	log    bool
}

// groupWidth is the part of a category's slot its bars fill.
const groupWidth = 0.8

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	m := float64(len(b.series))
	w := groupWidth / m
	base := 0.0
	if b.log {
		base = p.Y.Min
	}
	gap := vg.Points(0.75) // white gap between neighbouring bars
	for j, s := range b.series {
		for i, v := range s.Values {
			if !finite(v) {
				continue
			}
			x0 := trX(float64(i) - groupWidth/2 + w*float64(j))
			x1 := trX(float64(i) - groupWidth/2 + w*float64(j+1))
			if x1-x0 > 4*gap {
				x0, x1 = x0+gap/2, x1-gap/2
			}
			y0, y1 := trY(base), trY(v)
			r := vg.Rectangle{Min: vg.Point{X: x0, Y: min(y0, y1)}, Max: vg.Point{X: x1, Y: max(y0, y1)}}
			c.SetColor(Color(j))
			c.Fill(r.Path())
		}
	}
	eb := draw.LineStyle{Color: refColor, Width: vg.Points(1)}
	for j, s := range b.series {
		if s.Lo == nil {
			continue
		}
		for i := range s.Values {
			lo, hi := s.Lo[i], s.Hi[i]
			if !finite(lo) || !finite(hi) {
				continue
			}
			xc := trX(float64(i) - groupWidth/2 + w*(float64(j)+0.5))
			capW := min(vg.Points(3), (trX(w)-trX(0))/4)
			y0, y1 := trY(lo), trY(hi)
			c.StrokeLine2(eb, xc, y0, xc, y1)
			c.StrokeLine2(eb, xc-capW, y0, xc+capW, y0)
			c.StrokeLine2(eb, xc-capW, y1, xc+capW, y1)
		}
	}
}
