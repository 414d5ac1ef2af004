package placementnet

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// TestEvalMatchesPredict serves the held-out points in batches of 1, 7
// and 32, interleaved so that every binding runs after the others, and
// compares each probability with the Go forward pass.
func TestEvalMatchesPredict(t *testing.T) {
	n, f := mustLoad(t, Options{})
	want := f.net.Predict(f.held)
	got := make([]float32, len(f.held))
	sizes := []int{1, 7, 32}
	calls := map[int]int{}
	for i, c := 0, 0; i < len(f.held); c++ {
		b := min(sizes[c%len(sizes)], len(f.held)-i)
		if err := n.Eval(f.held[i:i+b], got[i:i+b]); err != nil {
			t.Fatal(err)
		}
		calls[b]++
		i += b
	}
	for _, b := range sizes {
		if calls[b] < 10 {
			t.Fatalf("batch size %d ran %d times; want the sizes interleaved over many calls", b, calls[b])
		}
	}
	var worst float64
	var migrate int
	for i := range got {
		diff := math.Abs(float64(got[i]) - want[i])
		worst = max(worst, diff)
		if diff > 1e-5 {
			t.Errorf("point %d: Eval %.8f, Predict %.8f (diff %.2g)", i, got[i], want[i], diff)
		}
		if want[i] > placement.Threshold {
			migrate++
		}
	}
	t.Logf("%d points in %v calls by batch size, max |Eval − Predict| = %.3g", len(got), calls, worst)
	if migrate < len(got)/10 || len(got)-migrate < len(got)/10 {
		t.Errorf("%d of %d points migrate: too one-sided to test the parity", migrate, len(got))
	}
}

// TestEvalBatchSizeInvariant evaluates each point alone and as part of a
// full batch: the answer for a point should not depend on its neighbours,
// or a simulation's decisions would depend on how they were batched.
func TestEvalBatchSizeInvariant(t *testing.T) {
	n, f := mustLoad(t, Options{})
	x := f.held[:n.MaxBatch()]
	batch := make([]float32, len(x))
	if err := n.Eval(x, batch); err != nil {
		t.Fatal(err)
	}
	var one [1]float32
	var differ int
	var worst float64
	for i := range x {
		if err := n.Eval(x[i:i+1], one[:]); err != nil {
			t.Fatal(err)
		}
		diff := math.Abs(float64(one[0]) - float64(batch[i]))
		worst = max(worst, diff)
		if one[0] != batch[i] {
			differ++
		}
		if diff > 1e-6 {
			t.Errorf("point %d: %.8f alone, %.8f in a batch of %d", i, one[0], batch[i], len(x))
		}
	}
	t.Logf("%d of %d points differ in the last bits alone and in a batch (max %.3g)", differ, len(x), worst)
}

// TestEvalRejects checks the calls Eval refuses.
func TestEvalRejects(t *testing.T) {
	n, f := mustLoad(t, Options{MaxBatch: 4})
	checkEvalRejects(t, n, f.held)
}

// checkEvalRejects checks the calls an Evaluator of MaxBatch 4 refuses,
// before and after Close; it closes n.
func checkEvalRejects(t *testing.T, n Evaluator, held [][sim.NumFeatures]float32) {
	t.Helper()
	if n.MaxBatch() != 4 {
		t.Fatalf("MaxBatch() = %d, want 4", n.MaxBatch())
	}
	tests := []struct {
		name string
		x    [][sim.NumFeatures]float32
		p    []float32
		want string
	}{
		{"too many points", held[:5], make([]float32, 5), "5 points, at most 4 at once"},
		{"short output", held[:3], make([]float32, 2), "3 points but room for 2 probabilities"},
		{"output without points", nil, make([]float32, 1), "0 points but room for 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := n.Eval(tt.x, tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Eval = %v; want an error containing %q", err, tt.want)
			}
		})
	}
	if err := n.Eval(nil, nil); err != nil {
		t.Errorf("Eval of no points = %v, want nil", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Eval(held[:1], make([]float32, 1)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Eval after Close = %v; want an error saying the network is closed", err)
	}
}

// TestEvalAllocs requires Eval to allocate nothing at any batch size.
func TestEvalAllocs(t *testing.T) {
	n, f := mustLoad(t, Options{})
	checkEvalAllocs(t, n, f.held)
}

// checkEvalAllocs requires n's Eval to allocate nothing at any batch size.
func checkEvalAllocs(t *testing.T, n Evaluator, held [][sim.NumFeatures]float32) {
	t.Helper()
	p := make([]float32, n.MaxBatch())
	for _, b := range []int{1, 7, 32} {
		allocs := testing.AllocsPerRun(200, func() {
			if err := n.Eval(held[:b], p[:b]); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Eval of %d points: %v allocations, want 0", b, allocs)
		}
	}
}

// TestStandardize compares Standardize with the placement network's own
// Scale, Mean and Std: exactly with the float32 arithmetic the graph
// does, and closely with an independent float64 computation. Standardize
// reads the three from the ONNX initializers, so this also checks that
// they were decoded right and in column order.
func TestStandardize(t *testing.T) {
	f := mustTrained(t)
	s, err := parseModel(f.model)
	if err != nil {
		t.Fatal(err)
	}
	n := &Network{norm: s.norm}
	net := f.net
	var z [sim.NumFeatures]float32
	for i := range f.held {
		x := &f.held[i]
		n.Standardize(x, &z)
		for k := range z {
			w32 := float32(math.Asinh(float64(x[k] * net.Scale[k])))
			exact := (w32 - net.Mean[k]) / net.Std[k]
			ref := (math.Asinh(float64(x[k])*float64(net.Scale[k])) - float64(net.Mean[k])) / float64(net.Std[k])
			if z[k] != exact {
				t.Errorf("point %d, %s: Standardize %v, float32 (asinh(x·scale) − mean)/std %v", i, sim.FeatureNames[k], z[k], exact)
			}
			if math.Abs(float64(z[k])-ref) > 1e-5*max(1, math.Abs(ref)) {
				t.Errorf("point %d, %s: Standardize %v, float64 reference %v", i, sim.FeatureNames[k], z[k], ref)
			}
		}
	}
}

// TestStandardizeMatchesGraph runs the exported graph's standardisation
// nodes alone in onnxruntime (the same Mul, Asinh, Sub and Div on the same
// initializers, with Div's output as the graph's output) and compares what
// the first layer would read with Standardize.
func TestStandardizeMatchesGraph(t *testing.T) {
	n, f := mustLoad(t, Options{})
	net := f.net
	g, err := zoo.NewGraph("standardisation", zoo.FP32, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := g.Input(InputName, []int64{zoo.Batch, sim.NumFeatures})
	x = g.Op("Asinh", g.Op("Mul", x, g.Weights(scaleName, []int64{sim.NumFeatures}, net.Scale[:])))
	x = g.Op("Div", g.Op("Sub", x, g.Weights(meanName, []int64{sim.NumFeatures}, net.Mean[:])), g.Weights(stdName, []int64{sim.NumFeatures}, net.Std[:]))
	g.Output("z", x, []int64{zoo.Batch, sim.NumFeatures})
	model, err := g.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(len(f.held))
	s, err := ort.NewSession(model, InputName, []int64{rows, sim.NumFeatures}, "z", []int64{rows, sim.NumFeatures}, ort.SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range f.held {
		copy(s.Input()[i*sim.NumFeatures:], f.held[i][:])
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	out := s.Output()
	var z [sim.NumFeatures]float32
	var worst float64
	for i := range f.held {
		n.Standardize(&f.held[i], &z)
		for k := range z {
			graph := out[i*sim.NumFeatures+k]
			diff := math.Abs(float64(z[k]) - float64(graph))
			worst = max(worst, diff/max(1, math.Abs(float64(graph))))
			if diff > 1e-5*max(1, math.Abs(float64(graph))) {
				t.Errorf("point %d, %s: Standardize %v, graph %v", i, sim.FeatureNames[k], z[k], graph)
			}
		}
	}
	t.Logf("max relative |Standardize − graph| = %.3g", worst)
}

// TestLoadRejects loads broken variants of the exported model, into
// onnxruntime and into Go, and expects each error to name what is wrong.
// The model is checked before onnxruntime sees it, so this runs without
// the library.
func TestLoadRejects(t *testing.T) {
	f := mustTrained(t)
	mutate := func(edit func(g *onnxpb.GraphProto)) []byte { return mutateModel(t, f.model, edit) }
	init := func(g *onnxpb.GraphProto, name string) *onnxpb.TensorProto { return initializerOf(t, g, name) }
	setValue := func(name string, k int, v float32) []byte {
		return mutate(func(g *onnxpb.GraphProto) {
			binary.LittleEndian.PutUint32(init(g, name).RawData[4*k:], math.Float32bits(v))
		})
	}
	dims := func(vi *onnxpb.ValueInfoProto) []*onnxpb.TensorShapeProto_Dimension {
		return vi.GetType().GetTensorType().GetShape().GetDim()
	}
	node := func(g *onnxpb.GraphProto, op string) *onnxpb.NodeProto { return nodesOf(t, g, op)[0] }
	tests := []struct {
		name  string
		model []byte
		opts  Options
		want  string
	}{
		{"garbage bytes", []byte("not an onnx model"), Options{}, "parse onnx model: "},
		{"empty", nil, Options{}, "parse onnx model: no graph"},
		{"wrong input width", mutate(func(g *onnxpb.GraphProto) {
			dims(g.Input[0])[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 9}
		}), Options{}, `input "features" is 9 wide, want [N, 10]`},
		{"fixed batch", mutate(func(g *onnxpb.GraphProto) {
			dims(g.Input[0])[0].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}
		}), Options{}, `input "features" has a fixed batch dimension 1`},
		{"renamed input", mutate(func(g *onnxpb.GraphProto) { g.Input[0].Name = proto.String("x") }), Options{}, `graph input is named "x", want "features"`},
		{"wide output", mutate(func(g *onnxpb.GraphProto) {
			dims(g.Output[0])[1].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 2}
		}), Options{}, `output "p" is 2 wide, want [N, 1]`},
		{"missing initializer", mutate(func(g *onnxpb.GraphProto) {
			std := init(g, stdName)
			g.Initializer = slices.DeleteFunc(g.Initializer, func(ti *onnxpb.TensorProto) bool { return ti == std })
		}), Options{}, `no initializer "std"`},
		{"short initializer", mutate(func(g *onnxpb.GraphProto) { init(g, meanName).Dims = []int64{5} }), Options{}, `initializer "mean": shape [5], want [10]`},
		{"zero std", setValue(stdName, colFromBacklog, 0), Options{}, `initializer "std": feature 3 (from_backlog_s) is 0`},
		{"negative scale", setValue(scaleName, colSlack, -1e3), Options{}, `initializer "scale": feature 8 (slack_s) is -1000`},
		{"NaN mean", setValue(meanName, colFromBusy, float32(math.NaN())), Options{}, `initializer "mean": feature 0 (from_busy) is NaN`},
		{"no warp", mutate(func(g *onnxpb.GraphProto) { node(g, "Asinh").OpType = proto.String("Tanh") }), Options{}, "is read by Tanh"},
		{"swapped sub", mutate(func(g *onnxpb.GraphProto) {
			in := node(g, "Sub").Input
			in[0], in[1] = in[1], in[0]
		}), Options{}, `want Sub(Asinh_`},
		{"negative max batch", f.model, Options{MaxBatch: -1}, "max batch -1: want 1 to 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, l := range loaders {
				n, err := l.load(tt.model, tt.opts)
				if err == nil {
					n.Close()
					t.Fatalf("%s succeeded; want an error containing %q", l.name, tt.want)
				}
				t.Log(err)
				if !strings.HasPrefix(err.Error(), l.prefix) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s = %v; want an error starting %q and containing %q", l.name, err, l.prefix, tt.want)
				}
			}
		})
	}
}

// loaders are the two ways to load a placement network, for the tests of
// what both refuse, with the prefix of their errors.
var loaders = []struct {
	name, prefix string
	load         func([]byte, Options) (Evaluator, error)
}{
	{"Load", "serving: load placement network: ", func(b []byte, o Options) (Evaluator, error) { return Load(b, o) }},
	{"LoadGo", "serving: load placement network in go: ", func(b []byte, o Options) (Evaluator, error) { return LoadGo(b, o) }},
}
