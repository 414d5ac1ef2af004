package placementnet

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// trainedModel is testdata/trained.onnx, the placement network the
// default pipeline trained (the schedule stage's testdata/placement.onnx).
func trainedModel(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/trained.onnx")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// widePoints returns n seeded points far wider than decisions are:
// features from 1e-6 to 1e6 either side of zero, a tenth of them exactly
// zero, and the shares and counts of the first three columns as the
// simulator makes them. They reach the parts of the warp and of the
// layers real decisions rarely do.
func widePoints(n int, seed uint64) [][sim.NumFeatures]float32 {
	r := rand.New(rand.NewPCG(seed, 5))
	x := make([][sim.NumFeatures]float32, n)
	for i := range x {
		for k := range x[i] {
			v := math.Pow(10, -6+12*r.Float64())
			switch {
			case k < 3:
				v = 3 * r.Float64()
			case r.IntN(10) == 0:
				v = 0
			case r.IntN(4) == 0:
				v = -v
			}
			x[i][k] = float32(v)
		}
	}
	return x
}

// TestGoNetworkMatchesNetwork evaluates the same points with onnxruntime
// and with the Go forward pass, for three networks (the package's
// synthetically trained one, the network the default pipeline trained
// and a Synthetic one) on the held-out decisions and on 50,000 wide
// points, in batches of every size from 1 to 32: every probability
// within 1e-5 of onnxruntime's, which GuardBand, a hundred times wider,
// rests on; and each's EvalStandardized the same to the bit as its Eval.
func TestGoNetworkMatchesNetwork(t *testing.T) {
	orttest.Require(t)
	synthetic, err := Synthetic(5)
	if err != nil {
		t.Fatal(err)
	}
	f := mustTrained(t)
	models := []struct {
		name  string
		model []byte
	}{{"fixture", f.model}, {"trained", trainedModel(t)}, {"synthetic", synthetic}}
	points := []struct {
		name string
		x    [][sim.NumFeatures]float32
	}{{"held-out", f.held}, {"wide", widePoints(50_000, 1)}}
	for _, m := range models {
		exact, err := Load(m.model, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer exact.Close()
		fast, err := LoadGo(m.model, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pts := range points {
			t.Run(m.name+"/"+pts.name, func(t *testing.T) {
				want, got := make([]float32, len(pts.x)), make([]float32, len(pts.x))
				wantZ, gotZ := make([]float32, len(pts.x)), make([]float32, len(pts.x))
				// Each reads only what its first layer needs: the other
				// argument is all zeros.
				z, zeros := make([][sim.NumFeatures]float32, len(pts.x)), make([][sim.NumFeatures]float32, len(pts.x))
				for i := range z {
					fast.Standardize(&pts.x[i], &z[i])
				}
				for i, b := 0, 1; i < len(pts.x); i, b = i+b, b%32+1 {
					j := min(i+b, len(pts.x))
					if err := exact.Eval(pts.x[i:j], want[i:j]); err != nil {
						t.Fatal(err)
					}
					if err := fast.Eval(pts.x[i:j], got[i:j]); err != nil {
						t.Fatal(err)
					}
					if err := exact.EvalStandardized(pts.x[i:j], zeros[i:j], wantZ[i:j]); err != nil {
						t.Fatal(err)
					}
					if err := fast.EvalStandardized(zeros[i:j], z[i:j], gotZ[i:j]); err != nil {
						t.Fatal(err)
					}
				}
				// From the standardized points each answers as from the
				// raw ones, to the bit (NaN as NaN).
				for i := range got {
					if math.Float32bits(gotZ[i]) != math.Float32bits(got[i]) || math.Float32bits(wantZ[i]) != math.Float32bits(want[i]) {
						t.Errorf("point %d: EvalStandardized Go %v onnxruntime %v, Eval Go %v onnxruntime %v", i, gotZ[i], wantZ[i], got[i], want[i])
					}
				}
				var worst float64
				var migrate int
				for i := range got {
					d := math.Abs(float64(got[i]) - float64(want[i]))
					if !(d <= 1e-5) {
						t.Errorf("point %d %v: onnxruntime %.8f, Go %.8f", i, pts.x[i], want[i], got[i])
					}
					worst = max(worst, d)
					if want[i] > placement.Threshold {
						migrate++
					}
				}
				t.Logf("%d points, %d migrate; max |Go − onnxruntime| = %.3g", len(got), migrate, worst)
			})
		}
	}
}

// TestGoNetworkNonFinite: a point whose standardized features are not
// all finite gets NaN from the Go forward pass, which Guarded refers to
// onnxruntime, rather than whatever its sums make of an infinity.
func TestGoNetworkNonFinite(t *testing.T) {
	n, err := LoadGo(trainedModel(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, x := range [][sim.NumFeatures]float32{
		{0: nan},
		{3: inf},
		{4: float32(math.Inf(-1))},
		{5: math.MaxFloat32}, // times a scale above 1, infinite
	} {
		var p [1]float32
		if err := n.Eval([][sim.NumFeatures]float32{x}, p[:]); err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(float64(p[0])) {
			t.Errorf("Eval(%v) = %v, want NaN", x, p[0])
		}
	}
}

// TestForwardKernelsAgree: the whole forward pass gives the same
// probabilities to the bit with either kernel, so a simulation's answers
// do not depend on the machine's instruction set.
func TestForwardKernelsAgree(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 kernel on this machine: forward runs the Go one")
	}
	n, err := LoadGo(trainedModel(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := widePoints(5000, 2)
	p := func(avx2 bool) []float32 {
		hasAVX2 = avx2
		defer func() { hasAVX2 = true }()
		out := make([]float32, len(x))
		for i := range x {
			if err := n.Eval(x[i:i+1], out[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a, b := p(true), p(false)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("point %d %v: AVX2 %v, Go %v", i, x[i], a[i], b[i])
		}
	}
}

// TestMemoStandardisation: the memo's answers are apply's, bit for bit,
// for repeated values, values that share a slot, signed zeros and NaN.
func TestMemoStandardisation(t *testing.T) {
	g, err := parseModel(trainedModel(t))
	if err != nil {
		t.Fatal(err)
	}
	m := newMemoStandardisation(g.norm)
	r := rand.New(rand.NewPCG(3, 3))
	// Few distinct values, so that most lookups hit and many collide in
	// the 64 slots.
	values := []float32{0, float32(math.Copysign(0, -1)), 1, 0.5, 1e-3, -2.5, 3e38, float32(math.NaN()), float32(math.Inf(1))}
	for range 200 {
		values = append(values, float32(math.Pow(10, -4+6*r.Float64())))
	}
	for i := range 20_000 {
		var x, want, got [sim.NumFeatures]float32
		for k := range x {
			x[k] = values[r.IntN(len(values))]
		}
		g.norm.apply(&x, &want)
		m.apply(&x, &got)
		for k := range x {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) && !(math.IsNaN(float64(got[k])) && math.IsNaN(float64(want[k]))) {
				t.Fatalf("point %d, %s = %v: memo %v, apply %v", i, sim.FeatureNames[k], x[k], got[k], want[k])
			}
		}
	}
}

// TestGoNetworkLikeNetwork: GoNetwork refuses the calls Network refuses,
// with the same messages, and allocates nothing.
func TestGoNetworkLikeNetwork(t *testing.T) {
	f := mustTrained(t)
	n, err := LoadGo(f.model, Options{MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkEvalRejects(t, n, f.held)
	m, err := LoadGo(f.model, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkEvalAllocs(t, m, f.held)
}

// TestLoadGoRejectsLayers loads variants of the exported model whose
// layers are not the ones LoadGo computes, and expects each error to name
// the node or initializer at fault: the Go forward pass computes the
// train stage's graph or nothing, never a different function.
func TestLoadGoRejectsLayers(t *testing.T) {
	f := mustTrained(t)
	mutate := func(edit func(g *onnxpb.GraphProto)) []byte { return mutateModel(t, f.model, edit) }
	nodes := func(g *onnxpb.GraphProto, op string) []*onnxpb.NodeProto { return nodesOf(t, g, op) }
	init := func(g *onnxpb.GraphProto, name string) *onnxpb.TensorProto { return initializerOf(t, g, name) }
	tests := []struct {
		name  string
		model []byte
		want  string
	}{
		{"tanh", mutate(func(g *onnxpb.GraphProto) { nodes(g, "Relu")[1].OpType = proto.String("Tanh") }), "is read by Tanh, want Relu or Sigmoid"},
		{"transB 0", mutate(func(g *onnxpb.GraphProto) { nodes(g, "Gemm")[0].Attribute[0].I = proto.Int64(0) }), "transB is not 1"},
		{"alpha 2", mutate(func(g *onnxpb.GraphProto) {
			n := nodes(g, "Gemm")[1]
			n.Attribute = append(n.Attribute, zoo.AttrFloat("alpha", 2))
		}), "attribute alpha = 2"},
		{"NaN weight", mutate(func(g *onnxpb.GraphProto) {
			binary.LittleEndian.PutUint32(init(g, "fc2.weight").RawData[4*7:], math.Float32bits(float32(math.NaN())))
		}), `initializer "fc2.weight": value 7 is NaN`},
		{"bias shape", mutate(func(g *onnxpb.GraphProto) { init(g, "fc1.bias").Dims = []int64{1, 64} }), `bias "fc1.bias" has shape [1 64], want [64]`},
		{"second reader", mutate(func(g *onnxpb.GraphProto) {
			g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: nodes(g, "Gemm")[0].Output, Output: []string{"spy"}})
		}), "is read by 2 nodes"},
		{"stray node", mutate(func(g *onnxpb.GraphProto) {
			g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: []string{"fc1.bias"}, Output: []string{"stray"}})
		}), "graph has 11 nodes, want only the 10"},
		{"no sigmoid", mutate(func(g *onnxpb.GraphProto) { nodes(g, "Sigmoid")[0].OpType = proto.String("Relu") }), `the graph's output "p" is Relu of layer 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadGo(tt.model, Options{})
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadGo = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
