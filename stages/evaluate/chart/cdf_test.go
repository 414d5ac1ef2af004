package chart

import (
	"fmt"
	"testing"
)

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
