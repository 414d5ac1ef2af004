package catalog

import "slices"

// BytesPerFP32 is the width of the element type every byte figure assumes.
const BytesPerFP32 = 4

// Model is the architectural description of one network in the catalog.
// Every byte figure is for fp32 elements; scale by the element width for
// other precisions.
type Model struct {
	// Name is the catalog key used in configs and artifacts, e.g. "resnet50".
	Name string
	// Description names the architecture and its reference implementation.
	Description string
	// InputShape is the shape of one input sample, without the batch axis.
	InputShape []int64
	// Params is the number of trainable parameters.
	Params int64
	// FLOPsPerSample is the forward-pass work for one sample, a multiply-add
	// counting as 2 FLOPs.
	FLOPsPerSample int64
	// InputBytesPerSample is the fp32 size of one input sample.
	InputBytesPerSample int64
	// ActivationBytesPerSample is the fp32 size of all tensors a forward pass
	// produces for one sample (see the package doc for what is counted).
	ActivationBytesPerSample int64
	// WeightBytes is the fp32 size of the parameters.
	WeightBytes int64
}

// FootprintBytes is the fp32 size of everything a forward pass over batch
// samples touches: the weights once, and each sample's input and activations.
func (m Model) FootprintBytes(batch int64) int64 {
	return m.WeightBytes + batch*(m.InputBytesPerSample+m.ActivationBytesPerSample)
}

// ArithmeticIntensity is the roofline intensity of a forward pass over batch
// fp32 samples in FLOP per byte, assuming every weight, input and activation
// crosses the memory bus exactly once. Batching raises it because the weights
// are shared by the whole batch; halving the element width doubles it.
func (m Model) ArithmeticIntensity(batch int64) float64 {
	return float64(batch*m.FLOPsPerSample) / float64(m.FootprintBytes(batch))
}

// newModel turns a layer tally into the published Model figures.
func newModel(name, description string, input []int64, t tally) Model {
	in := int64(1)
	for _, d := range input {
		in *= d
	}
	return Model{
		Name:                     name,
		Description:              description,
		InputShape:               input,
		Params:                   t.params,
		FLOPsPerSample:           2 * t.macs,
		InputBytesPerSample:      BytesPerFP32 * in,
		ActivationBytesPerSample: BytesPerFP32 * t.acts,
		WeightBytes:              BytesPerFP32 * t.params,
	}
}

// models is the catalog in Names order. It is a literal list rather than
// init-time registration so the order, which artifacts and reports inherit,
// is visible in one place.
var models = []Model{
	newModel("mlp", "multilayer perceptron 10→64→64→1, ReLU, ReLU, sigmoid", []int64{10}, mlpTally()),
	newModel("resnet18", "ResNet-18 at 224×224 (torchvision resnet18)", []int64{3, 224, 224}, resnet18Tally()),
	newModel("resnet50", "ResNet-50 v1.5 at 224×224 (torchvision resnet50)", []int64{3, 224, 224}, resnet50Tally()),
	newModel("vit", "ViT-Ti/16 at 224×224 (timm vit_tiny_patch16_224, DeiT-Ti)", []int64{3, 224, 224}, vitTinyTally()),
}

// Names returns the catalog's model names in its fixed order: mlp, resnet18,
// resnet50, vit.
func Names() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return names
}

// All returns every model in Names order.
func All() []Model {
	all := make([]Model, len(models))
	for i, m := range models {
		all[i] = m
		all[i].InputShape = slices.Clone(m.InputShape)
	}
	return all
}

// Lookup returns the model called name and whether the catalog has it.
func Lookup(name string) (Model, bool) {
	for _, m := range models {
		if m.Name == name {
			m.InputShape = slices.Clone(m.InputShape)
			return m, true
		}
	}
	return Model{}, false
}
