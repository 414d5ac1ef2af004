package catalog

import (
	"math"
	"slices"
	"testing"
)

func TestModels(t *testing.T) {
	tests := []struct {
		name string
		// params is the published trainable parameter count, which the layer
		// tally must reproduce exactly.
		params int64
		// gmacs is the published multiply-add count in billions and tol the
		// relative deviation allowed: published figures are rounded to two or
		// three digits.
		gmacs, tol float64
	}{
		{"mlp", 4929, 4800e-9, 0},
		{"resnet18", 11_689_512, 1.814, 0.005},
		{"resnet50", 25_557_032, 4.089, 0.005},
		// DeiT reports 1.3 G for DeiT-Ti, rounded to two digits and counted
		// with fvcore, which also counts some element-wise work.
		{"vit", 5_717_416, 1.3, 0.04},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", tt.name)
			}
			if m.Params != tt.params {
				t.Errorf("Params = %d, want %d", m.Params, tt.params)
			}
			if m.WeightBytes != 4*m.Params {
				t.Errorf("WeightBytes = %d, want 4 × %d", m.WeightBytes, m.Params)
			}
			gmacs := float64(m.FLOPsPerSample) / 2 / 1e9
			if dev := math.Abs(gmacs-tt.gmacs) / tt.gmacs; dev > tt.tol {
				t.Errorf("FLOPsPerSample/2 = %.4g GMAC, want %.4g within %.1f%% (off by %.2f%%)",
					gmacs, tt.gmacs, 100*tt.tol, 100*dev)
			}
			if m.ActivationBytesPerSample <= 0 || m.InputBytesPerSample <= 0 {
				t.Errorf("non-positive byte figures: %+v", m)
			}
		})
	}
}

// TestMLPExact pins every MLP figure, which is small enough to derive by hand:
// layers 10→64, 64→64, 64→1 with biases.
func TestMLPExact(t *testing.T) {
	m, _ := Lookup("mlp")
	want := Model{
		Name:                     "mlp",
		Description:              m.Description,
		InputShape:               []int64{10},
		Params:                   (10*64 + 64) + (64*64 + 64) + (64 + 1),
		FLOPsPerSample:           2 * (10*64 + 64*64 + 64),
		InputBytesPerSample:      4 * 10,
		ActivationBytesPerSample: 4 * (64 + 64 + 1),
		WeightBytes:              4 * 4929,
	}
	if !slices.Equal(m.InputShape, want.InputShape) || m.Params != want.Params ||
		m.FLOPsPerSample != want.FLOPsPerSample || m.InputBytesPerSample != want.InputBytesPerSample ||
		m.ActivationBytesPerSample != want.ActivationBytesPerSample || m.WeightBytes != want.WeightBytes {
		t.Errorf("mlp = %+v, want %+v", m, want)
	}
}

func TestNamesAndLookup(t *testing.T) {
	want := []string{"mlp", "resnet18", "resnet50", "vit"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i, m := range All() {
		if m.Name != want[i] {
			t.Errorf("All()[%d].Name = %q, want %q", i, m.Name, want[i])
		}
	}
	if _, ok := Lookup("resnet101"); ok {
		t.Error(`Lookup("resnet101") found a model`)
	}
	// Callers must not be able to change the catalog through a returned slice.
	m, _ := Lookup("vit")
	m.InputShape[0] = 99
	if again, _ := Lookup("vit"); again.InputShape[0] != 3 {
		t.Errorf("Lookup shares InputShape with the catalog: got %v", again.InputShape)
	}
}

func TestArithmeticIntensity(t *testing.T) {
	for _, name := range Names() {
		m, _ := Lookup(name)
		one, many := m.ArithmeticIntensity(1), m.ArithmeticIntensity(64)
		// Sharing the weights across a batch can only raise the intensity,
		// and it can never exceed the activation-bound limit.
		limit := float64(m.FLOPsPerSample) / float64(m.InputBytesPerSample+m.ActivationBytesPerSample)
		if !(one < many && many < limit) {
			t.Errorf("%s: intensity(1) = %.3g, intensity(64) = %.3g, limit %.3g; want increasing and below the limit",
				name, one, many, limit)
		}
		if got, want := m.FootprintBytes(2)-m.FootprintBytes(1), m.InputBytesPerSample+m.ActivationBytesPerSample; got != want {
			t.Errorf("%s: footprint per extra sample = %d, want %d", name, got, want)
		}
	}
}
