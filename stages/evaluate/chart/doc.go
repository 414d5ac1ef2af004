// Package chart draws the evaluate stage's report charts as self-contained
// SVG documents, using gonum.org/v1/plot with its vgsvg backend.
//
// Seven kinds of chart cover what the report compares across scheduling
// policies and what it shows of the trained models:
//
//   - [CDF]: empirical cumulative distributions (latency, wait time), one line
//     per series, optionally on a log x axis. Large inputs are reduced to a few
//     hundred quantiles per series, so a chart of millions of values stays
//     well under 200 KB.
//   - [Lines]: curves with point markers (SLO attainment or P99 against
//     offered load), with optional dashed reference lines: horizontal (the
//     SLO target), vertical (a network's best epoch) or y = x (a ROC
//     curve's chance line); curves of many points can leave the markers
//     out, and single points can be marked with a cross in a series'
//     colour beside the curves (a policy's result under another
//     condition).
//   - [Bars]: grouped bars (one group per policy, one bar per percentile),
//     with optional error bars.
//   - [Histogram]: overlaid histograms over shared, optionally log-spaced,
//     bins, normalised to the fraction of each series' values.
//   - [Gantt]: busy intervals per lane over a time window, coloured by
//     category (model or job class).
//   - [Band]: lines with a shaded band (mean latency against batch size, with
//     the measured min..max or p5..p95 range).
//   - [Scatter]: unjoined markers (a predictor's predicted latency against
//     the measured one, one series per model), optionally on log axes and
//     with the line y = x over equal axis ranges.
//
// Every chart is 640×400 CSS pixels (480×300 pt; a Gantt chart grows
// taller with its number of rows), has its title on top, then a legend laid
// out in rows above the plot area so that it never covers data, then the plot
// with a light grid. A series with an empty name is drawn but left out of
// the legend. Series colours come from the Okabe-Ito palette, which
// stays distinguishable under the common forms of colour blindness, in a
// fixed order: series i always gets [Color](i), whatever the chart, so a
// policy keeps its colour across the report when callers keep its index.
// Line charts also vary the marker shape with the index, and from the ninth
// series on the dash pattern, so colour is never the only cue.
//
// # Guarantees
//
// Determinism: the same input gives the same bytes. Nothing depends on the
// clock, on randomness or on map iteration order; series, bars, spans and
// legend entries are drawn in the order given (Gantt spans are sorted by
// row, start, end and category first).
//
// Offline: the SVG references nothing outside itself. Text names the
// Liberation Sans font with metric-compatible fallbacks
// ("Liberation Sans,Arial,Helvetica,sans-serif"); no font data, image or
// stylesheet is embedded or linked, and the only URIs in the document are the
// SVG and XLink namespace names, which browsers never fetch.
//
// # Input rules
//
// Non-finite values (NaN, ±Inf) are skipped, not drawn: a CDF or histogram
// is of the finite values only; a line or band point with any non-finite
// coordinate is left out and the line breaks there; a scatter point with a
// non-finite coordinate is left out; a bar with a non-finite
// value is not drawn; a Gantt span with a non-finite start or end is dropped. A series
// left with no finite value is an error ([ErrNoFinite]), as are no series at
// all ([ErrNoSeries]), an empty series ([ErrEmpty]), mismatched slice lengths
// ([ErrLength]), a non-positive value on a log axis ([ErrNotPositive]) and
// other invalid arguments ([ErrInvalid]). A panic inside gonum/plot is
// recovered and returned as [ErrRender]. Every error names the chart by its
// title and, where one is at fault, the series and index.
package chart
