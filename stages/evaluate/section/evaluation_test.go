package section

import "testing"

// TestStyleIsFixedPerSpec: a policy's chart style is its place among the
// policies and an ablation's follows them, whichever charts show them;
// a spec not simulated is styled by its position in a chart.
func TestStyleIsFixedPerSpec(t *testing.T) {
	ev := &Evaluation{Policies: []string{"fifo", "edf", "learned"}, Ablations: []string{"learned~threshold"}}
	for spec, want := range map[string]int{"fifo": 1, "edf": 2, "learned": 3, "learned~threshold": 4, "greedy": 0} {
		if got := ev.Style(spec); got != want {
			t.Errorf("Style(%q) = %d, want %d", spec, got, want)
		}
	}
}
