package ort

import (
	"testing"
	"time"
)

// TestParseTrace reads a trace as onnxruntime 1.24 writes it: session
// events, two runs, each node's fences around its kernel, and a kernel of
// the session's initialisation outside both runs.
func TestParseTrace(t *testing.T) {
	const trace = `[
{"cat":"Session","pid":1,"tid":1,"dur":500,"ts":10,"ph":"X","name":"session_initialization","args":{}},
{"cat":"Node","pid":1,"tid":1,"dur":7,"ts":20,"ph":"X","name":"Init_kernel_time","args":{"op_name":"Conv"}},
{"cat":"Node","pid":1,"tid":1,"dur":0,"ts":1001,"ph":"X","name":"Conv_1_fence_before","args":{"op_name":"Conv"}},
{"cat":"Node","pid":1,"tid":1,"dur":60,"ts":1002,"ph":"X","name":"Conv_1_kernel_time","args":{"op_name":"Conv"}},
{"cat":"Node","pid":1,"tid":1,"dur":0,"ts":1063,"ph":"X","name":"Conv_1_fence_after","args":{"op_name":"Conv"}},
{"cat":"Node","pid":1,"tid":1,"dur":30,"ts":1064,"ph":"X","name":"fused Gemm_2_kernel_time","args":{"op_name":"FusedGemm"}},
{"cat":"Session","pid":1,"tid":1,"dur":100,"ts":1000,"ph":"X","name":"model_run","args":{}},
{"cat":"Node","pid":1,"tid":1,"dur":40,"ts":2070,"ph":"X","name":"fused Gemm_2_kernel_time","args":{"op_name":"FusedGemm"}},
{"cat":"Node","pid":1,"tid":1,"dur":50,"ts":2005,"ph":"X","name":"Conv_1_kernel_time","args":{"op_name":"Conv"}},
{"cat":"Session","pid":1,"tid":1,"dur":120,"ts":2000,"ph":"X","name":"model_run","args":{}}
]`
	tr, err := ParseTrace([]byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	us := time.Microsecond
	want := []TracedRun{
		{Dur: 100 * us, Kernels: []Kernel{{"Conv_1", "Conv", 60 * us}, {"fused Gemm_2", "FusedGemm", 30 * us}}},
		{Dur: 120 * us, Kernels: []Kernel{{"Conv_1", "Conv", 50 * us}, {"fused Gemm_2", "FusedGemm", 40 * us}}},
	}
	if len(tr.Runs) != len(want) {
		t.Fatalf("ParseTrace: %d runs, want %d", len(tr.Runs), len(want))
	}
	for i, r := range tr.Runs {
		if r.Dur != want[i].Dur || len(r.Kernels) != len(want[i].Kernels) {
			t.Fatalf("run %d = %+v, want %+v", i, r, want[i])
		}
		for j, k := range r.Kernels {
			if k != want[i].Kernels[j] {
				t.Errorf("run %d kernel %d = %+v, want %+v", i, j, k, want[i].Kernels[j])
			}
		}
	}
	if got := tr.Runs[1].KernelSum(); got != 90*us {
		t.Errorf("KernelSum() = %v, want 90µs", got)
	}
	if _, err := ParseTrace([]byte(`{"not": "a list"}`)); err == nil {
		t.Error("ParseTrace(an object) = nil error, want one")
	}
}
