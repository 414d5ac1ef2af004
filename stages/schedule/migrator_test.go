package schedule

import (
	"math"
	"testing"
	"time"
)

// TestLatencies: the histogram's quantiles are within its 1% step of the
// exact ones, and recording allocates nothing.
func TestLatencies(t *testing.T) {
	var l latencies
	if !math.IsNaN(l.quantile(0.5)) {
		t.Error("an empty histogram has a median")
	}
	for us := 1; us <= 1000; us++ {
		l.add(time.Duration(us) * time.Microsecond)
	}
	l.add(0) // below the floor: the first bucket
	for _, tt := range []struct{ q, want float64 }{{0.5, 500e-6}, {0.99, 990e-6}, {1, 1000e-6}} {
		if got := l.quantile(tt.q); math.Abs(got/tt.want-1) > 0.011 {
			t.Errorf("quantile(%v) = %v, want %v within 1%%", tt.q, got, tt.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { l.add(3 * time.Microsecond) }); a != 0 {
		t.Errorf("add allocates %v times", a)
	}
}
