package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// profileVariation is how far the profile's service times move from one
// timing of a configuration to another: the width, as a fraction either
// way, that the prediction band adds to the draws' spread (evaluate's
// Fidelity section), and a sentence saying what it was measured on.
//
// A timing is a series of runs of one configuration (device, model,
// precision, batch, threads) on a session alone: the inference series,
// and each round of the contention measurement's runs of one session,
// which the profile spreads over its length (consecutive repeat numbers
// are one round). A configuration timed more than once varies by the
// largest deviation of one timing's median from the median of its
// timings' medians; the profile's variation is the median of that over
// the configurations of the devices named (the profile devices of the
// real cluster). It is 0 where no configuration was timed twice (an
// import without contention rounds), and from says so.
//
// This is the within-profile estimate the issue allows ("repeated
// timings within one"): drift over the minutes of one profile. Two
// profiles taken hours apart may differ by more.
func profileVariation(samples []profilespec.Sample, devices []string) (v float64, from string) {
	type config struct {
		device, model, precision string
		batch, threads           int32
	}
	type run struct {
		kind   string
		repeat int32
		s      float64
	}
	runs := map[config][]run{}
	for _, s := range samples {
		if s.Concurrency != 1 || !slices.Contains(devices, s.Device) ||
			(s.Kind != profilespec.KindInference && s.Kind != profilespec.KindContention) {
			continue
		}
		c := config{s.Device, s.Model, s.Precision, s.Batch, s.Threads}
		runs[c] = append(runs[c], run{s.Kind, s.Repeat, s.LatencyS})
	}
	type varied struct {
		c       config
		timings int
		dev     float64
	}
	var all []varied
	for c, rs := range runs {
		slices.SortFunc(rs, func(a, b run) int {
			return cmp.Or(strings.Compare(a.kind, b.kind), cmp.Compare(a.repeat, b.repeat))
		})
		var medians []float64
		for i := 0; i < len(rs); {
			j := i + 1
			for j < len(rs) && rs[j].kind == rs[i].kind && rs[j].repeat == rs[j-1].repeat+1 {
				j++
			}
			var ls []float64
			for _, r := range rs[i:j] {
				ls = append(ls, r.s)
			}
			medians = append(medians, medianOf(ls))
			i = j
		}
		if len(medians) < 2 {
			continue
		}
		mid := medianOf(slices.Clone(medians))
		var dev float64
		for _, m := range medians {
			dev = max(dev, math.Abs(m/mid-1))
		}
		all = append(all, varied{c, len(medians), dev})
	}
	if len(all) == 0 {
		return 0, "no configuration of the real cluster's profile devices was timed more than once (the contention rounds repeat one), so the band is the draws' spread alone"
	}
	slices.SortFunc(all, func(a, b varied) int {
		return cmp.Or(cmp.Compare(a.dev, b.dev), strings.Compare(a.c.model, b.c.model), cmp.Compare(a.c.batch, b.c.batch))
	})
	devs := make([]float64, len(all))
	var names []string
	timings := 0
	for i, a := range all {
		devs[i] = a.dev
		timings += a.timings
		names = append(names, fmt.Sprintf("%s %s batch %d on %s ±%.1f%%", a.c.model, a.c.precision, a.c.batch, a.c.device, 100*a.dev))
	}
	v = medianOf(devs)
	return v, fmt.Sprintf("the median over %d configurations of the largest deviation of one timing's median from the median of the configuration's timings "+
		"(%d timings in all, the inference series and the contention rounds of one session, spread over the profile): %s",
		len(all), timings, strings.Join(names, "; "))
}

// medianOf is the median of xs, which it sorts.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	return quantileSorted(xs, 0.5)
}
