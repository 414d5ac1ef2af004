package chart

import (
	"fmt"

	"gonum.org/v1/plot"
)

// ScatterOptions adjusts a [Scatter] chart. The zero value draws linear
// axes fitted to the data and no reference line.
type ScatterOptions struct {
	// LogX and LogY put the axis on a log scale; every finite value on it
	// must then be positive.
	LogX, LogY bool
	// Diagonal draws the dashed line y = x and gives both axes the same
	// range, so that a point's distance from the line reads the same
	// across the chart (predicted against measured: on the line, the
	// prediction is exact). LogX and LogY must then be equal.
	// DiagonalLabel names the line in the legend; empty leaves it out.
	Diagonal      bool
	DiagonalLabel string
}

// Scatter draws each series as unjoined markers at (X[i], Y[i]): a
// predictor's predicted latency against the measured one, one series per
// model. Series i gets [Color](i) and the i-th marker shape, so that
// colour is never the only cue; markers are drawn in the order given, a
// later series over an earlier one.
//
// A point with a non-finite coordinate is left out.
func Scatter(title, xLabel, yLabel string, series []Series, opts ScatterOptions) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	if opts.Diagonal && opts.LogX != opts.LogY {
		return nil, chartError(title, fmt.Errorf("Diagonal with LogX %v and LogY %v: the line y = x needs both axes linear or both log: %w", opts.LogX, opts.LogY, ErrInvalid))
	}
	xr, yr := emptyExtent(), emptyExtent()
	points := make([][]xy, len(series))
	for i, s := range series {
		ref := seriesRef(i, s.Name)
		if err := checkXY(ref, s.X, s.Y); err != nil {
			return nil, chartError(title, err)
		}
		if err := checkAxes(ref, s.X, s.Y, opts.LogX, opts.LogY); err != nil {
			return nil, chartError(title, err)
		}
		for k := range s.X {
			if finite(s.X[k]) && finite(s.Y[k]) {
				points[i] = append(points[i], xy{s.X[k], s.Y[k]})
				xr.add(s.X[k])
				yr.add(s.Y[k])
			}
		}
		if len(points[i]) == 0 {
			return nil, chartError(title, fmt.Errorf("%s has %w", ref, ErrNoFinite))
		}
	}
	if opts.Diagonal {
		xr.add(yr.lo)
		xr.add(yr.hi)
		yr = xr
	}

	p := newPlot(xLabel, yLabel)
	setRange(&p.X, xr, opts.LogX)
	setRange(&p.Y, yr, opts.LogY)
	p.Add(grid(true, true))
	if opts.Diagonal {
		p.Add(&diagonal{style: refLine})
	}
	var legend []legendEntry
	for i, pts := range points {
		m := &polyline{runs: [][]xy{pts}, marker: markerStyle(style(series, i))} // no line style: markers only
		p.Add(m)
		if series[i].Name != "" {
			legend = append(legend, legendEntry{series[i].Name, []plot.Thumbnailer{sample{marker: m.marker}}})
		}
	}
	if opts.Diagonal && opts.DiagonalLabel != "" {
		legend = append(legend, legendEntry{opts.DiagonalLabel, []plot.Thumbnailer{sample{line: refLine}}})
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}
