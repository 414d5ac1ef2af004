package catalog

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestModels(t *testing.T) {
	tests := []struct {
		name  string
		tally tally
		// params is the published trainable parameter count, which the
		// graph's parameters and the folded batch-norm channels must
		// reproduce exactly.
		params int64
		// gmacs is the published multiply-add count in billions and tol the
		// relative deviation allowed: published figures are rounded to two or
		// three digits.
		gmacs, tol float64
	}{
		{"mlp", mlpTally(), 4929, 4800e-9, 0},
		{"resnet18", resnet18Tally(), 11_689_512, 1.814, 0.005},
		{"resnet50", resnet50Tally(), 25_557_032, 4.089, 0.005},
		// DeiT reports 1.3 G for DeiT-Ti, rounded to two digits and counted
		// with fvcore, which also counts some element-wise work.
		{"vit", vitTinyTally(), 5_717_416, 1.3, 0.04},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Zoo().Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", tt.name)
			}
			if m.Params != tt.tally.params || m.Params+tt.tally.folded != tt.params {
				t.Errorf("Params = %d with %d folded batch-norm channels, want %d in all", m.Params, tt.tally.folded, tt.params)
			}
			if m.WeightBytes != 4*m.Params {
				t.Errorf("WeightBytes = %d, want 4 × %d", m.WeightBytes, m.Params)
			}
			gmacs := float64(m.FLOPsPerSample) / 2 / 1e9
			if dev := math.Abs(gmacs-tt.gmacs) / tt.gmacs; dev > tt.tol {
				t.Errorf("FLOPsPerSample/2 = %.4g GMAC, want %.4g within %.1f%% (off by %.2f%%)",
					gmacs, tt.gmacs, 100*tt.tol, 100*dev)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestMLPExact pins every MLP figure, which is small enough to derive by hand:
// layers 10→64, 64→64, 64→1 with biases.
func TestMLPExact(t *testing.T) {
	m, _ := Zoo().Lookup("mlp")
	want := Model{
		Name:                     "mlp",
		Description:              m.Description,
		Precisions:               []string{FP32, FP16},
		Input:                    "input",
		InputShape:               []int64{10},
		Output:                   "output",
		OutputShape:              []int64{1},
		Params:                   (10*64 + 64) + (64*64 + 64) + (64 + 1),
		FLOPsPerSample:           2 * (10*64 + 64*64 + 64),
		InputBytesPerSample:      4 * 10,
		ActivationBytesPerSample: 4 * (64 + 64 + 1),
		WeightBytes:              4 * 4929,
	}
	if !equal(m, want) {
		t.Errorf("mlp = %+v, want %+v", m, want)
	}
	if got := m.InputDims(3); !slices.Equal(got, []int64{3, 10}) {
		t.Errorf("InputDims(3) = %v, want [3 10]", got)
	}
}

func equal(a, b Model) bool {
	return slices.Equal(a.Precisions, b.Precisions) && slices.Equal(a.InputShape, b.InputShape) &&
		slices.Equal(a.OutputShape, b.OutputShape) && a.Name == b.Name && a.Description == b.Description &&
		a.File == b.File && a.SHA256 == b.SHA256 && a.Input == b.Input && a.Output == b.Output &&
		a.BatchAxis == b.BatchAxis && a.OutputBatchAxis == b.OutputBatchAxis && a.Params == b.Params &&
		a.FLOPsPerSample == b.FLOPsPerSample && a.InputBytesPerSample == b.InputBytesPerSample &&
		a.ActivationBytesPerSample == b.ActivationBytesPerSample && a.WeightBytes == b.WeightBytes
}

func TestNamesAndLookup(t *testing.T) {
	want := []string{"mlp", "resnet18", "resnet50", "vit"}
	if got := Zoo().Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i, m := range Zoo().All() {
		if m.Name != want[i] || Zoo().Index(m.Name) != i || Zoo().At(i).Name != m.Name {
			t.Errorf("All()[%d].Name = %q, Index = %d; want %q at %d", i, m.Name, Zoo().Index(m.Name), want[i], i)
		}
	}
	if _, ok := Zoo().Lookup("resnet101"); ok {
		t.Error(`Lookup("resnet101") found a model`)
	}
	if err := Zoo().Unknown("resnet101"); !strings.Contains(err.Error(), "mlp, resnet18, resnet50, vit") {
		t.Errorf("Unknown = %v, want the catalog's names", err)
	}
	// Callers must not be able to change the catalog through a returned slice.
	m, _ := Zoo().Lookup("vit")
	m.InputShape[0] = 99
	if again, _ := Zoo().Lookup("vit"); again.InputShape[0] != 3 {
		t.Errorf("Lookup shares InputShape with the catalog: got %v", again.InputShape)
	}
}

func TestArithmeticIntensity(t *testing.T) {
	for _, m := range Zoo().All() {
		one, many := m.ArithmeticIntensity(1), m.ArithmeticIntensity(64)
		// Sharing the weights across a batch can only raise the intensity,
		// and it can never exceed the activation-bound limit.
		limit := float64(m.FLOPsPerSample) / float64(m.InputBytesPerSample+m.ActivationBytesPerSample)
		if !(one < many && many < limit) {
			t.Errorf("%s: intensity(1) = %.3g, intensity(64) = %.3g, limit %.3g; want increasing and below the limit",
				m.Name, one, many, limit)
		}
		if got, want := m.FootprintBytes(2)-m.FootprintBytes(1), m.InputBytesPerSample+m.ActivationBytesPerSample; got != want {
			t.Errorf("%s: footprint per extra sample = %d, want %d", m.Name, got, want)
		}
	}
}

// TestReadWrite round-trips a catalog through models.parquet, a file
// model with its batch axis elsewhere than first included.
func TestReadWrite(t *testing.T) {
	mine := Zoo().At(0)
	mine.Name, mine.File, mine.SHA256, mine.Precisions = "mine", "mine.onnx", strings.Repeat("ab", 32), []string{FP16}
	mine.InputShape, mine.BatchAxis = []int64{7, 10}, 1
	models := append(Zoo().All(), mine)
	c, err := New(models)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), File)
	if err := c.Write(path, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != len(models) {
		t.Fatalf("read %d models, want %d", back.Len(), len(models))
	}
	for i, m := range back.All() {
		if !equal(m, models[i]) {
			t.Errorf("row %d = %+v, want %+v", i+1, m, models[i])
		}
	}
	if got := back.At(4).InputDims(2); !slices.Equal(got, []int64{7, 2, 10}) {
		t.Errorf("InputDims(2) = %v, want [7 2 10]", got)
	}
}

func TestInvalid(t *testing.T) {
	base := Zoo().At(0)
	tests := []struct {
		name string
		edit func(m *Model)
		want string
	}{
		{"bad name", func(m *Model) { m.Name = "my model" }, "not a valid name"},
		{"reserved", func(m *Model) { m.Name = "matmul" }, "reserved"},
		{"no precision", func(m *Model) { m.Precisions = nil }, "precisions: empty"},
		{"bad precision", func(m *Model) { m.Precisions = []string{"int8"} }, `got "int8"`},
		{"batch axis", func(m *Model) { m.BatchAxis = 3 }, "batch_axis: 3 is not an axis"},
		{"zero dim", func(m *Model) { m.InputShape = []int64{0} }, "below 1"},
		{"no params", func(m *Model) { m.Params = 0 }, "figures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base
			tt.edit(&m)
			if _, err := New([]Model{m}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := New([]Model{base, base}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("New of two mlps = %v, want ErrDuplicate", err)
	}
}
