package ort

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Trace is what onnxruntime's profiler recorded of a session's runs
// (SessionOptions.ProfilePrefix): each run's wall time and the kernels it
// ran, in the order they started.
type Trace struct {
	Runs []TracedRun
}

// TracedRun is one Run of a profiled session.
type TracedRun struct {
	// Dur is the run's time as onnxruntime measured it (its model_run
	// event): the kernels plus the executor's own work between them.
	Dur time.Duration
	// Kernels are the kernels the run executed, by start time.
	Kernels []Kernel
}

// Kernel is one node's kernel in a run: the node of the graph the session
// executed (after its optimisations: a fused node has a name of
// onnxruntime's making), its operator and its time.
type Kernel struct {
	Node, Op string
	Dur      time.Duration
}

// KernelSum is the sum of the run's kernel times.
func (r TracedRun) KernelSum() time.Duration {
	var d time.Duration
	for _, k := range r.Kernels {
		d += k.Dur
	}
	return d
}

// traceEvent is one event of onnxruntime's Chrome-trace JSON; times are in
// microseconds.
type traceEvent struct {
	Cat  string `json:"cat"`
	Name string `json:"name"`
	TS   int64  `json:"ts"`
	Dur  int64  `json:"dur"`
	Args struct {
		OpName string `json:"op_name"`
	} `json:"args"`
}

// kernelSuffix ends the name of a node's kernel event; the node's fence
// events (_fence_before, _fence_after) are not its work.
const kernelSuffix = "_kernel_time"

// ParseTrace reads onnxruntime's profile JSON. A kernel belongs to the run
// whose model_run event spans its start; kernels outside every run (the
// session's initialisation) are dropped.
func ParseTrace(b []byte) (Trace, error) {
	var events []traceEvent
	if err := json.Unmarshal(b, &events); err != nil {
		return Trace{}, fmt.Errorf("ort: parse trace: %w", err)
	}
	type span struct{ start, end int64 }
	var spans []span
	var runs []TracedRun
	for _, e := range events {
		if e.Cat == "Session" && e.Name == "model_run" {
			spans = append(spans, span{e.TS, e.TS + e.Dur})
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return int(a.start - b.start) })
	runs = make([]TracedRun, len(spans))
	for i, s := range spans {
		runs[i].Dur = time.Duration(s.end-s.start) * time.Microsecond
	}
	type timed struct {
		ts int64
		k  Kernel
	}
	kernels := make([][]timed, len(spans))
	for _, e := range events {
		node, ok := strings.CutSuffix(e.Name, kernelSuffix)
		if e.Cat != "Node" || !ok {
			continue
		}
		i, _ := slices.BinarySearchFunc(spans, e.TS, func(s span, ts int64) int {
			switch {
			case s.end < ts:
				return -1
			case s.start > ts:
				return 1
			}
			return 0
		})
		if i == len(spans) || spans[i].start > e.TS || spans[i].end < e.TS {
			continue
		}
		kernels[i] = append(kernels[i], timed{e.TS, Kernel{Node: node, Op: e.Args.OpName, Dur: time.Duration(e.Dur) * time.Microsecond}})
	}
	for i, ks := range kernels {
		slices.SortStableFunc(ks, func(a, b timed) int { return int(a.ts - b.ts) })
		for _, k := range ks {
			runs[i].Kernels = append(runs[i].Kernels, k.k)
		}
	}
	return Trace{Runs: runs}, nil
}

// ReadTrace parses and removes the profile a closed session with
// ProfilePrefix prefix wrote: onnxruntime names it after the prefix and
// the time, so exactly one file of that prefix must exist.
func ReadTrace(prefix string) (Trace, error) {
	files, err := filepath.Glob(prefix + "*.json")
	if err != nil {
		return Trace{}, fmt.Errorf("ort: read trace %s: %w", prefix, err)
	}
	if len(files) != 1 {
		return Trace{}, fmt.Errorf("ort: read trace %s: %d files of that prefix, want the one a profiled session wrote", prefix, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return Trace{}, fmt.Errorf("ort: read trace: %w", err)
	}
	t, err := ParseTrace(b)
	if err != nil {
		return Trace{}, fmt.Errorf("%w (%s)", err, files[0])
	}
	if err := os.Remove(files[0]); err != nil {
		return Trace{}, fmt.Errorf("ort: read trace: %w", err)
	}
	return t, nil
}
