package report

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Secs(0.000012), "12 µs"}, {Secs(0.0123), "12.3 ms"}, {Secs(1.5), "1.5 s"}, {Secs(4227.4), "4227 s"}, {Secs(math.NaN()), "–"},
		{Pct(0.1234), "12.3%"}, {Signed(0.278, PctPts), "+27.8 pp"}, {Signed(-0.05, PctPts), "-5.0 pp"}, {Signed(-0.00034, PctPts), "-0.034 pp"}, {PctPts(0), "0.0 pp"},
		{Ratio(1.18), "1.18×"}, {Ratio(32793.4), "32793×"}, {Ratio(0.0000301), "3e-05×"}, {Ratio(0), "–"},
		{Num(7530.4), "7530"}, {Num(0.0657), "0.0657"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestSecsUnit checks that a duration takes the unit of its value as
// shown: the fidelity fixture's dispatch overheads are a hair under 1 ms.
func TestSecsUnit(t *testing.T) {
	tests := []struct {
		s    float64
		want string
	}{
		{0.000999999, "1 ms"}, {-0.000999999, "-1 ms"}, {0.0009994, "999 µs"}, {0.999999, "1 s"}, {4227.4, "4227 s"}, {0, "0 s"},
	}
	for _, tt := range tests {
		if got := Secs(tt.s); got != tt.want {
			t.Errorf("Secs(%v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
