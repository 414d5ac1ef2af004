package chart

import (
	"fmt"
	"math"
	"testing"
)

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
