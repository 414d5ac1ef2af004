package chart

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
)

// maxBins bounds the bin count so that a histogram stays a small SVG.
const maxBins = 1000

// Histogram draws overlaid histograms of each series' values (Series.X;
// Series.Y is ignored) over shared bins: bins equal-width bins spanning all
// the finite values, log-spaced when logX. Each series is drawn as the
// outline of its bars over a light fill, in [Color](i), and normalised to the
// fraction of its own values per bin, so series of different sizes compare.
//
// Non-finite values are skipped. bins must be between 1 and 1000.
func Histogram(title, xLabel string, series []Series, bins int, logX bool) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	if bins < 1 || bins > maxBins {
		return nil, chartError(title, fmt.Errorf("bins = %d, want 1 to %d: %w", bins, maxBins, ErrInvalid))
	}
	xr := emptyExtent()
	for i, s := range series {
		if err := checkValues(i, s, logX); err != nil {
			return nil, chartError(title, err)
		}
		for _, v := range s.X {
			if finite(v) {
				xr.add(v)
			}
		}
	}
	edges := binEdges(xr, bins, logX)
	fracs := make([][]float64, len(series))
	yr := extent{0, 0}
	for i, s := range series {
		fracs[i] = binFractions(s.X, edges, logX)
		for _, f := range fracs[i] {
			yr.add(f)
		}
	}
	yr.hi *= 1.04 // headroom above the tallest bin

	p := newPlot(xLabel, "fraction of values")
	setRange(&p.X, extent{edges[0], edges[bins]}, logX)
	setRange(&p.Y, yr, false)
	p.Add(grid(true, true))
	// One series gets a stronger fill; overlaid ones stay light so that
	// every outline shows through.
	alpha := 0.08
	if len(series) == 1 {
		alpha = 0.35
	}
	var legend []legendEntry
	for i := range series {
		outline := histOutline(edges, fracs[i])
		p.Add(&polygon{shapes: [][]xy{outline}, fill: withAlpha(Color(style(series, i)), alpha)})
	}
	for i := range series {
		l := &polyline{runs: [][]xy{histOutline(edges, fracs[i])}, line: lineStyle(style(series, i), 1.3)}
		p.Add(l)
		if series[i].Name != "" {
			legend = append(legend, legendEntry{series[i].Name, []plot.Thumbnailer{sample{fill: withAlpha(Color(style(series, i)), alpha), line: l.line}}})
		}
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}

// binEdges returns bins+1 increasing edges spanning e, evenly spaced (in
// log space when log). A single value gets a bin around it.
func binEdges(e extent, bins int, log bool) []float64 {
	lo, hi := e.widened(log, 1.5, 0.5)
	edges := make([]float64, bins+1)
	for k := range edges {
		f := float64(k) / float64(bins)
		if log {
			edges[k] = math.Exp(math.Log(lo) + f*(math.Log(hi)-math.Log(lo)))
		} else {
			edges[k] = lo + f*(hi-lo)
		}
	}
	// Exact ends, whatever the rounding above.
	edges[0], edges[bins] = lo, hi
	return edges
}

// binFractions returns the fraction of the finite values in each bin; the
// last bin includes its upper edge.
func binFractions(vs, edges []float64, log bool) []float64 {
	bins := len(edges) - 1
	counts := make([]float64, bins)
	lo, hi := edges[0], edges[bins]
	if log {
		lo, hi = math.Log(lo), math.Log(hi)
	}
	n := 0
	for _, v := range vs {
		if !finite(v) {
			continue
		}
		n++
		x := v
		if log {
			x = math.Log(v)
		}
		k := int((x - lo) / (hi - lo) * float64(bins))
		k = max(0, min(bins-1, k))
		// Rounding may put a value next to an edge in the neighbouring bin.
		for k > 0 && v < edges[k] {
			k--
		}
		for k < bins-1 && v >= edges[k+1] {
			k++
		}
		counts[k]++
	}
	for k := range counts {
		counts[k] /= float64(n)
	}
	return counts
}

// histOutline returns the outline of the bars: up and across each bin,
// from the baseline at the first edge to the baseline at the last.
func histOutline(edges, fracs []float64) []xy {
	pts := make([]xy, 0, 2*len(fracs)+2)
	pts = append(pts, xy{edges[0], 0})
	for k, f := range fracs {
		pts = append(pts, xy{edges[k], f}, xy{edges[k+1], f})
	}
	pts = append(pts, xy{edges[len(edges)-1], 0})
	return dropCollinear(pts)
}
