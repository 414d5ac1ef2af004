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
		"Of the 4 runs held to it: met in 1 (fifo at 50.0%); **missed** in 3 (edf at 50.0%, fifo at 80.0% and edf at 80.0%).",
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

// TestBandText checks the prediction band: the range over the draws takes
// in the first draw, the profile's variation widens it on each side by
// how far the simulation moved, a real figure counts as inside only
// between its ends, and a percentile with too few jobs beyond it is not
// judged at all, in the run's row or in the coverage.
func TestBandText(t *testing.T) {
	sum := func(mean, p50, p99 float64) metrics.Summary {
		return metrics.Summary{E2E: metrics.Latency{Mean: mean, P50: p50, P99: p99}}
	}
	jobs := func(n int) []float64 { return make([]float64, n) }
	run := func(policy string, n int, real, sim metrics.Summary, draws ...metrics.Summary) *realRun {
		return &realRun{row: schedulespec.RealRunRow{Policy: policy, Load: 0.8}, real: real, sim: sim, draws: draws, realE2E: jobs(n)}
	}
	// fifo: the draws' mean runs 100 to 120 ms; the profile's variation
	// moves the first draw's by −10 and +30 ms, so the band is 90 to
	// 150 ms and the real 140 ms lies inside it. Its P50 (200 jobs:
	// judged) lies outside; its P99 is not judged.
	fifo := run("fifo", 200, sum(0.14, 0.13, 2.5), sum(0.10, 0.10, 2.0), sum(0.12, 0.11, 2.1))
	fifo.bandFaster, fifo.bandSlower = &metrics.Summary{E2E: metrics.Latency{Mean: 0.09, P50: 0.095, P99: 1.9}}, &metrics.Summary{E2E: metrics.Latency{Mean: 0.13, P50: 0.105, P99: 2.2}}
	fifo.row.Variation, fifo.row.VariationFrom = 0.1, "four timings of resnet18"
	f := &comparison{enough: minBeyond, runs: []*realRun{
		fifo,
		// edf: 199 jobs, one short of judging P50; no variation, so the
		// band is the draws' range, and the real mean on its upper end
		// counts as inside.
		run("edf", 199, sum(0.30, 0.3, 1.0), sum(0.20, 0.2, 1.1), sum(0.30, 0.3, 0.9)),
		// No draws and no band: not in the table.
		run("greedy", 10, sum(1, 1, 1), sum(1, 1, 1)),
	}}
	got := f.bandText()
	for _, want := range []string{
		"| fifo at 80.0% | 200 | 2 | 140 ms | 90 ms – 150 ms | yes | 130 ms | 95 ms – 115 ms | **no** | 2.5 s | 1.9 s – 2.3 s | too few jobs (needs 10000) |",
		"| edf at 80.0% | 199 | 2 | 300 ms | 200 ms – 300 ms | yes | 300 ms | 200 ms – 300 ms | too few jobs (needs 200) |",
		"every service time 10.0% shorter and longer, the profile's run-to-run variation: four timings of resnet18.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bandText lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "greedy") {
		t.Errorf("bandText has a run without draws:\n%s", got)
	}
	cov := f.coverageText()
	for _, want := range []string{
		"| mean | 3 of 3 | 3 of 3 | -28.6% | -33.3% to 0.0% |",
		"| P50 | 1 of 3 (needs 200 jobs) | 0 of 1 | -23.1% | -23.1% to -23.1% |",
		"| P99 | 0 of 3 (needs 10000 jobs) | — | — | — |",
	} {
		if !strings.Contains(cov, want) {
			t.Errorf("coverageText lacks %q:\n%s", want, cov)
		}
	}
	if (&comparison{enough: minBeyond, runs: []*realRun{run("fifo", 10, sum(1, 1, 1), sum(1, 1, 1))}}).bandText() != "" {
		t.Error("bandText of runs without draws is not empty")
	}
}

// TestOneDeviceNamesTheSkipped: the policies schedule did not run for
// real on a cluster of one device (schedulespec.NoteRealSkipped) are
// named, with why.
func TestOneDeviceNamesTheSkipped(t *testing.T) {
	cpu := schedulespec.ClusterRow{Device: "cpu", Kind: schedulespec.KindMeasured, Lanes: 2}
	run := func(policy string) *realRun { return &realRun{row: schedulespec.RealRunRow{Policy: policy, Load: 0.8}} }
	for _, tt := range []struct {
		skipped []string
		want    string
	}{
		{[]string{"learned"}, " Not run for real (schedule.real.policies): learned. With one device there is nowhere to move a job to, so each would run as its queue order alone"},
		{[]string{"learned", "edf+migrate"}, " Not run for real (schedule.real.policies): learned and edf+migrate."},
		{nil, ""},
	} {
		got := (&comparison{cluster: []schedulespec.ClusterRow{cpu}, runs: []*realRun{run("fifo"), run("edf")}, skipped: tt.skipped}).introText()
		if tt.want == "" && strings.Contains(got, "not run for real") || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("skipped %v: introText = %q; want %q", tt.skipped, got, tt.want)
		}
	}
}

// TestOneDeviceNamesTheMovers checks that a real cluster of one device
// says which real runs' migration rules it could not exercise, and only
// then.
func TestOneDeviceNamesTheMovers(t *testing.T) {
	cpu := schedulespec.ClusterRow{Device: "cpu", Kind: schedulespec.KindMeasured, Lanes: 2}
	gpu := schedulespec.ClusterRow{Device: "gpu", Kind: schedulespec.KindMeasured, Lanes: 1}
	run := func(policy string) *realRun { return &realRun{row: schedulespec.RealRunRow{Policy: policy, Load: 0.8}} }
	const moved = "never migrated or asked for a decision"
	for _, tt := range []struct {
		name    string
		cluster []schedulespec.ClusterRow
		runs    []*realRun
		want    string
	}{
		{"one device, two movers", []schedulespec.ClusterRow{cpu}, []*realRun{run("fifo"), run("learned"), run("edf+migrate")},
			"so learned and edf+migrate never migrated or asked for a decision: each ran as its queue order alone"},
		{"one device, one mover", []schedulespec.ClusterRow{cpu}, []*realRun{run("learned"), run("edf+batch")},
			"so learned never migrated or asked for a decision: it ran as its queue order alone"},
		{"one device, no mover", []schedulespec.ClusterRow{cpu}, []*realRun{run("fifo"), run("edf+batch")}, ""},
		{"two devices", []schedulespec.ClusterRow{cpu, gpu}, []*realRun{run("learned")}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := (&comparison{cluster: tt.cluster, runs: tt.runs}).introText()
			if tt.want == "" && strings.Contains(got, moved) || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("introText = %q; want %q", got, tt.want)
			}
		})
	}
}
