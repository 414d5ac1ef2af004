package metrics

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// shifted returns a copy of t whose completed jobs all end by more
// seconds later.
func shifted(t *Trace, policy string, by float64) *Trace {
	s := *t
	s.Policy = policy
	s.End, s.Service, s.E2E = slices.Clone(t.End), slices.Clone(t.Service), slices.Clone(t.E2E)
	for i, r := range t.Rejected {
		if !r {
			s.End[i] += by
			s.Service[i] += by
			s.E2E[i] += by
		}
	}
	return &s
}

func TestCompare(t *testing.T) {
	base := synthTrace(20_000, 1, "fifo", 1)
	bs := Bootstrap{Resamples: 500, Confidence: 0.95, Seed: 11}
	type want struct {
		value, lo, hi, ratio float64 // NaN: not checked
		significant          bool
	}
	nan := math.NaN()
	tests := []struct {
		name   string
		policy *Trace
		want   map[string]want
	}{
		{"identical", shifted(base, "same", 0), map[string]want{
			MetricMeanE2E:                 {0, 0, 0, 1, false},
			MetricP99E2E:                  {0, 0, 0, 1, false},
			MetricSLOViolation:            {0, 0, 0, 1, false},
			MetricInteractiveSLOViolation: {0, 0, 0, 1, false},
			MetricGoodput:                 {0, 0, 0, 1, false},
			MetricMakespan:                {0, 0, 0, 1, false},
		}},
		// Every completed job 1 s slower, with the same SLO outcomes: the
		// mean and P99 are 1 s worse in every resample; the goodput's
		// makespan is 1 s longer, so it is lower in every resample.
		{"one second slower", shifted(base, "slow", 1), map[string]want{
			MetricMeanE2E:                 {1, 1, 1, nan, true},
			MetricP99E2E:                  {1, 1, 1, nan, true},
			MetricSLOViolation:            {0, 0, 0, 1, false},
			MetricInteractiveSLOViolation: {0, 0, 0, 1, false},
			MetricGoodput:                 {nan, nan, nan, nan, true},
			MetricMakespan:                {1, 1, 1, nan, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := Compare(tt.policy, base, bs)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range diffs {
				names = append(names, d.Metric)
				w, ok := tt.want[d.Metric]
				if !ok {
					t.Errorf("unexpected metric %s", d.Metric)
					continue
				}
				if d.Policy != tt.policy.Policy || d.Baseline != "fifo" {
					t.Errorf("%s: policy %q baseline %q", d.Metric, d.Policy, d.Baseline)
				}
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"value", d.Value, w.value}, {"lo", d.Lo, w.lo}, {"hi", d.Hi, w.hi}, {"ratio", d.Ratio, w.ratio}} {
					if !math.IsNaN(c.want) && math.Abs(c.got-c.want) > 1e-9 {
						t.Errorf("%s: %s = %v, want %v (%+v)", d.Metric, c.name, c.got, c.want, d)
					}
				}
				if d.Significant != w.significant {
					t.Errorf("%s: significant = %v, want %v (%+v)", d.Metric, d.Significant, w.significant, d)
				}
				if d.Value != d.PolicyValue-d.BaselineValue || !(d.Lo-1e-9 <= d.Value && d.Value <= d.Hi+1e-9) {
					t.Errorf("%s: value %v is not %v - %v within [%v, %v]", d.Metric, d.Value, d.PolicyValue, d.BaselineValue, d.Lo, d.Hi)
				}
			}
			want := []string{MetricMeanE2E, MetricP99E2E, MetricSLOViolation, MetricInteractiveSLOViolation, MetricGoodput, MetricMakespan}
			if !slices.Equal(names, want) {
				t.Errorf("metrics %v, want %v", names, want)
			}
		})
	}
}

// TestCompareDetects checks the paired intervals on policies that differ
// only in their draws: a policy 10% faster is found better in latency,
// one as fast is not found different.
func TestCompareDetects(t *testing.T) {
	base := synthTrace(20_000, 1, "fifo", 1)
	bs := Bootstrap{Resamples: 500, Confidence: 0.95, Seed: 3}
	for _, tt := range []struct {
		name        string
		speed       float64
		significant bool
	}{{"faster", 1.1, true}, {"as fast", 1, false}} {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := Compare(synthTrace(20_000, 2, tt.name, tt.speed), base, bs)
			if err != nil {
				t.Fatal(err)
			}
			d := diffs[0] // mean e2e
			if d.Significant != tt.significant || tt.significant && !(d.Hi < 0 && d.Ratio > 1) {
				t.Errorf("mean e2e difference %+v, want significant %v", d, tt.significant)
			}
		})
	}
}

// TestCompareMatchesSummary checks that Compare's point values are
// Summarize's, exactly.
func TestCompareMatchesSummary(t *testing.T) {
	s, tr := handSummary(t)
	diffs, err := Compare(tr, tr, Bootstrap{Resamples: 10, Confidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{s.E2E.Mean, s.E2E.P99, s.SLOViolation, s.Classes[0].SLOViolation, s.Goodput, s.Makespan}
	for i, d := range diffs {
		if d.PolicyValue != want[i] || d.BaselineValue != want[i] {
			t.Errorf("%s: values %v and %v, Summarize's %v", d.Metric, d.PolicyValue, d.BaselineValue, want[i])
		}
	}
}

// TestCompareDeterministic checks that the intervals depend on the seed
// and not on the number of goroutines.
func TestCompareDeterministic(t *testing.T) {
	p, base := synthTrace(5000, 2, "p", 1), synthTrace(5000, 1, "b", 1)
	run := func(procs int, seed uint64) []Difference {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d, err := Compare(p, base, Bootstrap{Resamples: 300, Confidence: 0.95, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	one, four := run(1, 5), run(4, 5)
	if !slices.Equal(one, four) {
		t.Errorf("1 goroutine gave %+v, 4 gave %+v", one, four)
	}
	if other := run(2, 6); slices.Equal(one, other) {
		t.Error("seeds 5 and 6 gave the same intervals")
	}
}

func TestCompareErrors(t *testing.T) {
	base := synthTrace(100, 1, "fifo", 1)
	bs := Bootstrap{Resamples: 10, Confidence: 0.95}
	otherID := shifted(base, "p", 0)
	otherID.JobID = slices.Clone(base.JobID)
	otherID.JobID[50]--
	otherClass := shifted(base, "p", 0)
	otherClass.Class = slices.Clone(base.Class)
	otherClass.Class[7] ^= 1
	tests := []struct {
		name   string
		policy *Trace
		bs     Bootstrap
		want   string
	}{
		{"fewer jobs", synthTrace(99, 1, "p", 1), bs, "compare p with fifo: not the same jobs: 99 jobs against 100"},
		{"other id", otherID, bs, "not the same jobs: job 1099511627825 has no match"},
		{"other class", otherClass, bs, "not the same jobs: job 1099511627783 is "},
		{"bad bootstrap", base, Bootstrap{Resamples: -1, Confidence: 0.95}, "resamples is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compare(tt.policy, base, tt.bs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compare = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestCompareNoResamples checks point estimates alone: NaN intervals, and
// nothing significant but a makespan difference.
func TestCompareNoResamples(t *testing.T) {
	base := synthTrace(1000, 1, "fifo", 1)
	diffs, err := Compare(shifted(base, "p", 1), base, Bootstrap{Resamples: 0, Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		if d.Metric == MetricMakespan {
			if d.Value != 1 || !d.Significant {
				t.Errorf("makespan %+v, want value 1, significant", d)
			}
			continue
		}
		if !math.IsNaN(d.Lo) || !math.IsNaN(d.Hi) || d.Significant {
			t.Errorf("%s: %+v, want a NaN interval, not significant", d.Metric, d)
		}
	}
}

// TestCompareAllIsCompare checks that comparing several pairs on shared
// resamples gives each pair exactly what Compare gives it alone, and that
// a pair of different workloads is refused.
func TestCompareAllIsCompare(t *testing.T) {
	a, b, c := synthTrace(3000, 1, "a", 1), synthTrace(3000, 2, "b", 1.1), synthTrace(3000, 3, "c", 0.9)
	bs := Bootstrap{Resamples: 200, Confidence: 0.95, Seed: 9}
	sa, sb, sc := NewSide(a), NewSide(b), NewSide(c)
	all, err := CompareAll([]Pair{{sb, sa}, {sc, sa}, {sc, sb}}, bs)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range [][2]*Trace{{b, a}, {c, a}, {c, b}} {
		alone, err := Compare(pr[0], pr[1], bs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(all[i], alone) {
			t.Errorf("pair %d: CompareAll gave %+v, Compare %+v", i, all[i], alone)
		}
	}
	short := NewSide(synthTrace(2000, 4, "d", 1))
	if _, err := CompareAll([]Pair{{sb, sa}, {short, short}}, bs); err == nil || !strings.Contains(err.Error(), "2000 jobs, but b has 3000") {
		t.Errorf("pairs of different sizes: %v", err)
	}
}
