package predictor

import (
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// Query is one configuration to predict the service time of: a batch of a
// catalog model at a precision and intra-op thread count on a device.
type Query struct {
	Device    string
	Model     string
	Precision string
	Batch     int
	Threads   int
}

// Feature is one column of the feature vector: its name and how it is
// computed from a Query and the catalog, written into the model file so
// that a reader knows what each tree threshold and coefficient refers to.
type Feature struct {
	Name     string `json:"name"`
	Encoding string `json:"encoding"`
}

// feature is a Feature with the code that computes it. The catalog's byte
// figures are fp32; width is the query's bytes per element.
type feature struct {
	Feature
	value func(m catalog.Model, batch, threads, width float64) float64
}

// baseFeatures are the features every model has, in their fixed order; the
// one-hot device columns follow them, one per device of the training data
// in sorted order. Everything is numeric: golearn's trees ignore
// categorical attributes without saying so.
var baseFeatures = []feature{
	{Feature{"log_flops_batch", "ln(catalog flops_per_sample × batch)"},
		func(m catalog.Model, b, _, _ float64) float64 { return math.Log(float64(m.FLOPsPerSample) * b) }},
	{Feature{"log_flops", "ln(catalog flops_per_sample)"},
		func(m catalog.Model, _, _, _ float64) float64 { return math.Log(float64(m.FLOPsPerSample)) }},
	{Feature{"log_params", "ln(catalog params)"},
		func(m catalog.Model, _, _, _ float64) float64 { return math.Log(float64(m.Params)) }},
	{Feature{"log_weight_bytes", "ln(catalog weight_bytes × bytes_per_element / 4)"},
		func(m catalog.Model, _, _, w float64) float64 {
			return math.Log(float64(m.WeightBytes) * w / catalog.BytesPerFP32)
		}},
	{Feature{"log_activation_bytes_batch", "ln(catalog activation_bytes_per_sample × batch × bytes_per_element / 4)"},
		func(m catalog.Model, b, _, w float64) float64 {
			return math.Log(float64(m.ActivationBytesPerSample) * b * w / catalog.BytesPerFP32)
		}},
	{Feature{"log_input_bytes_batch", "ln(catalog input_bytes_per_sample × batch × bytes_per_element / 4)"},
		func(m catalog.Model, b, _, w float64) float64 {
			return math.Log(float64(m.InputBytesPerSample) * b * w / catalog.BytesPerFP32)
		}},
	{Feature{"log_intensity", "ln(flops_per_sample × batch / footprint bytes at bytes_per_element)"},
		func(m catalog.Model, b, _, w float64) float64 {
			bytes := (float64(m.WeightBytes) + b*float64(m.InputBytesPerSample+m.ActivationBytesPerSample)) * w / catalog.BytesPerFP32
			return math.Log(float64(m.FLOPsPerSample) * b / bytes)
		}},
	{Feature{"batch", "batch"},
		func(_ catalog.Model, b, _, _ float64) float64 { return b }},
	{Feature{"log_batch", "ln(batch)"},
		func(_ catalog.Model, b, _, _ float64) float64 { return math.Log(b) }},
	{Feature{"threads", "threads"},
		func(_ catalog.Model, _, t, _ float64) float64 { return t }},
	{Feature{"log_threads", "ln(threads)"},
		func(_ catalog.Model, _, t, _ float64) float64 { return math.Log(t) }},
	{Feature{"bytes_per_element", "4 for fp32, 2 for fp16"},
		func(_ catalog.Model, _, _, w float64) float64 { return w }},
}

// devicePrefix starts the name of a device's one-hot column.
const devicePrefix = "device="

// deviceEncoding is the Encoding of every device column.
const deviceEncoding = "1 if the query's device is the named one, else 0"

// featureList returns the model file's feature list for the given devices.
func FeatureList(devices []string) []Feature {
	fs := make([]Feature, 0, len(baseFeatures)+len(devices))
	for _, f := range baseFeatures {
		fs = append(fs, f.Feature)
	}
	for _, d := range devices {
		fs = append(fs, Feature{devicePrefix + d, deviceEncoding})
	}
	return fs
}

// bytesPerElement is the element width of a precision, 0 for an unknown one.
func bytesPerElement(precision string) float64 {
	switch precision {
	case profilespec.FP32:
		return 4
	case profilespec.FP16:
		return 2
	}
	return 0
}

// Featurize writes q's feature vector into x, which has room for the base
// features and one column per device, from the catalog's figures of
// q.Model. It reports false, leaving x unspecified, for what no feature
// vector can stand for: a model the catalog lacks, an unknown precision, a
// batch or thread count below 1, or a device absent from devices (the
// model has never seen it, and a zero one-hot row would silently borrow
// whichever device the trees lump it with).
func Featurize(x []float64, q Query, cat *catalog.Catalog, devices []string) bool {
	m, ok := cat.Lookup(q.Model)
	w := bytesPerElement(q.Precision)
	if !ok || w == 0 || q.Batch < 1 || q.Threads < 1 {
		return false
	}
	dev, found := slices.BinarySearch(devices, q.Device)
	if !found {
		return false
	}
	b, t := float64(q.Batch), float64(q.Threads)
	for i, f := range baseFeatures {
		x[i] = f.value(m, b, t, w)
	}
	for i := range devices {
		x[len(baseFeatures)+i] = 0
	}
	x[len(baseFeatures)+dev] = 1
	return true
}
