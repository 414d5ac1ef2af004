package profile

import (
	"math"
	"testing"
)

func TestSampleValidate(t *testing.T) {
	good := Sample{Kind: KindInference, Backend: backendORT, Provider: providerCPU, Device: deviceCPU,
		Model: "mlp", Precision: FP32, Batch: 4, Threads: 1, Concurrency: 1, LatencyS: 0.002}
	tests := []struct {
		name   string
		mutate func(*Sample)
		want   string // the error; "" for a valid row
	}{
		{"a measured inference row", func(*Sample) {}, ""},
		{"a gonum matmul row", func(s *Sample) {
			s.Kind, s.Backend, s.Provider, s.Model, s.Batch, s.Threads = KindMatMul, backendGonum, providerGo, "matmul", 256, 2
		}, ""},
		{"a contention row in fp16", func(s *Sample) { s.Kind, s.Precision, s.Concurrency = KindContention, FP16, 4 }, ""},
		{"an imported device", func(s *Sample) { s.Device, s.Provider, s.Source = "a100", "CUDAExecutionProvider", "import:gpu.csv" }, ""},
		{"a serving row", func(s *Sample) { s.Kind, s.Model, s.Batch, s.LatencyS = KindServing, ServingModel, 8, 6e-6 }, ""},
		{"an imported serving row", func(s *Sample) {
			s.Kind, s.Model, s.Device, s.Source = KindServing, ServingModel, "host-b", "import:serving.csv"
		}, ""},
		{"a serving row of another model", func(s *Sample) { s.Kind = KindServing },
			`column model: a serving row times the placement network, want "placement", got "mlp"`},
		{"a serving row in fp16", func(s *Sample) { s.Kind, s.Model, s.Precision = KindServing, ServingModel, FP16 },
			`column precision: a serving row times the placement network in fp32, got "fp16"`},
		{"a serving row on two threads", func(s *Sample) { s.Kind, s.Model, s.Threads = KindServing, ServingModel, 2 },
			"column threads: a serving row times the serving path's one intra-op thread, got 2"},
		{"a serving row beside another", func(s *Sample) { s.Kind, s.Model, s.Concurrency = KindServing, ServingModel, 2 },
			"column concurrency: a serving row times one call alone, got 2"},
		{"unknown kind", func(s *Sample) { s.Kind = "training" }, `column kind: want inference, matmul, contention or serving, got "training"`},
		{"provider rows belong in the summary", func(s *Sample) { s.Kind = KindProvider }, `column kind: want inference, matmul, contention or serving, got "provider"`},
		{"no backend", func(s *Sample) { s.Backend = "" }, "column backend: empty"},
		{"no provider", func(s *Sample) { s.Provider = "" }, "column provider: empty"},
		{"no device", func(s *Sample) { s.Device = "" }, "column device: empty"},
		{"no model", func(s *Sample) { s.Model = "" }, "column model: empty"},
		{"unknown precision", func(s *Sample) { s.Precision = "int8" }, `column precision: want fp32 or fp16, got "int8"`},
		{"batch 0", func(s *Sample) { s.Batch = 0 }, "column batch: must be at least 1, got 0"},
		{"negative threads", func(s *Sample) { s.Threads = -2 }, "column threads: must be at least 1, got -2"},
		{"concurrency 0", func(s *Sample) { s.Concurrency = 0 }, "column concurrency: must be at least 1, got 0"},
		{"zero latency", func(s *Sample) { s.LatencyS = 0 }, "column latency_s: must be a positive finite number of seconds, got 0"},
		{"negative latency", func(s *Sample) { s.LatencyS = -0.5 }, "column latency_s: must be a positive finite number of seconds, got -0.5"},
		{"NaN latency", func(s *Sample) { s.LatencyS = math.NaN() }, "column latency_s: must be a positive finite number of seconds, got NaN"},
		{"latency 1e300", func(s *Sample) { s.LatencyS = 1e300 }, "column latency_s: must be from 1e-09 s to 3600 s (one run of one model), got 1e+300"},
		{"latency 1e-300", func(s *Sample) { s.LatencyS = 1e-300 }, "column latency_s: must be from 1e-09 s to 3600 s (one run of one model), got 1e-300"},
		{"device with a pipe", func(s *Sample) { s.Device = "a|b" }, `column device: "a|b" is not a valid name: want 1 to 64 ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or digit (^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$)`},
		{"infinite latency", func(s *Sample) { s.LatencyS = math.Inf(1) }, "column latency_s: must be a positive finite number of seconds, got +Inf"},
		// The first column at fault is named, in the file's column order.
		{"several faults", func(s *Sample) { s.Model, s.Batch = "", 0 }, "column model: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.mutate(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate(%+v) = %v, want nil", s, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Validate(%+v) = %v, want %q", s, err, tt.want)
			}
		})
	}
}
