package profile

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// configKey identifies one measured configuration.
type configKey struct {
	Kind, Backend, Provider, Device, Model, Precision string
	Batch, Threads, Concurrency                       int32
	Source                                            string
}

func keyOf(s Sample) configKey {
	return configKey{s.Kind, s.Backend, s.Provider, s.Device, s.Model, s.Precision, s.Batch, s.Threads, s.Concurrency, s.Source}
}

func compareKeys(a, b configKey) int {
	return cmp.Or(
		cmp.Compare(a.Source, b.Source), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Backend, b.Backend),
		cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Device, b.Device), cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Batch, b.Batch), cmp.Compare(a.Threads, b.Threads),
		cmp.Compare(a.Concurrency, b.Concurrency))
}

// summarize computes one Summary per configuration of samples, in a fixed
// order. Quantiles are gonum's LinInterp: linear interpolation of the
// empirical distribution function (R's type 4), so the p99 of 20 samples is
// not simply their maximum.
func summarize(samples []Sample, cat *catalog.Catalog) []Summary {
	groups := map[configKey][]float64{}
	for _, s := range samples {
		k := keyOf(s)
		groups[k] = append(groups[k], s.LatencyS)
	}
	keys := make([]configKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		lat := groups[k]
		slices.Sort(lat)
		mean, std := stat.MeanStdDev(lat, nil)
		if len(lat) < 2 {
			std = 0
		}
		s := Summary{
			Kind: k.Kind, Backend: k.Backend, Provider: k.Provider, Device: k.Device, Model: k.Model,
			Precision: k.Precision, Batch: k.Batch, Threads: k.Threads, Concurrency: k.Concurrency, Source: k.Source,
			Supported: true, Count: int64(len(lat)), MeanS: mean, StddevS: std,
			P50S: stat.Quantile(0.50, stat.LinInterp, lat, nil),
			P95S: stat.Quantile(0.95, stat.LinInterp, lat, nil),
			P99S: stat.Quantile(0.99, stat.LinInterp, lat, nil),
		}
		if s.P50S > 0 {
			s.Spread = s.P95S / s.P50S
		}
		if mean > 0 && k.Kind != KindMatMul {
			s.SamplesPerS = float64(k.Batch) * float64(k.Concurrency) / mean
		}
		s.GFLOPS = gflops(k, s.P50S, cat)
		out = append(out, s)
	}
	return out
}

// gflops is the useful arithmetic rate of a configuration at latency t.
func gflops(k configKey, t float64, cat *catalog.Catalog) float64 {
	if t <= 0 {
		return 0
	}
	var flops float64
	if k.Kind == KindMatMul {
		n := float64(k.Batch)
		flops = 2 * n * n * n
	} else if m, ok := cat.Lookup(k.Model); ok {
		flops = float64(m.FLOPsPerSample) * float64(k.Batch)
	}
	return flops * float64(k.Concurrency) / t / 1e9
}

// finite reports whether x is a usable number.
