package fidelity

import (
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestFidelitySection builds the section from the fixture, checks what
// it says and compares its Markdown with testdata/fidelity-section.md
// (-update rewrites it).
func TestFidelitySection(t *testing.T) {
	fid := readFixture(t, newFidelityFixture())
	sec, err := render(fid)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Title != "Fidelity" {
		t.Errorf("title %q", sec.Title)
	}
	for _, want := range []string{
		"The real cluster: cpu (2 lanes, measured). Left out of it, of the simulated cluster: accel (declared: no hardware here to run it on)",
		"Met in 1 of the 4 runs held to it (fifo at 50.0%); **missed** in edf at 50.0%, fifo at 80.0% and edf at 80.0%.",
		"| fifo at 50.0% | 10 | 500 ms | 525 ms | +5.0% | 1 s | 1.05 s | +5.0% | 1 s | 1.05 s | +5.0% | met (P50 +5.0%, P99 +5.0%, same order) |",
		"| edf at 80.0% | 11 | 950 ms | 950 ms | 0.0% | 1.9 s | 1.9 s | 0.0% | 1.9 s | 1.9 s | 0.0% | **missed** (P50 0.0%, P99 0.0%, order differs) |",
		"| edf at 50.0% | 10 | 0.0% | 0.0% | 90.0% | 30.0% | 30.0% | 0.0 pp |",
		"| 80.0% | edf (1.05 s), fifo (1.1 s) | fifo (880 ms), edf (1.05 s) | **no** | **no** |",
		"The simulator ranks the policies as the real runs do at 50.0%, and **differently** at 80.0%.",
		"**The main remaining source of error is contention beyond the profiled factor**",
		"| fifo at 50.0% | 500 ms | 505 ms | +1.0% | +5.0% | 1 s | 1.01 s | +1.0% | +5.0% | 0 |",
		"| edf at 50.0% | 600 ms | 600 ms | 0.0% | 0.0% | 1.2 s | 1.2 s | 0.0% | +50.0% | 2 |",
		"| fifo at 50.0% | 3 | 500 ms, 550 ms, 475 ms | 525 ms | +5.0% | 1 s, 1.1 s, 950 ms | 1.05 s | +5.0% |",
		"Real runs of the same jobs differed by up to 15.8% at P50 and 15.8% at P99 (the largest over the smallest, less one). " +
			"The simulation lies within the real runs' range at P50 in 1 of 1 runs and at P99 in 1 of 1.",
		"| fifo at 50.0% | 500 ms | 520 ms | 525 ms | 600 ms | no | 1 s | 1.04 s | 1.05 s | 1.2 s | no |",
		"Service times 5.0% off move the simulated P50 by up to 14.3% (fifo at 50.0%).",
	} {
		if !strings.Contains(sec.Markdown, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	names := golden.Charts(t, sec)
	want := []string{"fidelity-cdf-fifo-0-5.svg", "fidelity-cdf-edf-0-5.svg", "fidelity-cdf-fifo-0-8.svg", "fidelity-cdf-edf-0-8.svg", "fidelity-scatter.svg"}
	if !slices.Equal(names, want) {
		t.Errorf("charts %v, want %v", names, want)
	}
	md := (&report.Document{Title: "report", Sections: []report.Section{sec}}).Markdown()
	golden.Check(t, "fidelity-section.md", md, "the section")
}

// TestSourcesNameTheQueueing checks that the section says so when the
// sources come to less than half the gap: the rest is queueing.
func TestSourcesNameTheQueueing(t *testing.T) {
	run := func(gap float64, sensitivity bool) *realRun {
		r := &realRun{row: schedulespec.RealRunRow{Policy: "edf", Load: 0.8}}
		r.src = sources{batches: 10, jobs: 10, gap: gap, faults: -1}
		r.src.contrib[srcContention] = 0.001
		if sensitivity {
			r.faster, r.slower = &metrics.Summary{}, &metrics.Summary{}
		}
		return r
	}
	const queueing = "They come to less than half the gap: the rest is queueing"
	tests := []struct {
		name          string
		run           *realRun
		want, sensing bool
	}{
		{"sources explain the gap", run(0.0015, true), false, false},
		{"a gap the sources do not explain", run(0.05, false), true, false},
		{"and a sensitivity to point to", run(-0.05, true), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := (&comparison{runs: []*realRun{tt.run}}).sourcesText()
			if got := strings.Contains(text, queueing); got != tt.want {
				t.Errorf("names the queueing: %v, want %v:\n%s", got, tt.want, text)
			}
			if got := strings.Contains(text, "(the Sensitivity table)"); got != tt.sensing {
				t.Errorf("points to the Sensitivity table: %v, want %v", got, tt.sensing)
			}
		})
	}
}

// TestDrawsText checks the table of the simulation's own spread: the
// range over the draws takes in the first draw, and a real percentile
// counts as within it only between its ends.
func TestDrawsText(t *testing.T) {
	sum := func(p50, p99 float64) metrics.Summary {
		return metrics.Summary{E2E: metrics.Latency{P50: p50, P99: p99}}
	}
	run := func(policy string, real, sim metrics.Summary, draws ...metrics.Summary) *realRun {
		return &realRun{row: schedulespec.RealRunRow{Policy: policy, Load: 0.8}, real: real, sim: sim, draws: draws}
	}
	f := &comparison{runs: []*realRun{
		// The first draw is the range's low end; the real P50 lies
		// inside, its P99 above.
		run("fifo", sum(0.11, 2.5), sum(0.10, 2.0), sum(0.12, 2.1), sum(0.11, 2.2)),
		// The real P50 on the range's upper end counts as within.
		run("edf", sum(0.30, 1.0), sum(0.20, 1.1), sum(0.30, 0.9)),
		// No draws: not in the table.
		run("greedy", sum(1, 1), sum(1, 1)),
	}}
	got := f.drawsText()
	for _, want := range []string{
		"| fifo at 80.0% | 3 | 110 ms | 100 ms | 100 ms – 120 ms | yes | 2.5 s | 2 s | 2 s – 2.2 s | no |",
		"| edf at 80.0% | 2 | 300 ms | 200 ms | 200 ms – 300 ms | yes | 1 s | 1.1 s | 900 ms – 1.1 s | yes |",
		"in 2 of 2 runs, the real P99 in 1 of 2; the draws' highest P50 is 50.0% above their lowest in edf at 80.0%.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("drawsText lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "greedy") {
		t.Errorf("drawsText has a run without draws:\n%s", got)
	}
	if (&comparison{runs: []*realRun{run("fifo", sum(1, 1), sum(1, 1))}}).drawsText() != "" {
		t.Error("drawsText of runs without draws is not empty")
	}
}
