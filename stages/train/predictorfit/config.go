package predictorfit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// config is one measured configuration: the unit every split holds out and
// every learned candidate trains on.
type config struct {
	Query
	// samples indexes the configuration's rows in the inference samples.
	samples []int
	// median is the median of its latencies in seconds (the mean of the
	// middle two of an even count).
	median float64
}

func compareQueries(a, b Query) int {
	return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Batch, b.Batch), cmp.Compare(a.Threads, b.Threads))
}

// inferenceSamples keeps the rows the predictor learns from, kind
// inference of concurrency 1, and checks them: every row valid and every
// model in the catalog. The error names the first bad row, counting from 1
// in the caller's slice.
func inferenceSamples(samples []profilespec.Sample, cat *catalog.Catalog) ([]profilespec.Sample, error) {
	var kept []profilespec.Sample
	for i, s := range samples {
		if s.Kind != profilespec.KindInference || s.Concurrency != 1 {
			continue
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("profile samples row %d: %w", i+1, err)
		}
		if _, ok := cat.Lookup(s.Model); !ok {
			return nil, fmt.Errorf("profile samples row %d: column model: %q is not in the catalog (%v)", i+1, s.Model, cat.Names())
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("profile samples: no %q rows of concurrency 1 among %d rows: nothing to learn from",
			profilespec.KindInference, len(samples))
	}
	return kept, nil
}

// configsOf groups samples into configurations, sorted by device, model,
// precision, batch and threads.
func configsOf(samples []profilespec.Sample) []config {
	index := map[Query]int{}
	var cs []config
	for i, s := range samples {
		q := Query{Device: s.Device, Model: s.Model, Precision: s.Precision, Batch: int(s.Batch), Threads: int(s.Threads)}
		j, ok := index[q]
		if !ok {
			j = len(cs)
			index[q] = j
			cs = append(cs, config{Query: q})
		}
		cs[j].samples = append(cs[j].samples, i)
	}
	slices.SortFunc(cs, func(a, b config) int { return compareQueries(a.Query, b.Query) })
	lat := []float64{}
	for i := range cs {
		lat = lat[:0]
		for _, j := range cs[i].samples {
			lat = append(lat, samples[j].LatencyS)
		}
		cs[i].median = median(lat)
	}
	return cs
}

// median sorts x and returns its median, the mean of the middle two of an
// even count.
func median(x []float64) float64 {
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// devicesOf returns the sorted distinct devices of configurations.
func devicesOf(cs []config) []string {
	var ds []string
	for _, c := range cs {
		ds = append(ds, c.Device)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}
