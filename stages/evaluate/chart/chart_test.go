package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

// TestStyleFollowsTheSeriesNotItsPosition: a series given a Style is drawn
// in that style's colour in every kind of chart, whatever its position and
// whatever other series the chart shows; one without takes its position's.
func TestStyleFollowsTheSeriesNotItsPosition(t *testing.T) {
	hex := func(i int) string {
		c := Color(i)
		return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
	}
	xs, ys := []float64{1, 2, 3}, []float64{1, 4, 9}
	draw := map[string]func([]Series) ([]byte, error){
		"CDF":       func(s []Series) ([]byte, error) { return CDF("t", "x", s, false) },
		"Histogram": func(s []Series) ([]byte, error) { return Histogram("t", "x", s, 4, false) },
		"Lines":     func(s []Series) ([]byte, error) { return Lines("t", "x", "y", s, LineOptions{}) },
		"Scatter":   func(s []Series) ([]byte, error) { return Scatter("t", "x", "y", s, ScatterOptions{}) },
	}
	for name, f := range draw {
		t.Run(name, func(t *testing.T) {
			for _, series := range [][]Series{
				{{Name: "edf", X: xs, Y: ys, Style: 4}},
				{{Name: "fifo", X: xs, Y: ys, Style: 1}, {Name: "edf", X: xs, Y: ys, Style: 4}},
			} {
				svg, err := f(series)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(svg), hex(3)) {
					t.Errorf("%d series: edf (Style 4) is not drawn in %s", len(series), hex(3))
				}
				if len(series) == 1 && strings.Contains(string(svg), hex(0)) {
					t.Errorf("edf alone (Style 4) is drawn in the first position's %s", hex(0))
				}
			}
			svg, err := f([]Series{{Name: "a", X: xs, Y: ys}, {Name: "b", X: xs, Y: ys}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(svg), hex(1)) {
				t.Errorf("the second unstyled series is not drawn in %s", hex(1))
			}
		})
	}
}
