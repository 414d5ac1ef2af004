package chart

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
