package chart

import (
	"math"
	"slices"

	"gonum.org/v1/plot"
)

// CDF reduction: a series of at most cdfExact values is drawn as its exact
// step function; a larger one as the polyline through its quantiles at
// cdfQuantiles+1 evenly spaced probabilities (0 and 1 included, so the
// minimum and the maximum are always drawn) plus the tail probabilities in
// cdfTails that the sample can resolve.
const (
	cdfExact     = 250
	cdfQuantiles = 300
)

// cdfTails refine both ends, which a log x axis stretches: the head of a
// latency distribution and, above all, its tail (p99.9, p99.99, ...).
var cdfTails = []float64{1e-5, 1e-4, 1e-3, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999}

// CDF draws the empirical cumulative distribution of each series' values
// (Series.X; Series.Y is ignored), one line per series, with y from 0 to 1
// and x on a log scale when logX (latencies).
//
// Non-finite values are skipped, so each curve is the distribution of the
// series' finite values and reaches 1 at its largest finite value. A series
// with more than a few hundred values is reduced to about 300 quantiles
// (always including its minimum and maximum), which keeps the SVG small
// (about 5 KB per series) whatever the input size; the values are copied
// and sorted, never modified.
func CDF(title, xLabel string, series []Series, logX bool) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	curves := make([][]xy, len(series))
	xr := emptyExtent()
	for i, s := range series {
		if err := checkValues(i, s, logX); err != nil {
			return nil, chartError(title, err)
		}
		vals := sortedFinite(s.X)
		curves[i] = ecdf(vals)
		xr.add(vals[0])
		xr.add(vals[len(vals)-1])
	}

	p := newPlot(xLabel, "cumulative fraction")
	setRange(&p.X, xr, logX)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks{
		{Value: 0, Label: "0"}, {Value: 0.2, Label: "0.2"}, {Value: 0.4, Label: "0.4"},
		{Value: 0.6, Label: "0.6"}, {Value: 0.8, Label: "0.8"}, {Value: 1, Label: "1"},
	}
	p.Add(grid(true, true))
	var legend []legendEntry
	for i, pts := range curves {
		l := &polyline{runs: [][]xy{pts}, line: lineStyle(style(series, i), 1.6)}
		p.Add(l)
		if series[i].Name != "" {
			legend = append(legend, legendEntry{series[i].Name, []plot.Thumbnailer{sample{line: l.line}}})
		}
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}

// sortedFinite returns the finite values of vs in increasing order.
func sortedFinite(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if finite(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// ecdf returns the points of the empirical CDF of the sorted values:
// the exact step function for a small sample, quantiles for a large one.
func ecdf(sorted []float64) []xy {
	n := len(sorted)
	fn := float64(n)
	var pts []xy
	if n <= cdfExact {
		pts = make([]xy, 0, 2*n)
		for i, v := range sorted {
			pts = append(pts, xy{v, float64(i) / fn}, xy{v, float64(i+1) / fn})
		}
	} else {
		probs := make([]float64, 0, cdfQuantiles+1+len(cdfTails))
		for k := 0; k <= cdfQuantiles; k++ {
			probs = append(probs, float64(k)/cdfQuantiles)
		}
		for _, q := range cdfTails {
			// Only probabilities the sample resolves: q and 1-q at least
			// one value away from the ends.
			if math.Min(q, 1-q)*fn >= 1 {
				probs = append(probs, q)
			}
		}
		slices.Sort(probs)
		probs = slices.Compact(probs)
		pts = make([]xy, 0, len(probs))
		for _, q := range probs {
			// The smallest value whose CDF reaches q (the inverse ECDF).
			i := int(math.Ceil(q*fn)) - 1
			i = max(0, min(n-1, i))
			pts = append(pts, xy{sorted[i], q})
		}
	}
	return dropCollinear(pts)
}

// dropCollinear removes the middle of any three consecutive points on one
// vertical or horizontal line (ties in the data), which draw nothing new.
func dropCollinear(pts []xy) []xy {
	if len(pts) < 3 {
		return pts
	}
	out := pts[:2]
	for _, q := range pts[2:] {
		a, b := out[len(out)-2], out[len(out)-1]
		if (a.x == b.x && b.x == q.x) || (a.y == b.y && b.y == q.y) {
			out[len(out)-1] = q
			continue
		}
		out = append(out, q)
	}
	return out
}
