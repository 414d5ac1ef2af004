package placementnet

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// Columns of sim.FeatureNames, for the synthetic decisions.
const (
	colFromBusy = iota
	colToBusy
	colFromQueued
	colFromBacklog
	colToBacklog
	colFromWait
	colPredictFrom
	colMoveFinish
	colSlack
	colInteractive
)

// timeScale warps the features in seconds at a millisecond, as the train
// stage does, and leaves the shares and counts at 1: the export's Mul is
// then tested on more than asinh(x).
var timeScale = [sim.NumFeatures]float32{1, 1, 1, 1e3, 1e3, 1e3, 1e3, 1e3, 1e3, 1}

// decisions returns n seeded synthetic decision points shaped like the
// simulator's (times from 100 µs to seconds) and their labels: migrate,
// up to noise, when the job would finish sooner on the destination than
// after waiting for the source, by a margin that shrinks for an
// interactive job.
func decisions(n int, seed uint64) ([][sim.NumFeatures]float32, []bool) {
	r := rand.New(rand.NewPCG(seed, 3))
	logUniform := func(lo, hi float64) float64 { return math.Pow(10, lo+(hi-lo)*r.Float64()) }
	x := make([][sim.NumFeatures]float32, n)
	y := make([]bool, n)
	for i := range x {
		busy := r.Float64()
		wait := 0.0
		if busy > 0.3 {
			wait = logUniform(-4, 0)
		}
		predict := logUniform(-4, -1)
		finish := predict*(0.5+1.5*r.Float64()) + logUniform(-4, -1)
		interactive := r.IntN(2)
		x[i] = [sim.NumFeatures]float32{
			colFromBusy:    float32(busy),
			colToBusy:      float32(r.Float64()),
			colFromQueued:  float32(r.IntN(20)),
			colFromBacklog: float32(logUniform(-4, 1)),
			colToBacklog:   float32(logUniform(-4, 1)),
			colFromWait:    float32(wait),
			colPredictFrom: float32(predict),
			colMoveFinish:  float32(finish),
			colSlack:       float32(0.05 + 0.1*r.NormFloat64()),
			colInteractive: float32(interactive),
		}
		margin := math.Log((wait+predict)/finish) + 0.3*float64(interactive)
		y[i] = r.Float64() < 1/(1+math.Exp(-margin/0.2))
	}
	return x, y
}

// trained is one network trained on synthetic decisions, shared by the
// tests and benchmarks, with its ONNX export and held-out points.
var trained = sync.OnceValues(func() (*fixture, error) {
	x, y := decisions(5000, 11)
	net, _, err := placement.Train(x, y, nil, placement.Options{Seed: 7, Epochs: 10, Scale: timeScale})
	if err != nil {
		return nil, err
	}
	model, err := net.ONNX(sim.FeatureNames[:])
	if err != nil {
		return nil, err
	}
	held, _ := decisions(500, 12)
	return &fixture{net: net, model: model, held: held}, nil
})

type fixture struct {
	net   *placement.Network
	model []byte
	held  [][sim.NumFeatures]float32
}

// mustTrained returns the shared network.
func mustTrained(t testing.TB) *fixture {
	t.Helper()
	f, err := trained()
	if err != nil {
		t.Fatalf("train the fixture network: %v", err)
	}
	return f
}

// mustLoad loads the shared network into onnxruntime, or skips without
// the library; the Network is closed when the test ends.
func mustLoad(t testing.TB, opts Options) (*Network, *fixture) {
	t.Helper()
	orttest.Require(t)
	f := mustTrained(t)
	n, err := Load(f.model, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n, f
}

// mutateModel returns model with edit applied to its graph.
func mutateModel(t testing.TB, model []byte, edit func(g *onnxpb.GraphProto)) []byte {
	t.Helper()
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(model, &m); err != nil {
		t.Fatal(err)
	}
	edit(m.GetGraph())
	b, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// initializerOf returns g's initializer name.
func initializerOf(t testing.TB, g *onnxpb.GraphProto, name string) *onnxpb.TensorProto {
	t.Helper()
	for _, ti := range g.GetInitializer() {
		if ti.GetName() == name {
			return ti
		}
	}
	t.Fatalf("exported model has no initializer %q", name)
	return nil
}

// nodesOf returns g's nodes of type op, in order.
func nodesOf(t testing.TB, g *onnxpb.GraphProto, op string) []*onnxpb.NodeProto {
	t.Helper()
	var out []*onnxpb.NodeProto
	for _, n := range g.GetNode() {
		if n.GetOpType() == op {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		t.Fatalf("exported model has no %s node", op)
	}
	return out
}
