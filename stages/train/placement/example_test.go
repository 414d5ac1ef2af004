package placement_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/train/placement"
)

// The train stage's flow: hold out test points, train on the rest, score
// the network and a threshold rule on the test points, export the network.
func Example() {
	// Migrate when the load gap (feature 0) exceeds a threshold that
	// depends on the idle CPUs (feature 1); the other features are noise.
	r := rand.New(rand.NewPCG(1, 2))
	x := make([][placement.Inputs]float32, 4000)
	y := make([]bool, len(x))
	for i := range x {
		for k := range placement.Inputs {
			x[i][k] = float32(r.Float64())
		}
		x[i][1] = float32(r.IntN(9))
		y[i] = float64(x[i][0]) > 0.2+0.6*float64(x[i][1])/8
	}
	names := []string{"gap", "idle", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"}

	kept, held, err := placement.Holdout(y, 0.2, 99)
	if err != nil {
		panic(err)
	}
	pick := func(idx []int) ([][placement.Inputs]float32, []bool) {
		px, py := make([][placement.Inputs]float32, len(idx)), make([]bool, len(idx))
		for j, i := range idx {
			px[j], py[j] = x[i], y[i]
		}
		return px, py
	}
	trainX, trainY := pick(kept)
	testX, testY := pick(held)

	net, curve, err := placement.Train(trainX, trainY, nil, placement.Options{Seed: 1, Epochs: 40})
	if err != nil {
		panic(err)
	}
	rule, err := placement.NewRule(0, true, 0.5, trainX, trainY) // "gap > 0.5"
	if err != nil {
		panic(err)
	}
	nn, _ := placement.Evaluate(net.Predictions("network", testX), testY)
	gr, _ := placement.Evaluate(rule.Predictions("gap_rule", testX), testY)
	model, err := net.ONNX(names)
	if err != nil {
		panic(err)
	}
	fmt.Println("epochs run:", len(curve) > 0)
	fmt.Println("network beats the rule:", nn.Accuracy > gr.Accuracy && nn.AUC > gr.AUC)
	fmt.Println("onnx bytes:", len(model) > 0)
	// Output:
	// epochs run: true
	// network beats the rule: true
	// onnx bytes: true
}
