package profile

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
)

// The GPU profile committed as an example import, and its provenance: the
// profile stage's manifest from the machine that measured it.
const (
	exampleGPUProfile    = "../../docs/examples/profile-h200-cuda.parquet"
	exampleGPUProvenance = "../../docs/examples/profile-h200-cuda.manifest.json"
)

// TestExampleGPUProfile checks the committed H200 profile as an import
// reads it, and what any GPU profile must show: every catalog model in
// both precisions at every batch size of the workload's classes (1 to 64),
// all on the CUDA provider of one device; latency that does not fall as
// a batch grows eightfold; lanes that slow each other down less than
// they add (the GPU overlaps them); and a provenance that names the card
// and the runtime.
func TestExampleGPUProfile(t *testing.T) {
	rows, err := readImport(exampleGPUProfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Device != "h200" || r.Provider != ort.CUDA || r.Backend != backendORT {
			t.Fatalf("row %+v: want device h200 on %s through onnxruntime", r, ort.CUDA)
		}
	}
	type key struct {
		kind, model, precision string
		batch, concurrency     int32
	}
	sum := map[key]Summary{}
	for _, s := range summarize(rows, catalog.Zoo()) {
		sum[key{s.Kind, s.Model, s.Precision, s.Batch, s.Concurrency}] = s
	}
	for _, m := range catalog.Zoo().Names() {
		for _, p := range []string{FP32, FP16} {
			for _, b := range []int32{1, 2, 4, 8, 16, 32, 64} {
				if n := sum[key{KindInference, m, p, b, 1}].Count; n < 3 {
					t.Errorf("%s %s batch %d: %d runs, want at least 3", m, p, b, n)
				}
			}
			small, large := sum[key{KindInference, m, p, 8, 1}].P50S, sum[key{KindInference, m, p, 64, 1}].P50S
			if !(large >= 0.9*small) {
				t.Errorf("%s %s: batch 64 takes %.3f ms, batch 8 %.3f ms", m, p, 1e3*large, 1e3*small)
			}
		}
	}
	const contended, batch = "resnet18", 2 // what the H200's profile measured contention with
	alone, four := sum[key{KindContention, contended, FP32, batch, 1}].P50S, sum[key{KindContention, contended, FP32, batch, 4}].P50S
	if !(four >= alone && four < 4*alone) {
		t.Errorf("contention: a run takes %.3f ms alone and %.3f ms four at a time; want slower, but less than four times", 1e3*alone, 1e3*four)
	}

	b, err := os.ReadFile(exampleGPUProvenance)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Stage string            `json:"stage"`
		Notes map[string]string `json:"notes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Stage != "profile" || !strings.Contains(m.Notes["gpu"], "H200") || !strings.Contains(m.Notes["providers"], ort.CUDA) || m.Notes["onnxruntime"] == "" {
		t.Errorf("provenance: stage %q, notes %v: want the profile stage's, naming the H200, the CUDA provider and onnxruntime's version", m.Stage, m.Notes)
	}
}
