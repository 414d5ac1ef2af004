package nodeprof

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// lomoModels are the zoo and the test models, as ONNX bytes by name.
func lomoModels(tb testing.TB) map[string][]byte {
	tb.Helper()
	models := map[string][]byte{}
	for _, name := range zoo.Names() {
		b, err := zoo.Build(name, zoo.Options{Seed: 1})
		if err != nil {
			tb.Fatal(err)
		}
		models[name] = b
	}
	for _, build := range []func(string, int64) (testmodels.Model, error){testmodels.MobileNet, testmodels.WideMLP, testmodels.Encoder} {
		m, err := build(zoo.FP32, 1)
		if err != nil {
			tb.Fatal(err)
		}
		models[m.Name] = m.ONNX
	}
	return models
}

// timeRuns is the least wall time of runs of a plain (unprofiled)
// session: on the shared two-core machine the median of a 2-thread run
// moves by half between minutes, and the fastest run is what the
// profile's fastest run is compared with.
func timeRuns(p *onnxgraph.Pass, model []byte, threads, warmup, runs int) (time.Duration, error) {
	s, err := ort.NewSession(model, p.Input.Name, p.Input.Shape, p.Outputs[0].Name, p.Outputs[0].Shape,
		ort.SessionOptions{IntraOpThreads: threads, InterOpThreads: 1})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	ds := make([]time.Duration, 0, runs)
	for i := range warmup + runs {
		start := time.Now()
		if err := s.Run(); err != nil {
			return 0, err
		}
		if i >= warmup {
			ds = append(ds, time.Since(start))
		}
	}
	return slices.Min(ds), nil
}

// BenchmarkLeaveOneModelOut profiles the zoo and the test models on this
// machine (one profiled session per model, batch and thread count, and a
// plain one timed for the latency to predict), then scores the per-operator
// cost model with each model held out in turn: it reports the MAPE in
// percent and the share of configurations within ±10%. With -v it logs
// every configuration.
func BenchmarkLeaveOneModelOut(b *testing.B) {
	samples := cachedSamples(b)
	if samples == nil {
		samples = profileSamples(b, lomoModels(b))
	}
	if path := os.Getenv(samplesVar); path != "" {
		writeSamples(b, path, samples)
	}
	b.ResetTimer()
	var sc opcost.Scores
	for range b.N {
		var err error
		if sc, err = opcost.LeaveOneModelOut(samples); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for _, c := range sc.Configs {
		b.Logf("%-9s threads %d batch %2d: measured %10v predicted %10v (%+.0f%%)", c.Model, c.Threads, c.Batch,
			c.Latency.Round(time.Microsecond), c.Predicted.Round(time.Microsecond), 100*c.Err())
	}
	b.ReportMetric(sc.MAPE, "MAPE%")
	b.ReportMetric(100*sc.Within10, "within10%")
	// One thread apart: the two-core machine's other work disturbs a
	// two-thread run far more.
	var one []opcost.Scored
	for _, c := range sc.Configs {
		if c.Threads == 1 {
			one = append(one, c)
		}
	}
	one1 := opcost.Summarize(one)
	b.ReportMetric(one1.MAPE, "MAPE-1thread%")
	b.ReportMetric(100*one1.Within10, "within10-1thread%")
}

// unoptimizedVar set to 1 profiles the graphs unoptimised, node for node,
// to compare that mapping of kernels to nodes with the optimised one's;
// the latency to predict is still the optimised graph's.
const unoptimizedVar = "OPCOST_UNOPTIMIZED"

// samplesVar names a JSON file that keeps the benchmark's samples: read
// where it exists, so that a change to the cost model is scored on the
// same measurements; written where it does not.
const samplesVar = "OPCOST_SAMPLES"

func cachedSamples(tb testing.TB) []opcost.Sample {
	path := os.Getenv(samplesVar)
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	var s []opcost.Sample
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return s
}

func writeSamples(tb testing.TB, path string, s []opcost.Sample) {
	if _, err := os.Stat(path); err == nil {
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// profileSamples profiles every model at batch 1, 4 and 16 on one and two
// threads.
func profileSamples(tb testing.TB, models map[string][]byte) []opcost.Sample {
	initORT(tb)
	names := slices.Sorted(maps.Keys(models))
	var samples []opcost.Sample
	for _, name := range names {
		g, err := onnxgraph.Parse(models[name])
		if err != nil {
			tb.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			for _, batch := range []int{1, 4, 16} {
				nt, err := Profile(g, models[name], 0, Run{Batch: batch, Threads: threads, Warmup: 2, Runs: 5,
					Unoptimized: os.Getenv(unoptimizedVar) == "1"}, tb.TempDir())
				if err != nil {
					tb.Fatal(err)
				}
				lat, err := timeRuns(nt.Pass, models[name], threads, 2, 9)
				if err != nil {
					tb.Fatal(err)
				}
				samples = append(samples, opcost.Sample{Model: name, Batch: batch, Threads: threads,
					Ops: opcost.OpsOf(nt.Pass, nt), Latency: lat})
			}
		}
	}
	return samples
}
