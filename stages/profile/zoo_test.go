package profile

import (
	"math"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// TestEveryZooModelRunsInOnnxruntime loads every model of the zoo, in both
// precisions, into onnxruntime at batch 2 and checks the output: the shape
// the signature promises (a preallocated output of any other shape fails
// the run) and finite values that differ between the two batch items.
func TestEveryZooModelRunsInOnnxruntime(t *testing.T) {
	lib := library(t)
	if _, err := ort.Init(lib.Path, lib.Source); err != nil {
		t.Fatal(err)
	}
	for _, name := range zoo.Names() {
		for _, prec := range []string{FP32, FP16} {
			t.Run(name+"/"+prec, func(t *testing.T) {
				model, err := zoo.Build(name, zoo.Options{Seed: 1, Precision: prec})
				if err != nil {
					t.Fatal(err)
				}
				m, _ := catalog.Zoo().Lookup(name)
				s, err := newModelSession(targetOf(DefaultConfig()), model, m, 2, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
				_, out, _ := zoo.Signature(name)
				per := 1
				for _, d := range out.Shape[1:] {
					per *= int(d)
				}
				y := s.Output()
				if len(y) != 2*per {
					t.Fatalf("output has %d values, want 2×%d", len(y), per)
				}
				differ := false
				for i, v := range y {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("output[%d] = %v", i, v)
					}
					if i < per && v != y[per+i] {
						differ = true
					}
				}
				if !differ {
					t.Error("both batch items gave the same output for different inputs")
				}
			})
		}
	}
}
