package rundiff

import (
	"math"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// row is a policy's number as metrics.parquet holds it; lo and hi NaN
// mean a null interval.
func row(scope, policy, class, metric string, v, lo, hi float64) section.MetricRow {
	r := section.MetricRow{Scope: scope, Policy: policy, Class: class, Metric: metric, Value: v}
	if !math.IsNaN(lo) {
		r.Lo, r.Hi = &lo, &hi
	}
	return r
}

// meanLatency is a policy's mean latency row, its interval v ± h.
func meanLatency(policy string, v, h float64) section.MetricRow {
	return row(section.ScopePolicy, policy, "", "mean_e2e_s", v, v-h, v+h)
}

// numberOf is the named number of the named policy in d.
func numberOf(t *testing.T, d *Diff, policy, name string) Number {
	t.Helper()
	for _, p := range d.Policies {
		for _, n := range p.Numbers {
			if p.Name == policy && n.Name == name {
				return n
			}
		}
	}
	t.Fatalf("no %s of %s in %+v", name, policy, d.Policies)
	return Number{}
}

func TestCompareVerdicts(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		a, b   section.MetricRow
		number string
		want   string
		diff   string
	}{
		{"lower latency", meanLatency("fifo", 0.010, 0.003), meanLatency("fifo", 0.002, 0.004), "Mean end-to-end latency", Better, "-8 ms (-13 ms … -3 ms)"},
		{"higher latency", meanLatency("fifo", 0.002, 0.004), meanLatency("fifo", 0.010, 0.003), "Mean end-to-end latency", Worse, "+8 ms (+3 ms … +13 ms)"},
		{"within the interval", meanLatency("fifo", 0.010, 0.003), meanLatency("fifo", 0.012, 0.004), "Mean end-to-end latency", Same, "no difference (-3 ms … +7 ms)"},
		{"higher goodput", row(section.ScopePolicy, "fifo", "", section.MetricGoodputRate, 10, 9, 11), row(section.ScopePolicy, "fifo", "", section.MetricGoodputRate, 20, 19, 21),
			"Goodput (jobs/s within SLO)", Better, "+10 (+8.59 … +11.4)"},
		{"interactive class", row(section.ScopeClass, "fifo", "interactive", "slo_violation", 0.5, 0.4, 0.6), row(section.ScopeClass, "fifo", "interactive", "slo_violation", 0.1, 0.05, 0.15),
			"Interactive SLO violations", Better, "-40.0 pp (-51.2 pp … -28.8 pp)"},
		{"sustained load", row(section.ScopeSustained, "fifo", "", section.MetricSustainedLoad, 0.5, 0.4, 0.6), row(section.ScopeSustained, "fifo", "", section.MetricSustainedLoad, 0.3, 0.2, 0.4),
			"Sustained load", Worse, "-20.0 pp (-34.1 pp … -5.9 pp)"},
		{"no interval in A", row(section.ScopePolicy, "fifo", "", "slo_violation", 0.2, nan, nan), row(section.ScopePolicy, "fifo", "", "slo_violation", 0.1, 0.05, 0.15),
			"SLO violations", NoInterval, "-10.0 pp"},
		{"only in A", meanLatency("fifo", 0.010, 0.003), row(section.ScopePolicy, "fifo", "", "jobs", 10, nan, nan), "Mean end-to-end latency", Missing, "–"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := row(section.ScopePolicy, "fifo", "", "jobs", 10, nan, nan)
			a := Run{Version: "a", Confidence: 0.9, Rows: []section.MetricRow{jobs, tt.a}}
			b := Run{Version: "b", Confidence: 0.9, Rows: []section.MetricRow{jobs, tt.b}}
			n := numberOf(t, Compare(a, b, nil), "fifo", tt.number)
			if got := n.Verdict(); got != tt.want {
				t.Errorf("Verdict() = %q, want %q", got, tt.want)
			}
			if _, _, diff := n.Cells(); diff != tt.diff {
				t.Errorf("B − A reads %q, want %q", diff, tt.diff)
			}
		})
	}
}

func TestCompareRuns(t *testing.T) {
	a := Run{Name: "first.lock", Version: "aaaaaaaa", Confidence: 0.9, Rows: []section.MetricRow{
		meanLatency("fifo", 0.010, 0.001), meanLatency("edf", 0.010, 0.001), meanLatency("random", 0.010, 0.001)}}
	b := Run{Name: "pipeline.lock", Version: "bbbbbbbb", Confidence: 0.95, Rows: []section.MetricRow{
		meanLatency("edf", 0.001, 0.0001), meanLatency("fifo", 0.010, 0.001), meanLatency("a|b*", 0.010, 0.001)}}
	d := Compare(a, b, []Stage{{Name: "generate", A: "11111111", B: "11111111"}, {Name: "evaluate", A: a.Version, B: b.Version, Changes: []string{"config evaluate.confidence: 0.9 → 0.95"}}})

	var names []string
	for _, p := range d.Policies {
		names = append(names, p.Name)
		if len(p.Numbers) != 1 {
			t.Errorf("%s has %d numbers, want the mean latency alone (neither run has the others)", p.Name, len(p.Numbers))
		}
	}
	if strings.Join(names, " ") != "fifo edf" || strings.Join(d.OnlyA, " ") != "random" || strings.Join(d.OnlyB, " ") != "a|b*" {
		t.Errorf("policies %v, only in A %v, only in B %v; want [fifo edf], [random], [a|b*]", names, d.OnlyA, d.OnlyB)
	}
	// Intervals of other coverages are not combined.
	if v := numberOf(t, d, "edf", "Mean end-to-end latency").Verdict(); v != NoInterval {
		t.Errorf("with 90%% and 95%% intervals the verdict is %q, want %q", v, NoInterval)
	}

	var text strings.Builder
	if err := d.Text(&text); err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	for _, want := range []string{
		"A  evaluate@aaaaaaaa  first.lock\n",
		"generate  11111111  11111111  same\n",
		"evaluate  aaaaaaaa  bbbbbbbb  config evaluate.confidence: 0.9 → 0.95\n",
		"A's intervals are at 90% confidence and B's at 95%, so their differences get no interval.",
		"Only in A: random.\nOnly in B: a|b*.\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{
		"### evaluate@aaaaaaaa → evaluate@bbbbbbbb\n",
		"| evaluate | aaaaaaaa | bbbbbbbb | config evaluate.confidence: 0.9 → 0.95 |\n",
		"| edf | Mean end-to-end latency | 10 ms (9 ms … 11 ms) | 1 ms (900 µs … 1.1 ms) | -9 ms | no interval |\n",
		"\nOnly in B: a&#124;b\\*.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	for line := range strings.Lines(text.String()) {
		if strings.HasSuffix(line, " \n") {
			t.Errorf("line %q ends in a space", line)
		}
	}
}
