package zoo_test

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/zoo"
)

func ExampleSignature() {
	for _, name := range zoo.Names() {
		in, out, err := zoo.Signature(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8s %s %v → %s %v\n", name, in.Name, in.Shape, out.Name, out.Shape)
	}
	// Output:
	// mlp      input [-1 10] → output [-1 1]
	// resnet18 input [-1 3 224 224] → output [-1 1000]
	// resnet50 input [-1 3 224 224] → output [-1 1000]
	// vit      input [-1 3 224 224] → output [-1 1000]
}

func ExampleBuild() {
	model, err := zoo.Build("mlp", zoo.Options{Seed: 1, Precision: zoo.FP16})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(model) > 0)
	_, err = zoo.Build("mlp", zoo.Options{Precision: "int8"})
	fmt.Println(err)
	// Output:
	// true
	// zoo: build mlp: precision "int8": unknown precision (valid: fp32, fp16)
}
