package chart

import (
	"fmt"

	"gonum.org/v1/plot"
)

// BandSeries is one line of a [Band] chart with its shaded band: the points
// (X[i], Y[i]) and, at each, the band from Lo[i] to Hi[i]. Lo and Hi are
// both nil (no band) or both as long as X.
type BandSeries struct {
	Name         string
	X, Y, Lo, Hi []float64
}

// bandAlpha is the opacity of a band's fill: light enough that overlapping
// bands and the lines over them stay readable.
const bandAlpha = 0.18

// Band draws lines with markers, each over a shaded band (a profile: mean
// latency against batch size per model, with the measured min..max or
// p5..p95 as the band). Series i gets [Color](i); bands are drawn first, all
// lines over them.
//
// Points are joined in the order given. A point with any non-finite
// coordinate (X, Y, Lo or Hi) is left out and both line and band break
// there. Lo must not exceed Hi; Y may lie outside [Lo, Hi].
func Band(title, xLabel, yLabel string, series []BandSeries, logX, logY bool) (out []byte, err error) {
	defer guard(title, &out, &err)
	if len(series) == 0 {
		return nil, chartError(title, ErrNoSeries)
	}
	xr, yr := emptyExtent(), emptyExtent()
	lines := make([][][]xy, len(series))
	bands := make([][][]xy, len(series))
	for i, s := range series {
		ref := seriesRef(i, s.Name)
		if err := checkXY(ref, s.X, s.Y); err != nil {
			return nil, chartError(title, err)
		}
		if (s.Lo == nil) != (s.Hi == nil) {
			return nil, chartError(title, fmt.Errorf("%s: Lo and Hi must be both set or both nil: %w", ref, ErrInvalid))
		}
		hasBand := s.Lo != nil
		if hasBand {
			if err := checkLen(ref, "Lo", len(s.Lo), "X", len(s.X)); err != nil {
				return nil, chartError(title, err)
			}
			if err := checkLen(ref, "Hi", len(s.Hi), "X", len(s.X)); err != nil {
				return nil, chartError(title, err)
			}
		}
		if err := checkAxes(ref, s.X, s.Y, logX, logY); err != nil {
			return nil, chartError(title, err)
		}
		if hasBand && logY {
			if err := checkLog(ref, "Lo", s.Lo); err != nil {
				return nil, chartError(title, err)
			}
			if err := checkLog(ref, "Hi", s.Hi); err != nil {
				return nil, chartError(title, err)
			}
		}
		ok := func(k int) bool {
			return finite(s.X[k]) && finite(s.Y[k]) && (!hasBand || finite(s.Lo[k]) && finite(s.Hi[k]))
		}
		for _, run := range runs(len(s.X), ok) {
			line := make([]xy, len(run))
			var band []xy
			if hasBand {
				band = make([]xy, 2*len(run))
			}
			for j, k := range run {
				line[j] = xy{s.X[k], s.Y[k]}
				xr.add(s.X[k])
				yr.add(s.Y[k])
				if hasBand {
					if s.Lo[k] > s.Hi[k] {
						return nil, chartError(title, fmt.Errorf("%s: Lo[%d] = %g > Hi[%d] = %g: %w", ref, k, s.Lo[k], k, s.Hi[k], ErrInvalid))
					}
					// Along the top edge, then back along the bottom one.
					band[j] = xy{s.X[k], s.Hi[k]}
					band[len(band)-1-j] = xy{s.X[k], s.Lo[k]}
					yr.add(s.Lo[k])
					yr.add(s.Hi[k])
				}
			}
			lines[i] = append(lines[i], line)
			if hasBand && len(run) > 1 {
				bands[i] = append(bands[i], band)
			}
		}
		if len(lines[i]) == 0 {
			return nil, chartError(title, fmt.Errorf("%s has %w", ref, ErrNoFinite))
		}
	}

	p := newPlot(xLabel, yLabel)
	setRange(&p.X, xr, logX)
	setRange(&p.Y, yr, logY)
	p.Add(grid(true, true))
	for i := range series {
		p.Add(&polygon{shapes: bands[i], fill: withAlpha(Color(i), bandAlpha)})
	}
	var legend []legendEntry
	for i, s := range series {
		l := &polyline{runs: lines[i], line: lineStyle(i, 1.5), marker: markerStyle(i)}
		p.Add(l)
		if s.Name != "" {
			smp := sample{line: l.line, marker: l.marker}
			if s.Lo != nil {
				smp.fill = withAlpha(Color(i), bandAlpha)
			}
			legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{smp}})
		}
	}
	doc, err := (&frame{title: title, plot: p, legend: legend}).svg()
	if err != nil {
		return nil, chartError(title, err)
	}
	return doc, nil
}
