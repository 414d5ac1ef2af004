package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// servingRows are n timed calls of the serving path at a batch size,
// log-normal around median with a long right tail, as a served call's
// times are: most near the median, a few many times slower.
func servingRows(device, source string, batch, n int, median float64, seed uint64) []profilespec.Sample {
	r := rand.New(rand.NewPCG(seed, uint64(batch)))
	out := make([]profilespec.Sample, n)
	for i := range out {
		out[i] = profilespec.Sample{Kind: profilespec.KindServing, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
			Device: device, Model: profilespec.ServingModel, Precision: profilespec.FP32, Batch: int32(batch), Threads: 1,
			Concurrency: 1, Repeat: int32(i), LatencyS: median * math.Exp(0.6*r.NormFloat64()), Source: source}
	}
	return out
}

// quantile is the q-quantile of sorted xs, interpolated between order
// statistics (R's type 7).
func quantile(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	k := int(h)
	if k+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[k] + (h-float64(k))*(xs[k+1]-xs[k])
}

func mustCluster(t *testing.T, samples []profilespec.Sample) *Cluster {
	t.Helper()
	tab, err := servicetime.NewTable(samples)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(testConfig(), catalog.Zoo(), tab)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecisionCostDrawsTheServingPath: with the profile's serving rows,
// schedule.learned.cost: profile charges each batch of decisions a draw
// from what the serving path took at its size: over many batches, keyed
// as the simulator keys them, the charges at one decision have the
// quantiles of the timed calls (their median and their tail, not a mean),
// the same seed charges the same times, and the Source says where they
// came from.
func TestDecisionCostDrawsTheServingPath(t *testing.T) {
	prof := learnedProfile()
	one := servingRows("cpu", profilespec.SourceMeasured, 1, 2000, 5e-6, 1)
	eight := servingRows("cpu", profilespec.SourceMeasured, 8, 2000, 9e-6, 2)
	prof = append(append(prof, one...), eight...)
	ch, err := mustCluster(t, prof).DecisionCost(schedulespec.CostProfile)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Source != schedulespec.CostServing {
		t.Errorf("Source = %q, want %q", ch.Source, schedulespec.CostServing)
	}
	latencies := func(rows []profilespec.Sample) []float64 {
		var xs []float64
		for _, s := range rows {
			xs = append(xs, s.LatencyS)
		}
		slices.Sort(xs)
		return xs
	}
	charges := func(seed uint64, n, batches int) []float64 {
		out := make([]float64, batches)
		for k := range out {
			out[k] = ch.Latency(n, sim.DecisionVariate(seed, uint64(k+1)))
		}
		return out
	}
	samples := latencies(one)
	drawn := charges(7, 1, 50_000)
	if !slices.Equal(drawn, charges(7, 1, 50_000)) {
		t.Error("the same seed charged other times")
	}
	if slices.Equal(drawn[:100], charges(8, 1, 100)) {
		t.Error("seeds 7 and 8 charged the same times")
	}
	slices.Sort(drawn)
	for _, q := range []float64{0.05, 0.25, 0.5, 0.75, 0.9, 0.99} {
		got, want := quantile(drawn, q), quantile(samples, q)
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("batch of 1: the charges' %g-quantile is %.3g s, the timed calls' %.3g s: want them within 3%%", q, got, want)
		}
	}
	if drawn[0] < samples[0] || drawn[len(drawn)-1] > samples[len(samples)-1] {
		t.Errorf("charges span [%.3g, %.3g] s, beyond the calls' [%.3g, %.3g] s", drawn[0], drawn[len(drawn)-1], samples[0], samples[len(samples)-1])
	}
	if got, want := ch.Quantile(1, 0.99), quantile(samples, 0.99); math.Abs(got/want-1) > 0.03 {
		t.Errorf("Quantile(1, 0.99) = %.3g s, want the calls' P99 %.3g s", got, want)
	}
	// Batches of 8 draw from the calls of 8; a batch of 4, between the
	// measured 1 and 8, from in between.
	drawn8 := charges(7, 8, 20_000)
	slices.Sort(drawn8)
	if got, want := quantile(drawn8, 0.5), quantile(latencies(eight), 0.5); math.Abs(got/want-1) > 0.03 {
		t.Errorf("batch of 8: median charge %.3g s, the calls' %.3g s", got, want)
	}
	if m1, m4, m8 := ch.Quantile(1, 0.5), ch.Quantile(4, 0.5), ch.Quantile(8, 0.5); !(m1 < m4 && m4 < m8) {
		t.Errorf("median charges at 1, 4 and 8 decisions: %.3g, %.3g, %.3g s: want them rising", m1, m4, m8)
	}
}

// TestDecisionCostSources: a profile without serving rows falls back to
// the tight-loop mlp's mean, whatever the variate, and says so; a duration
// charges exactly that; a profile with neither the serving path nor the
// mlp, or with the serving path from two origins, is an error that says
// what to do.
func TestDecisionCostSources(t *testing.T) {
	tightLoop := mustCluster(t, learnedProfile())
	tab, err := servicetime.NewTable(learnedProfile())
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := tab.Curve("cpu", "mlp", profilespec.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		c      *Cluster
		cost   string
		source string
		want   func(n int) float64 // every variate's charge
	}{
		{"profile without serving rows", tightLoop, schedulespec.CostProfile, schedulespec.CostTightLoop, mlp.Mean},
		{"a duration", tightLoop, "5ms", schedulespec.CostConfigured, func(int) float64 { return 0.005 }},
		{"no cost", tightLoop, "0s", schedulespec.CostConfigured, func(int) float64 { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := tt.c.DecisionCost(tt.cost)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Source != tt.source {
				t.Errorf("Source = %q, want %q", ch.Source, tt.source)
			}
			for _, n := range []int{1, 3, 16, 32} {
				for _, u := range []float64{0, 0.5, 0.999} {
					if got, want := ch.Latency(n, u), tt.want(n); got != want {
						t.Errorf("Latency(%d, %v) = %v, want %v", n, u, got, want)
					}
				}
			}
		})
	}

	bad := []struct {
		name    string
		samples []profilespec.Sample
		want    []string
	}{
		{"neither the serving path nor the mlp", onlyResNet(), []string{"no timing of the serving path (profile.serving)", "mlp at one thread on device cpu", "measure either, or give a duration"}},
		{"the serving path from two origins", append(append(learnedProfile(),
			servingRows("cpu", profilespec.SourceMeasured, 1, 10, 5e-6, 1)...),
			servingRows("cpu", "import:other.csv", 1, 10, 5e-6, 2)...), []string{"2 origins", "import:other.csv", "its own device name"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustCluster(t, tt.samples).DecisionCost(schedulespec.CostProfile)
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("DecisionCost(profile) = %v, want an error containing %q", err, w)
				}
			}
		})
	}
}

// onlyResNet is learnedProfile's rows renamed to the resnet18: a profile
// the schedule can run on, with no mlp to charge decisions by.
func onlyResNet() []profilespec.Sample {
	var out []profilespec.Sample
	for _, s := range learnedProfile() {
		s.Model = "resnet18"
		out = append(out, s)
	}
	return out
}
