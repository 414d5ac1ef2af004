package catalog

// newModel turns a layer tally into the figures of a zoo model: input
// "input" of one sample's shape input, output "output" of out, both with
// the batch axis first, buildable in fp32 and fp16.
func newModel(name, description string, input, out []int64, t tally) Model {
	in := int64(1)
	for _, d := range input {
		in *= d
	}
	return Model{
		Name:                     name,
		Description:              description,
		Precisions:               []string{FP32, FP16},
		Input:                    "input",
		InputShape:               input,
		Output:                   "output",
		OutputShape:              out,
		Params:                   t.params,
		FLOPsPerSample:           2 * t.macs,
		InputBytesPerSample:      BytesPerFP32 * in,
		ActivationBytesPerSample: BytesPerFP32 * t.acts,
		WeightBytes:              BytesPerFP32 * t.params,
	}
}

// zoo is the built-in catalog. It is a literal list rather than init-time
// registration so the order, which artifacts and reports inherit, is
// visible in one place.
var zoo = &Catalog{models: []Model{
	newModel("mlp", "multilayer perceptron 10→64→64→1, ReLU, ReLU, sigmoid", []int64{10}, []int64{1}, mlpTally()),
	newModel("resnet18", "ResNet-18 at 224×224 (torchvision resnet18)", []int64{3, 224, 224}, []int64{1000}, resnet18Tally()),
	newModel("resnet50", "ResNet-50 v1.5 at 224×224 (torchvision resnet50)", []int64{3, 224, 224}, []int64{1000}, resnet50Tally()),
	newModel("vit", "ViT-Ti/16 at 224×224 (timm vit_tiny_patch16_224, DeiT-Ti)", []int64{3, 224, 224}, []int64{1000}, vitTinyTally()),
}}

// Zoo returns the zoo's catalog: the models mlsched builds in Go (package
// zoo), in the order mlp, resnet18, resnet50, vit. A profile's catalog
// (Read) starts with the zoo models it names; downstream stages read that
// rather than this.
func Zoo() *Catalog { return zoo }
