package chart

import (
	"fmt"
	"strings"
	"testing"
)

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
