package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestCharts(t *testing.T) {
	for _, tc := range chartCases() {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := tc.draw()
			if err != nil {
				t.Fatalf("draw: %v", err)
			}
			checkSVG(t, doc, tc.data)
			again, err := tc.draw()
			if err != nil {
				t.Fatalf("second draw: %v", err)
			}
			if !bytes.Equal(doc, again) {
				t.Errorf("two draws differ (%d and %d bytes): output is not deterministic", len(doc), len(again))
			}
			if len(doc) > 200_000 {
				t.Errorf("SVG is %d bytes, want < 200000", len(doc))
			}
			if *outDir != "" {
				if err := os.WriteFile(filepath.Join(*outDir, tc.name+".svg"), doc, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkSVG checks that doc is one well-formed XML document with an <svg>
// root in the SVG namespace, that it links to nothing, and that it has at
// least want coloured (palette) shapes.
func checkSVG(t *testing.T, doc []byte, want int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	depth, roots, coloured := 0, 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element is {%s}%s, want {http://www.w3.org/2000/svg}svg", el.Name.Space, el.Name.Local)
				}
			}
			depth++
			switch el.Name.Local {
			case "path":
				for _, a := range el.Attr {
					if a.Name.Local == "style" && paletteStyle(a.Value) {
						coloured++
					}
				}
			case "image", "use", "a", "script", "style", "foreignObject":
				t.Errorf("SVG has a <%s> element", el.Name.Local)
			}
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		t.Errorf("SVG has %d root elements, want 1", roots)
	}
	if coloured < want {
		t.Errorf("SVG has %d coloured shapes, want at least %d", coloured, want)
	}
	rest := strings.NewReplacer(`"http://www.w3.org/2000/svg"`, "", `"http://www.w3.org/1999/xlink"`, "").Replace(string(doc))
	for _, bad := range []string{"http://", "https://", "url(", "@font-face", "@import", "data:"} {
		if strings.Contains(rest, bad) {
			t.Errorf("SVG contains %q", bad)
		}
	}
}

// paletteStyle reports whether a style attribute fills or strokes with a
// colour that is not a grey: data and legend samples, not axes or grid.
func paletteStyle(style string) bool {
	for _, decl := range strings.Split(style, ";") {
		k, v, _ := strings.Cut(decl, ":")
		if (k == "fill" || k == "stroke") && len(v) == 7 && v[0] == '#' {
			if !(v[1:3] == v[3:5] && v[3:5] == v[5:7]) {
				return true
			}
		}
	}
	return false
}

func TestGolden(t *testing.T) {
	for _, tc := range chartCases() {
		if !tc.golden {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			doc, err := tc.draw()
			if err != nil {
				t.Fatalf("draw: %v", err)
			}
			path := filepath.Join("testdata", tc.name+".svg")
			if *update {
				if err := os.WriteFile(path, doc, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(doc, want) {
				t.Errorf("%s differs from the drawn chart (%d bytes, golden %d); if the change is intended, run go test ./stages/evaluate/chart -update and look at the SVG", path, len(doc), len(want))
			}
		})
	}
}

func TestErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := []Series{{Name: "ok", X: []float64{1, 2}, Y: []float64{1, 2}}}
	tests := []struct {
		name string
		draw func() ([]byte, error)
		want error
		msg  string // a part of the message
	}{
		{"cdf no series", func() ([]byte, error) { return CDF("T", "x", nil, false) }, ErrNoSeries, `chart "T": no series`},
		{"cdf empty series", func() ([]byte, error) { return CDF("T", "x", []Series{{Name: "a"}}, false) }, ErrEmpty, `series "a" has no values`},
		{"cdf no finite", func() ([]byte, error) {
			return CDF("T", "x", []Series{{Name: "a", X: []float64{nan, inf}}}, false)
		}, ErrNoFinite, `chart "T": series "a" has no finite values`},
		{"cdf log zero", func() ([]byte, error) {
			return CDF("T", "x", []Series{{Name: "a", X: []float64{1, 0}}}, true)
		}, ErrNotPositive, `series "a": X[1] = 0`},
		{"cdf unnamed series", func() ([]byte, error) {
			return CDF("T", "x", []Series{{Name: "a", X: []float64{1}}, {X: []float64{nan}}}, false)
		}, ErrNoFinite, `series #1 has no finite values`},
		{"lines no series", func() ([]byte, error) { return Lines("T", "x", "y", nil, LineOptions{}) }, ErrNoSeries, ""},
		{"lines empty", func() ([]byte, error) { return Lines("T", "x", "y", []Series{{Name: "a"}}, LineOptions{}) }, ErrEmpty, ""},
		{"lines length", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}, LineOptions{})
		}, ErrLength, `len(Y) = 1, want len(X) = 2`},
		{"lines no finite", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1, nan}, Y: []float64{nan, 2}}}, LineOptions{})
		}, ErrNoFinite, ""},
		{"lines log y", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, -1}}}, LineOptions{LogY: true})
		}, ErrNotPositive, `Y[1] = -1`},
		{"lines log x", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{0, 2}, Y: []float64{1, 1}}}, LineOptions{LogX: true})
		}, ErrNotPositive, `X[0] = 0`},
		{"lines bad range", func() ([]byte, error) {
			return Lines("T", "x", "y", ok, LineOptions{YMin: ptr(1), YMax: ptr(1)})
		}, ErrInvalid, "is empty"},
		{"lines hline nan", func() ([]byte, error) { return Lines("T", "x", "y", ok, LineOptions{HLine: ptr(nan)}) }, ErrInvalid, "HLine"},
		{"lines log ymin", func() ([]byte, error) {
			return Lines("T", "x", "y", ok, LineOptions{LogY: true, YMin: ptr(0)})
		}, ErrInvalid, "YMin = 0"},
		{"bars no series", func() ([]byte, error) { return Bars("T", "y", []string{"a"}, nil, false) }, ErrNoSeries, ""},
		{"bars no categories", func() ([]byte, error) {
			return Bars("T", "y", nil, []BarSeries{{Name: "s", Values: []float64{1}}}, false)
		}, ErrInvalid, "no categories"},
		{"bars length", func() ([]byte, error) {
			return Bars("T", "y", []string{"a", "b"}, []BarSeries{{Name: "s", Values: []float64{1}}}, false)
		}, ErrLength, "len(Values) = 1, want len(categories) = 2"},
		{"bars empty", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s"}}, false)
		}, ErrEmpty, ""},
		{"bars only lo", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{1}, Lo: []float64{0}}}, false)
		}, ErrInvalid, "both set or both nil"},
		{"bars hi length", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{1}, Lo: []float64{0}, Hi: []float64{1, 2}}}, false)
		}, ErrLength, "len(Hi)"},
		{"bars lo above hi", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{1}, Lo: []float64{2}, Hi: []float64{1}}}, false)
		}, ErrInvalid, "Lo[0] = 2 > Hi[0] = 1"},
		{"bars no finite", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{nan}}}, false)
		}, ErrNoFinite, ""},
		{"bars log", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{0}}}, true)
		}, ErrNotPositive, "Values[0] = 0"},
		{"histogram no series", func() ([]byte, error) { return Histogram("T", "x", nil, 10, false) }, ErrNoSeries, ""},
		{"histogram bins", func() ([]byte, error) { return Histogram("T", "x", ok, 0, false) }, ErrInvalid, "bins = 0"},
		{"histogram empty", func() ([]byte, error) { return Histogram("T", "x", []Series{{Name: "a"}}, 5, false) }, ErrEmpty, ""},
		{"histogram no finite", func() ([]byte, error) {
			return Histogram("T", "x", []Series{{Name: "a", X: []float64{nan}}}, 5, false)
		}, ErrNoFinite, ""},
		{"histogram log", func() ([]byte, error) {
			return Histogram("T", "x", []Series{{Name: "a", X: []float64{1, -2}}}, 5, true)
		}, ErrNotPositive, "X[1] = -2"},
		{"gantt no rows", func() ([]byte, error) { return Gantt("T", nil, []string{"c"}, nil, 0, 1) }, ErrNoSeries, "no rows"},
		{"gantt window", func() ([]byte, error) { return Gantt("T", []string{"r"}, []string{"c"}, nil, 1, 1) }, ErrInvalid, "window"},
		{"gantt row", func() ([]byte, error) {
			return Gantt("T", []string{"r"}, []string{"c"}, []Span{{Row: 1, Start: 0, End: 1}}, 0, 1)
		}, ErrInvalid, "span 0: row 1 out of range"},
		{"gantt category", func() ([]byte, error) {
			return Gantt("T", []string{"r"}, []string{"c"}, []Span{{Row: 0, Start: 0, End: 1, Category: -1}}, 0, 1)
		}, ErrInvalid, "category -1"},
		{"gantt reversed", func() ([]byte, error) {
			return Gantt("T", []string{"r"}, []string{"c"}, []Span{{Row: 0, Start: 1, End: 0.5}}, 0, 1)
		}, ErrInvalid, "before start"},
		{"band no series", func() ([]byte, error) { return Band("T", "x", "y", nil, false, false) }, ErrNoSeries, ""},
		{"band empty", func() ([]byte, error) { return Band("T", "x", "y", []BandSeries{{Name: "a"}}, false, false) }, ErrEmpty, ""},
		{"band length", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{1}, Y: []float64{1}, Lo: []float64{1}, Hi: []float64{}}}, false, false)
		}, ErrLength, "len(Hi) = 0"},
		{"band lo above hi", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{1}, Y: []float64{1}, Lo: []float64{2}, Hi: []float64{1}}}, false, false)
		}, ErrInvalid, "Lo[0] = 2 > Hi[0] = 1"},
		{"band log lo", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{1}, Y: []float64{1}, Lo: []float64{0}, Hi: []float64{1}}}, false, true)
		}, ErrNotPositive, `series "a": Lo[0] = 0`},
		{"scatter no series", func() ([]byte, error) { return Scatter("T", "x", "y", nil, ScatterOptions{}) }, ErrNoSeries, ""},
		{"scatter empty", func() ([]byte, error) { return Scatter("T", "x", "y", []Series{{Name: "a"}}, ScatterOptions{}) }, ErrEmpty, `series "a" has no values`},
		{"scatter length", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}, ScatterOptions{})
		}, ErrLength, "len(Y) = 1, want len(X) = 2"},
		{"scatter no finite", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{1, nan}, Y: []float64{inf, 2}}}, ScatterOptions{})
		}, ErrNoFinite, `series "a" has no finite values`},
		{"scatter log x", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{1, 0}, Y: []float64{1, 1}}}, ScatterOptions{LogX: true, LogY: true})
		}, ErrNotPositive, `series "a": X[1] = 0`},
		{"scatter log y", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{-1, 1}}}, ScatterOptions{LogY: true})
		}, ErrNotPositive, `series "a": Y[0] = -1`},
		{"scatter diagonal mixed axes", func() ([]byte, error) {
			return Scatter("T", "x", "y", ok, ScatterOptions{LogX: true, Diagonal: true})
		}, ErrInvalid, "Diagonal with LogX true and LogY false"},
		{"lines vline nan", func() ([]byte, error) { return Lines("T", "x", "y", ok, LineOptions{VLine: ptr(nan)}) }, ErrInvalid, "VLine = NaN"},
		{"lines vline log", func() ([]byte, error) { return Lines("T", "x", "y", ok, LineOptions{LogX: true, VLine: ptr(0)}) }, ErrInvalid, "VLine = 0"},
		{"lines mark of no series", func() ([]byte, error) {
			return Lines("T", "x", "y", ok, LineOptions{Marks: []Mark{{Series: 1, X: 1, Y: 1}}})
		}, ErrInvalid, "Marks[0].Series = 1, want 0 to 0"},
		{"lines mark log", func() ([]byte, error) {
			return Lines("T", "x", "y", ok, LineOptions{LogY: true, Marks: []Mark{{X: 1, Y: 1}, {X: 1, Y: 0}}})
		}, ErrNotPositive, "Marks[1]: Y[0] = 0"},
		{"lines diagonal mixed axes", func() ([]byte, error) {
			return Lines("T", "x", "y", ok, LineOptions{LogY: true, Diagonal: true})
		}, ErrInvalid, "Diagonal with LogX false and LogY true"},
		{"band no finite", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{inf}, Y: []float64{1}}}, false, false)
		}, ErrNoFinite, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := tt.draw()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if doc != nil {
				t.Errorf("got %d bytes with the error, want none", len(doc))
			}
			if !strings.HasPrefix(err.Error(), `chart "T": `) {
				t.Errorf("err = %q, want it to start with the chart's title", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

// TestSkipNonFinite checks that non-finite values are left out, not fatal.
func TestSkipNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	tests := []struct {
		name string
		draw func() ([]byte, error)
	}{
		{"cdf", func() ([]byte, error) {
			return CDF("T", "x", []Series{{Name: "a", X: []float64{1, nan, 3, inf}}}, true)
		}},
		{"lines", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2, 3, 4}, Y: []float64{1, nan, 3, 4}}}, LineOptions{LogY: true})
		}},
		{"bars", func() ([]byte, error) {
			return Bars("T", "y", []string{"a", "b"}, []BarSeries{{Name: "s", Values: []float64{nan, 2}, Lo: []float64{1, inf}, Hi: []float64{2, 3}}}, true)
		}},
		{"histogram", func() ([]byte, error) {
			return Histogram("T", "x", []Series{{Name: "a", X: []float64{inf, 2, 2}}}, 3, true)
		}},
		{"gantt", func() ([]byte, error) {
			return Gantt("T", []string{"r"}, []string{"c"}, []Span{{Start: nan, End: 1}, {Start: 0.2, End: 0.4}}, 0, 1)
		}},
		{"band", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{1, 2, 3}, Lo: []float64{1, nan, 2}, Hi: []float64{2, 3, 4}}}, false, false)
		}},
		{"scatter", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{1, nan, 3, 4}, Y: []float64{1, 2, inf, 4}}}, ScatterOptions{LogX: true, LogY: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := tt.draw()
			if err != nil {
				t.Fatalf("draw: %v", err)
			}
			checkSVG(t, doc, 1)
		})
	}
}

func TestGuardRecoversPanic(t *testing.T) {
	draw := func() (out []byte, err error) {
		defer guard("T", &out, &err)
		out = []byte("partial")
		panic("boom")
	}
	out, err := draw()
	if !errors.Is(err, ErrRender) || !strings.Contains(err.Error(), `chart "T": render failed: boom`) {
		t.Errorf("err = %v, want ErrRender naming the chart and the panic", err)
	}
	if out != nil {
		t.Errorf("out = %q, want nil", out)
	}
}

func TestECDF(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		maxPts  int
		minPts  int
		exactly bool // the exact step function: every value drawn
	}{
		{"one value", 1, 2, 2, true},
		{"small", 100, 200, 150, true},
		{"at the limit", cdfExact, 2 * cdfExact, cdfExact, true},
		{"large", 10_000, cdfQuantiles + 1 + len(cdfTails), cdfQuantiles, false},
		{"million", 1_000_000, cdfQuantiles + 1 + len(cdfTails), cdfQuantiles, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := sortedFinite(lognormal(9, tt.n, 0, 1))
			pts := ecdf(vals)
			if len(pts) > tt.maxPts || len(pts) < tt.minPts {
				t.Errorf("ecdf(%d values) has %d points, want %d to %d", tt.n, len(pts), tt.minPts, tt.maxPts)
			}
			first, last := pts[0], pts[len(pts)-1]
			if first.x != vals[0] || first.y != 0 {
				t.Errorf("first point = %v, want (min %g, 0)", first, vals[0])
			}
			if last.x != vals[len(vals)-1] || last.y != 1 {
				t.Errorf("last point = %v, want (max %g, 1)", last, vals[len(vals)-1])
			}
			for i := 1; i < len(pts); i++ {
				if pts[i].x < pts[i-1].x || pts[i].y < pts[i-1].y {
					t.Fatalf("points %d and %d = %v, %v: not monotone", i-1, i, pts[i-1], pts[i])
				}
			}
			// Every point lies on the empirical CDF: F(x-) <= y <= F(x).
			for _, p := range pts {
				below, atOrBelow := 0, 0
				for _, v := range vals {
					if v < p.x {
						below++
					}
					if v <= p.x {
						atOrBelow++
					}
				}
				n := float64(len(vals))
				if p.y < float64(below)/n-1e-12 || p.y > float64(atOrBelow)/n+1e-12 {
					t.Fatalf("point %v is off the ECDF: F(x-) = %g, F(x) = %g", p, float64(below)/n, float64(atOrBelow)/n)
				}
				if tt.n > 10_000 {
					break // the quadratic check is for the small cases
				}
			}
		})
	}
}

func TestCDFMillionValuesIsSmall(t *testing.T) {
	doc, err := CDF("T", "latency (s)", []Series{{Name: "a", X: lognormal(11, 1_000_000, -3, 1)}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) > 40_000 {
		t.Errorf("CDF of 1M values is %d bytes, want < 40000", len(doc))
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string // the labels
	}{
		{0.001, 10, "0.001 0.01 0.1 1 10"},
		{0.0013, 8.7, "0.01 0.1 1"},
		{2, 80, "2 5 10 20 50"},
		{1.5, 9, "2 3 5"},
		{3.1, 4.4, "3.25 3.5 3.75 4 4.25"},            // no power inside: linear labels
		{1e-9, 1e9, "1e-9 1e-6 0.001 1 1000 1e6 1e9"}, // every third power
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%g-%g", tt.lo, tt.hi), func(t *testing.T) {
			var labels []string
			for _, tk := range (logTicks{}).Ticks(tt.lo, tt.hi) {
				if tk.Value < tt.lo || tk.Value > tt.hi {
					t.Errorf("tick %g outside [%g, %g]", tk.Value, tt.lo, tt.hi)
				}
				if tk.Label != "" {
					labels = append(labels, tk.Label)
				}
			}
			if got := strings.Join(labels, " "); got != tt.want {
				t.Errorf("labels = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatTick(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.30000000000000004, "0.3"}, {1e-4, "0.0001"}, {2e-5, "2e-5"},
		{999999, "999999"}, {1e6, "1e6"}, {1.5e7, "1.5e7"}, {-0.25, "-0.25"},
	}
	for _, tt := range tests {
		if got := formatTick(tt.v); got != tt.want {
			t.Errorf("formatTick(%g) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestColor(t *testing.T) {
	if Color(0) != Color(PaletteSize) || Color(1) != Color(-1) {
		t.Errorf("Color does not cycle through the palette")
	}
	seen := map[[4]uint8]bool{}
	for i := range PaletteSize {
		c := Color(i)
		seen[[4]uint8{c.R, c.G, c.B, c.A}] = true
	}
	if len(seen) != PaletteSize {
		t.Errorf("palette has %d distinct colours, want %d", len(seen), PaletteSize)
	}
}

func TestMergeSpans(t *testing.T) {
	in := []Span{
		{Row: 1, Start: 5, End: 6, Category: 0},
		{Row: 0, Start: 2, End: 3, Category: 1},
		{Row: 0, Start: 0, End: 1, Category: 1},
		{Row: 0, Start: 1.0005, End: 2, Category: 1}, // touches the one before
		{Row: 0, Start: 3, End: 4, Category: 0},      // another category
	}
	got := mergeSpans(in, 0.001)
	want := []Span{
		{Row: 0, Start: 0, End: 3, Category: 1},
		{Row: 0, Start: 3, End: 4, Category: 0},
		{Row: 1, Start: 5, End: 6, Category: 0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mergeSpans = %v, want %v", got, want)
	}
}

func BenchmarkCDF(b *testing.B) {
	series := make([]Series, 10)
	for i := range series {
		series[i] = Series{Name: fmt.Sprintf("policy-%d", i), X: lognormal(uint64(i), 200_000, -4+0.2*float64(i), 0.8)}
	}
	var size int
	for b.Loop() {
		doc, err := CDF("Latency", "latency (s)", series, true)
		if err != nil {
			b.Fatal(err)
		}
		size = len(doc)
	}
	b.ReportMetric(float64(size), "svg-bytes")
}

// TestDegenerate draws charts whose data spans a single value, or nothing in
// the window, which must still give a well-formed chart.
func TestDegenerate(t *testing.T) {
	tests := []struct {
		name string
		draw func() ([]byte, error)
		data int
	}{
		{"cdf one value", func() ([]byte, error) { return CDF("T", "x", []Series{{Name: "a", X: []float64{3}}}, false) }, 1},
		{"cdf one value log", func() ([]byte, error) { return CDF("T", "x", []Series{{Name: "a", X: []float64{3, 3}}}, true) }, 1},
		{"cdf zeros", func() ([]byte, error) { return CDF("T", "x", []Series{{Name: "a", X: []float64{0, 0}}}, false) }, 1},
		{"lines one point", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1}, Y: []float64{5}}}, LineOptions{LogX: true, LogY: true})
		}, 1},
		{"lines outside fixed range", func() ([]byte, error) {
			return Lines("T", "x", "y", []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{-1, 0.5, 2}}}, LineOptions{YMin: ptr(0), YMax: ptr(1)})
		}, 1},
		{"bars one value", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{0}}}, false)
		}, 0},
		{"bars power of ten log", func() ([]byte, error) {
			return Bars("T", "y", []string{"a"}, []BarSeries{{Name: "s", Values: []float64{0.01}}}, true)
		}, 1},
		{"bars negative", func() ([]byte, error) {
			return Bars("T", "y", []string{"a", "b"}, []BarSeries{{Name: "s", Values: []float64{-2, 3}}}, false)
		}, 2},
		{"histogram one value", func() ([]byte, error) {
			return Histogram("T", "x", []Series{{Name: "a", X: []float64{2, 2}}}, 5, false)
		}, 2},
		{"histogram one value log", func() ([]byte, error) { return Histogram("T", "x", []Series{{Name: "a", X: []float64{2}}}, 5, true) }, 2},
		{"gantt no spans", func() ([]byte, error) { return Gantt("T", []string{"r0", "r1"}, nil, nil, 0, 10) }, 0},
		{"gantt outside window", func() ([]byte, error) {
			return Gantt("T", []string{"r0"}, []string{"c"}, []Span{{Start: 20, End: 30}}, 0, 10)
		}, 0},
		{"band one point", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{4}, Y: []float64{1}, Lo: []float64{0.5}, Hi: []float64{2}}}, true, true)
		}, 1},
		{"labels XML forbids", func() ([]byte, error) {
			return CDF("T\x01 <b>&amp;\xff", "x\x00", []Series{{Name: "a\x1b\"'", X: []float64{1, 2}}}, false)
		}, 1},
		{"scatter one point", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{2e-3}, Y: []float64{2e-3}}}, ScatterOptions{LogX: true, LogY: true, Diagonal: true})
		}, 1},
		{"scatter one point linear", func() ([]byte, error) {
			return Scatter("T", "x", "y", []Series{{Name: "a", X: []float64{0}, Y: []float64{0}}}, ScatterOptions{Diagonal: true})
		}, 1},
		{"band no band", func() ([]byte, error) {
			return Band("T", "x", "y", []BandSeries{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}, false, false)
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := tt.draw()
			if err != nil {
				t.Fatalf("draw: %v", err)
			}
			checkSVG(t, doc, tt.data)
			if *outDir != "" {
				name := strings.ReplaceAll(tt.name, " ", "_")
				if err := os.WriteFile(filepath.Join(*outDir, "degenerate_"+name+".svg"), doc, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestConcurrent draws every chart from many goroutines at once and checks
// the output matches a sequential draw (run with -race).
func TestConcurrent(t *testing.T) {
	cases := chartCases()
	want := make([][]byte, len(cases))
	for i, tc := range cases {
		doc, err := tc.draw()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want[i] = doc
	}
	errs := make(chan error, 2*len(cases))
	for range 2 {
		for i, tc := range cases {
			go func() {
				doc, err := tc.draw()
				if err == nil && !bytes.Equal(doc, want[i]) {
					err = fmt.Errorf("%s: concurrent draw differs from sequential draw", tc.name)
				}
				errs <- err
			}()
		}
	}
	for range 2 * len(cases) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestRasterize(t *testing.T) {
	// 300 bursts of 80 ms every 100 ms over 30 s, in a 60 s window: each
	// column (125 ms) is mostly busy, so the row becomes one bar.
	var dense []Span
	for i := range 300 {
		dense = append(dense, Span{Row: 1, Start: float64(i) * 0.1, End: float64(i)*0.1 + 0.08, Category: 2})
	}
	sparse := []Span{{Row: 0, Start: 1, End: 2, Category: 0}, {Row: 0, Start: 3, End: 4, Category: 1}}
	got := rasterize(append(sparse, dense...), 3, 0, 60)
	if len(got) != 3 {
		t.Fatalf("rasterize gave %d spans, want 3: %v", len(got), got)
	}
	if fmt.Sprint(got[:2]) != fmt.Sprint(sparse) {
		t.Errorf("sparse row = %v, want it unchanged: %v", got[:2], sparse)
	}
	if b := got[2]; b.Row != 1 || b.Category != 2 || b.Start != 0 || math.Abs(b.End-30) > 60.0/ganttColumns {
		t.Errorf("dense row = %v, want one bar of category 2 from 0 to about 30", b)
	}
}
