package chart

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
)

var (
	update = flag.Bool("update", false, "rewrite the golden SVG files in testdata/")
	outDir = flag.String("out", "", "also write every test chart's SVG to this directory, for viewing")
)

// lognormal returns n seeded log-normal values (median exp(mu)), like
// request latencies.
func lognormal(seed uint64, n int, mu, sigma float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = math.Exp(mu + sigma*r.NormFloat64())
	}
	return vs
}

func ptr(v float64) *float64 { return &v }

// loadSweep returns SLO attainment (falling with load, later for better
// policies) and P99 latency (rising) for a policy of quality q.
func loadSweep(q float64) (load, attain, p99 []float64) {
	for l := 0.1; l < 1.05; l += 0.1 {
		load = append(load, math.Round(l*10)/10)
		attain = append(attain, 1/(1+math.Exp((l-q)*14)))
		p99 = append(p99, 0.02*math.Exp(l*4/q))
	}
	return load, attain, p99
}

// chartCase is one chart the tests draw; data is how many data elements
// (lines, markers, bars, filled shapes) it must contain at least, legend
// samples included.
type chartCase struct {
	name   string
	golden bool
	draw   func() ([]byte, error)
	data   int
}

func chartCases() []chartCase {
	policies := []string{"fifo", "edf", "batch_aware", "dynamic"}
	var cases []chartCase

	small := []Series{
		{Name: "fifo", X: lognormal(1, 40, 0, 0.5)},
		{Name: "edf", X: lognormal(2, 40, -0.3, 0.4)},
		{Name: "greedy", X: lognormal(3, 25, 0.2, 0.3)},
	}
	cases = append(cases, chartCase{"cdf_small", true, func() ([]byte, error) {
		return CDF("Job latency", "latency (s)", small, false)
	}, 3 + 3})

	var big []Series
	for i, p := range policies {
		big = append(big, Series{Name: p, X: lognormal(uint64(10+i), 100_000, -4+0.3*float64(i), 0.6+0.2*float64(i))})
	}
	cases = append(cases, chartCase{"cdf_log_large", false, func() ([]byte, error) {
		return CDF("Request latency, 100k requests per policy", "latency (s)", big, true)
	}, 4 + 4})

	var attain, p99 []Series
	for i, p := range policies {
		load, a, q := loadSweep(0.5 + 0.12*float64(i))
		attain = append(attain, Series{Name: p, X: load, Y: a})
		p99 = append(p99, Series{Name: p, X: load, Y: q})
	}
	cases = append(cases, chartCase{"lines_slo", true, func() ([]byte, error) {
		return Lines("SLO attainment against offered load", "offered load (fraction of capacity)", "SLO attainment",
			attain, LineOptions{HLine: ptr(0.99), HLineLabel: "99% target", YMin: ptr(0), YMax: ptr(1)})
	}, 4*(1+10) + 4*2})
	cases = append(cases, chartCase{"lines_p99_logy", false, func() ([]byte, error) {
		return Lines("P99 latency against offered load", "offered load (fraction of capacity)", "P99 latency (s)",
			p99, LineOptions{LogY: true, HLine: ptr(0.5), HLineLabel: "interactive SLO (0.5 s)"})
	}, 4*(1+10) + 4*2})

	// Attainment against prediction error: a curve per policy over the
	// errors, and each policy's result with another predictor as a mark.
	mape := []float64{0, 0.05, 0.15, 0.25}
	var sens []Series
	var marks []Mark
	for i, p := range policies[:3] {
		s := Series{Name: p}
		for _, e := range mape {
			s.X, s.Y = append(s.X, e), append(s.Y, 0.99-float64(i+1)*0.1*e*e*4)
		}
		sens = append(sens, s)
		marks = append(marks, Mark{Series: i, X: 0.28, Y: 0.985 - float64(i)*0.02})
	}
	marks = append(marks, Mark{Series: 0, X: math.NaN(), Y: 1}) // left out
	cases = append(cases, chartCase{"lines_marks", true, func() ([]byte, error) {
		return Lines("Interactive SLO attainment against prediction error", "prediction MAPE", "interactive jobs within SLO",
			sens, LineOptions{YMax: ptr(1), Marks: marks, MarksLabel: "train's predictor"})
	}, 3*(1+4) + 3*2 + 3})

	pct := []BarSeries{
		{Name: "P50", Values: []float64{0.021, 0.018, 0.025, 0.017}},
		{Name: "P95", Values: []float64{0.12, 0.08, 0.09, 0.06},
			Lo: []float64{0.11, 0.07, 0.085, 0.055}, Hi: []float64{0.135, 0.09, 0.1, 0.065}},
		{Name: "P99", Values: []float64{0.41, 0.22, 0.19, 0.12},
			Lo: []float64{0.35, 0.2, 0.17, 0.1}, Hi: []float64{0.5, 0.25, 0.21, 0.14}},
	}
	cases = append(cases, chartCase{"bars", true, func() ([]byte, error) {
		return Bars("Latency percentiles by policy", "latency (s)", policies, pct, false)
	}, 3*4 + 3})
	cases = append(cases, chartCase{"bars_logy", false, func() ([]byte, error) {
		return Bars("Latency percentiles by policy (log scale)", "latency (s)", policies, pct, true)
	}, 3*4 + 3})
	long := []string{"fifo", "round_robin", "random", "greedy", "edf", "batch_aware", "dynamic", "edf+batch+migrate"}
	vals := make([]float64, len(long))
	for i := range vals {
		vals[i] = 0.6 + 0.04*float64(i)
	}
	cases = append(cases, chartCase{"bars_many", false, func() ([]byte, error) {
		return Bars("SLO attainment by policy", "SLO attainment", long, []BarSeries{{Name: "", Values: vals}}, false)
	}, len(long)})

	cases = append(cases, chartCase{"histogram_small", true, func() ([]byte, error) {
		return Histogram("Queueing delay", "wait (s)", []Series{
			{Name: "fifo", X: lognormal(4, 60, -2, 0.8)},
			{Name: "edf", X: lognormal(5, 60, -2.5, 0.6)},
		}, 12, true)
	}, 2*2 + 2})
	var waits []Series
	for i, p := range policies[:3] {
		waits = append(waits, Series{Name: p, X: lognormal(uint64(20+i), 50_000, -3+0.5*float64(i), 1)})
	}
	cases = append(cases, chartCase{"histogram_log", false, func() ([]byte, error) {
		return Histogram("Queueing delay per policy", "wait (s)", waits, 40, true)
	}, 3*2 + 3})
	cases = append(cases, chartCase{"histogram_one", false, func() ([]byte, error) {
		return Histogram("Batch size", "batch size (requests)", []Series{{Name: "", X: lognormal(6, 5000, 2, 0.5)}}, 30, false)
	}, 2})

	lanes := []string{"cpu/0", "cpu/1", "cpu/2", "accel/0", "accel/1", "accel/2"}
	models := []string{"mlp", "resnet18", "resnet50", "vit_ti16"}
	smallSpans := ganttSpans(7, len(lanes), len(models), 0, 60, 1.5)
	cases = append(cases, chartCase{"gantt", true, func() ([]byte, error) {
		return Gantt("Lane occupancy, 10 s to 40 s", lanes, models, smallSpans, 10, 40)
	}, 4 + 4})
	var manyLanes []string
	for i := range 24 {
		manyLanes = append(manyLanes, fmt.Sprintf("lane/%d", i))
	}
	bigSpans := ganttSpans(8, len(manyLanes), len(models), 0, 2000, 0.08)
	cases = append(cases, chartCase{"gantt_large", false, func() ([]byte, error) {
		return Gantt("Lane occupancy, 24 lanes, 100 s", manyLanes, models, bigSpans, 0, 100)
	}, 4 + 4})

	prof := profileBands()
	cases = append(cases, chartCase{"band", true, func() ([]byte, error) {
		return Band("Inference latency against batch size", "batch size", "latency (ms)", prof, true, true)
	}, 4*(1+1+7) + 4})

	pred := predictions()
	cases = append(cases, chartCase{"scatter", true, func() ([]byte, error) {
		return Scatter("Predicted against measured latency", "measured latency (s)", "predicted latency (s)", pred,
			ScatterOptions{LogX: true, LogY: true, Diagonal: true, DiagonalLabel: "predicted = measured"})
	}, 3 * (8 + 1)})
	cases = append(cases, chartCase{"scatter_linear", false, func() ([]byte, error) {
		return Scatter("Predicted against measured latency", "measured latency (s)", "predicted latency (s)", pred, ScatterOptions{})
	}, 3 * (8 + 1)})

	roc := rocCurves()
	cases = append(cases, chartCase{"lines_roc", false, func() ([]byte, error) {
		return Lines("ROC on the test points", "false positive rate", "true positive rate", roc,
			LineOptions{YMin: ptr(0), YMax: ptr(1), Diagonal: true, DiagonalLabel: "chance", NoMarkers: true})
	}, 3 * 2})
	var train, val Series
	train.Name, val.Name = "training loss", "validation loss"
	for e := 1; e <= 100; e++ {
		train.X, train.Y = append(train.X, float64(e)), append(train.Y, 0.2+0.6*math.Exp(-float64(e)/10))
		val.X, val.Y = append(val.X, float64(e)), append(val.Y, 0.25+0.5*math.Exp(-float64(e)/12)+0.002*float64(e))
	}
	cases = append(cases, chartCase{"lines_curve", false, func() ([]byte, error) {
		return Lines("Training curve", "epoch", "loss", []Series{train, val},
			LineOptions{YMin: ptr(0), VLine: ptr(38), VLineLabel: "best epoch (38)", NoMarkers: true})
	}, 2 * 2})
	return cases
}

// predictions returns seeded predicted-against-measured latencies of three
// models, eight configurations each, spanning four decades, the
// predictions within about ±30% of the measurements.
func predictions() []Series {
	r := rand.New(rand.NewPCG(12, 3))
	var out []Series
	for i, m := range []string{"mlp", "resnet18", "vit_ti16"} {
		s := Series{Name: m}
		for b := 1.0; b <= 128; b *= 2 {
			measured := []float64{5e-5, 2e-3, 4e-3}[i] * math.Pow(b, 0.8)
			s.X = append(s.X, measured)
			s.Y = append(s.Y, measured*math.Exp(0.25*r.NormFloat64()))
		}
		out = append(out, s)
	}
	return out
}

// rocCurves returns three ROC curves from (0, 0) to (1, 1): a good
// scorer, a weak one and a step (a rule with one threshold).
func rocCurves() []Series {
	var good, weak Series
	good.Name, weak.Name = "network (AUC 0.9)", "threshold rule (AUC 0.6)"
	for k := 0; k <= 100; k++ {
		f := float64(k) / 100
		good.X, good.Y = append(good.X, f), append(good.Y, math.Pow(f, 0.15))
		weak.X, weak.Y = append(weak.X, f), append(weak.Y, math.Pow(f, 0.7))
	}
	step := Series{Name: "best single feature (AUC 0.7)", X: []float64{0, 0.3, 1}, Y: []float64{0, 0.7, 1}}
	return []Series{good, weak, step}
}

// ganttSpans returns seeded busy intervals: each lane alternates work of a
// random category (mean length mean seconds) with idle gaps.
func ganttSpans(seed uint64, rows, cats int, from, to, mean float64) []Span {
	r := rand.New(rand.NewPCG(seed, 2))
	var spans []Span
	for row := range rows {
		t := from
		for t < to {
			d := r.ExpFloat64() * mean
			spans = append(spans, Span{Row: row, Start: t, End: t + d, Category: r.IntN(cats)})
			t += d + r.ExpFloat64()*mean*0.5
		}
	}
	return spans
}

// profileBands returns a latency profile: per model, mean latency (ms)
// against batch size with a p5..p95 band.
func profileBands() []BandSeries {
	names := []string{"mlp", "resnet18", "resnet50", "vit_ti16"}
	base := []float64{0.05, 2.1, 5.3, 3.2}
	var out []BandSeries
	for i, n := range names {
		s := BandSeries{Name: n}
		for b := 1.0; b <= 64; b *= 2 {
			y := base[i] * math.Pow(b, 0.85)
			s.X = append(s.X, b)
			s.Y = append(s.Y, y)
			s.Lo = append(s.Lo, y*0.9)
			s.Hi = append(s.Hi, y*(1.15+0.02*float64(i)))
		}
		out = append(out, s)
	}
	return out
}
