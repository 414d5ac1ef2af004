package profile

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

func TestValidateNamesKeys(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"unknown model", func(c *Config) { c.Models = profilespec.ZooModels("gpt") }, "profile.models[0]: unknown model \"gpt\"; the zoo has"},
		{"a file named as the zoo's", func(c *Config) { c.Models = []Model{{Name: "vit", File: "v.onnx"}} }, `profile.models[0].name: "vit" is a zoo model's name`},
		{"a file of a reserved name", func(c *Config) { c.Models = []Model{{Name: "matmul", File: "m.onnx"}} }, `profile.models[0].name: "matmul" is reserved`},
		{"a file of a bad name", func(c *Config) { c.Models = []Model{{Name: "my net", File: "m.onnx"}} }, `profile.models[0].name: "my net" is not a valid name`},
		{"a batch axis for the zoo", func(c *Config) { c.Models = []Model{{Name: "mlp", BatchAxis: new(1)}} }, "profile.models[0].batch_axis: is for a model read from a file"},
		{"a negative batch axis", func(c *Config) { c.Models = []Model{{Name: "m", File: "m.onnx", BatchAxis: new(-1)}} }, "profile.models[0].batch_axis: must be an axis"},
		{"a model twice", func(c *Config) { c.Models = []Model{{Name: "m", File: "a.onnx"}, {Name: "m", File: "b.onnx"}} }, "profile.models[1]: lists m twice"},
		{"batch sizes of no model", func(c *Config) { c.ModelBatchSizes = map[string][]int{"m": {1}} }, `profile.model_batch_sizes.m: unknown model "m"`},
		{"no models", func(c *Config) { c.Models = nil }, "profile.models: must list"},
		{"bad precision", func(c *Config) { c.Precisions = []string{"int8"} }, "profile.precisions[0]"},
		{"zero batch", func(c *Config) { c.BatchSizes = []int{1, 0} }, "profile.batch_sizes[1]"},
		{"duplicate batch", func(c *Config) { c.BatchSizes = []int{4, 4} }, "profile.batch_sizes: lists 4 twice"},
		{"no threads", func(c *Config) { c.Threads = nil }, "profile.threads"},
		{"min over repeats", func(c *Config) { c.MinRepeats = 50 }, "profile.min_repeats"},
		{"no time", func(c *Config) { c.MaxTime = 0 }, "profile.max_time"},
		{"contention model", func(c *Config) { c.Contention.Models = []string{"vit", "x"} }, `profile.contention.models[1]: unknown model "x"`},
		{"no contention models", func(c *Config) { c.Contention.Models = nil }, "profile.contention.models: must list at least one model"},
		{"duplicate contention model", func(c *Config) { c.Contention.Models = []string{"vit", "mlp", "vit"} }, "profile.contention.models[2]: lists vit twice"},
		{"no contention rounds", func(c *Config) { c.Contention.Rounds = 0 }, "profile.contention.rounds: must be 1 to 100, got 0"},
		{"empty profile", func(c *Config) { c.Measure = false }, "profile.measure"},
		{"import type", func(c *Config) { c.Import = "gpu.json" }, "profile.import"},
		{"unknown provider", func(c *Config) { c.Provider = "rocm" }, `profile.provider: unknown execution provider "rocm"; want cpu or cuda`},
		{"cpu named otherwise", func(c *Config) { c.Device = "h100" }, `profile.device: must be cpu (or empty) for provider cpu, got "h100"`},
		{"gpu named cpu", func(c *Config) { c.Provider, c.Device = ProviderCUDA, "cpu" }, "profile.device: names this machine's cores"},
		{"gpu name not an identifier", func(c *Config) { c.Provider, c.Device = ProviderCUDA, "a|b" }, `profile.device: "a|b" is not a valid name`},
		{"negative gpu", func(c *Config) { c.Provider, c.GPU = ProviderCUDA, -1 }, "profile.gpu: must be in [0, 255], got -1"},
		{"serving batch 0", func(c *Config) { c.Serving.BatchSizes = []int{1, 0} }, "profile.serving.batch_sizes[1]: must be in [1, 1024], got 0"},
		{"serving batch past placementnet's", func(c *Config) { c.Serving.BatchSizes = []int{2048} }, "profile.serving.batch_sizes[0]: must be in [1, 1024], got 2048"},
		{"serving batch twice", func(c *Config) { c.Serving.BatchSizes = []int{1, 8, 8} }, "profile.serving.batch_sizes: lists 8 twice"},
		{"serving without calls", func(c *Config) { c.Serving.Calls = 0 }, "profile.serving.calls: must be in [1, 1000000] while serving.batch_sizes lists a size, got 0"},
		{"operators batch 0", func(c *Config) { c.Operators.BatchSizes = []int{0} }, "profile.operators.batch_sizes[0]: must be in [1, 4096], got 0"},
		{"operators batch twice", func(c *Config) { c.Operators.BatchSizes = []int{4, 4} }, "profile.operators.batch_sizes: lists 4 twice"},
		{"operators without runs", func(c *Config) { c.Operators = Operators{BatchSizes: []int{1}} }, "profile.operators.runs: must be in [1, 1000]"},
		{"operators on a gpu", func(c *Config) { c.Provider, c.Operators.BatchSizes = ProviderCUDA, []int{1} }, "profile.operators.batch_sizes: times each node on the CPU provider only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	off := DefaultConfig()
	off.Serving = Serving{}
	if err := off.Validate(); err != nil {
		t.Errorf("serving off (no batch sizes, no calls): %v", err)
	}
}

func TestSummarizeByHand(t *testing.T) {
	var samples []Sample
	// 1, 2, ..., 10 ms for resnet18 batch 2: mean 5.5 ms; type-4 quantiles
	// x(np) interpolated: p50 = x(5) = 5, p95 = x(9.5) = 9.5, p99 = 9.9 ms.
	for i := range 10 {
		samples = append(samples, Sample{Kind: KindInference, Backend: "onnxruntime", Provider: "CPU", Device: "cpu",
			Model: "resnet18", Precision: FP32, Batch: 2, Threads: 1, Concurrency: 1, Repeat: int32(i),
			LatencyS: float64(i+1) / 1000, Source: SourceMeasured})
	}
	// A 4 ms matmul of n = 100: 2·10⁶ FLOP / 4 ms = 0.5 GFLOP/s.
	samples = append(samples, Sample{Kind: KindMatMul, Backend: "gonum", Provider: "go", Device: "cpu", Model: "matmul",
		Precision: FP32, Batch: 100, Threads: 2, Concurrency: 1, LatencyS: 0.004, Source: SourceMeasured})
	sums := summarize(samples, catalog.Zoo())
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want 2", len(sums))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	s := sums[0]
	if s.Model != "resnet18" {
		s, sums[1] = sums[1], s
	}
	near("mean", s.MeanS, 0.0055)
	near("p50", s.P50S, 0.005)
	near("p95", s.P95S, 0.0095)
	near("p99", s.P99S, 0.0099)
	near("stddev", s.StddevS, 0.0030276503540974917) // sample stddev of 1..10 ms
	near("spread", s.Spread, 0.0095/0.005)
	near("samples/s", s.SamplesPerS, 2/0.0055) // from the mean
	r18, _ := catalog.Zoo().Lookup("resnet18")
	near("gflops", s.GFLOPS, float64(r18.FLOPsPerSample)*2/0.005/1e9) // at the median
	mm := sums[1]
	near("matmul gflops", mm.GFLOPS, 0.5)
	if mm.SamplesPerS != 0 || mm.Count != 1 || !mm.Supported {
		t.Errorf("matmul summary = %+v", mm)
	}
}

func TestTimeRunsStopsAtTheBudget(t *testing.T) {
	calls := 0
	slow := func() error { calls++; time.Sleep(20 * time.Millisecond); return nil }
	lat, err := timeRuns(context.Background(), timing{warmup: 2, repeats: 100, minRepeats: 3, maxRepeats: 100, maxTime: 30 * time.Millisecond}, slow)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 3 || calls != 5 {
		t.Errorf("got %d timed runs after %d calls, want 3 after 5 (2 warm-up)", len(lat), calls)
	}
	for _, l := range lat {
		if l < 0.019 {
			t.Errorf("latency %v s for a 20 ms run", l)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := timeRuns(ctx, exactly(0, 5), slow); err != context.Canceled {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestTogetherKeepsEverySessionBusy: sessions of unequal run times each
// get their timed runs, and every session runs on until the last timed
// run of any has ended, so that none is timed with fewer sessions beside
// it than it is said to have; an error names its session and ends all.
func TestTogetherKeepsEverySessionBusy(t *testing.T) {
	type span struct{ start, end time.Time }
	tests := []struct {
		name            string
		k, warmup, reps int
		runTime         func(i int) time.Duration
	}{
		{"unequal", 3, 1, 4, func(i int) time.Duration { return time.Duration(1+4*i) * time.Millisecond }},
		{"equal", 2, 2, 3, func(int) time.Duration { return 2 * time.Millisecond }},
		{"alone", 1, 0, 5, func(int) time.Duration { return time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			runs := make([][]span, tt.k)
			warmups := make([]int, tt.k)
			for i := range warmups {
				warmups[i] = tt.warmup
			}
			lat, err := together(context.Background(), warmups, tt.reps, func(i int) error {
				s := time.Now()
				time.Sleep(tt.runTime(i))
				mu.Lock()
				runs[i] = append(runs[i], span{s, time.Now()})
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			lastTimedEnd := time.Time{}
			for i := range tt.k {
				if len(lat[i]) != tt.reps {
					t.Fatalf("session %d: %d timed runs, want %d", i, len(lat[i]), tt.reps)
				}
				if len(runs[i]) < tt.warmup+tt.reps {
					t.Fatalf("session %d ran %d times, fewer than %d warm-up and timed", i, len(runs[i]), tt.warmup+tt.reps)
				}
				for _, l := range lat[i] {
					if l < tt.runTime(i).Seconds() {
						t.Errorf("session %d: a timed run of %v took %v s", i, tt.runTime(i), l)
					}
				}
				if e := runs[i][tt.warmup+tt.reps-1].end; e.After(lastTimedEnd) {
					lastTimedEnd = e
				}
			}
			for i := range tt.k {
				if end := runs[i][len(runs[i])-1].end; end.Before(lastTimedEnd) {
					t.Errorf("session %d stopped %v before the last timed run ended", i, lastTimedEnd.Sub(end))
				}
			}
			if tt.k == 1 && len(runs[0]) != tt.warmup+tt.reps {
				t.Errorf("a session alone ran %d times, want exactly %d", len(runs[0]), tt.warmup+tt.reps)
			}
		})
	}
	boom := errors.New("boom")
	_, err := together(context.Background(), []int{0, 0, 0}, 2, func(i int) error {
		time.Sleep(time.Millisecond)
		if i == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "session 2 of 3") {
		t.Errorf("a failing session: err = %v, want boom naming session 2 of 3", err)
	}
}

// TestTimingDone: a configuration runs repeats times and more until
// min_time, at most max_repeats times, and stops at max_time once it
// has min_repeats runs.
func TestTimingDone(t *testing.T) {
	tm := timing{repeats: 20, minRepeats: 3, maxRepeats: 1000, minTime: 50 * time.Millisecond, maxTime: time.Second}
	ms := time.Millisecond
	tests := []struct {
		n    int
		used time.Duration
		want bool
	}{
		{19, 60 * ms, false},      // too few runs
		{20, 60 * ms, true},       // enough runs, enough time
		{20, 10 * ms, false},      // a fast model: more runs...
		{999, 49 * ms, false},     // ...
		{1000, 49 * ms, true},     // ...up to max_repeats
		{2, 5000 * ms, false},     // a slow model: at least min_repeats...
		{3, 1000 * ms, true},      // ...then max_time ends it
		{3, 999 * ms, false},      //
		{0, 0, false},             //
		{1000, 0, true},           //
		{19, 50 * ms, false},      // min_time alone is not enough
		{20, 1000 * ms, true},     //
		{10, 2000 * ms, true},     //
		{2, 2 * time.Hour, false}, //
	}
	for _, tt := range tests {
		if got := tm.done(tt.n, tt.used); got != tt.want {
			t.Errorf("done(%d runs, %v) = %v, want %v", tt.n, tt.used, got, tt.want)
		}
	}
	if ex := exactly(1, 7); ex.done(6, time.Hour) || !ex.done(7, 0) {
		t.Error("exactly(1, 7) does not stop at 7 runs")
	}
}

func TestImport(t *testing.T) {
	header := "kind,backend,provider,device,model,precision,batch,threads,concurrency,latency_s\n"
	good := header + "inference,tensorrt,TensorrtExecutionProvider,gpu:a100,resnet50,fp16,8,1,1,0.004\n"
	tests := []struct {
		name, csv, want string
	}{
		{"good", good, ""},
		{"missing column", "kind,backend\ninference,x\n", `header lacks column "provider"`},
		{"bad kind", header + "training,x,p,d,m,fp32,1,1,1,0.1\n", "row 1, column kind"},
		{"bad precision", good + "inference,x,p,d,m,int8,1,1,1,0.1\n", "row 2, column precision"},
		{"bad batch", header + "inference,x,p,d,m,fp32,zero,1,1,0.1\n", "row 1, column batch: want an integer"},
		{"negative latency", header + "inference,x,p,d,m,fp32,1,1,1,-2\n", "row 1, column latency_s"},
		{"nan latency", header + "inference,x,p,d,m,fp32,1,1,1,NaN\n", "row 1, column latency_s"},
		{"latency 1e300", header + "inference,x,p,d,m,fp32,1,1,1,1e300\n", "row 1, column latency_s: must be from 1e-09 s to 3600 s"},
		{"device with a pipe", good + "inference,x,p,a|b,m,fp32,1,1,1,0.1\n", `row 2, column device: "a|b" is not a valid name`},
		{"serving row of another model", good + "serving,onnxruntime,CPUExecutionProvider,cpu,mlp,fp32,1,1,1,6e-6\n",
			`row 2, column model: a serving row times the placement network, want "placement", got "mlp"`},
		{"serving row on two threads", good + "serving,onnxruntime,CPUExecutionProvider,cpu,placement,fp32,4,2,1,9e-6\n",
			"row 2, column threads: a serving row times the serving path's one intra-op thread, got 2"},
		{"empty", "", "empty file"},
		{"no rows", header, "no rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpu.csv")
			os.WriteFile(path, []byte(tt.csv), 0o644)
			rows, err := readImport(path)
			if tt.want == "" {
				if err != nil || len(rows) != 1 || rows[0].Source != "import:gpu.csv" || rows[0].Device != "gpu:a100" || rows[0].Batch != 8 {
					t.Fatalf("readImport = %+v, %v", rows, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want it to name %s and contain %q", err, path, tt.want)
			}
		})
	}
	// The same rows as Parquet, and a Parquet file lacking a column.
	dir := t.TempDir()
	rows, _ := readImport(writeCSV(t, dir, good))
	pq := filepath.Join(dir, "gpu.parquet")
	if err := parquetio.WriteFile(pq, rows, nil); err != nil {
		t.Fatal(err)
	}
	back, err := readImport(pq)
	if err != nil || len(back) != 1 || back[0].LatencyS != 0.004 || back[0].Source != "import:gpu.parquet" {
		t.Errorf("Parquet import = %+v, %v", back, err)
	}
	type partial struct {
		Kind string `parquet:"kind"`
	}
	bad := filepath.Join(dir, "partial.parquet")
	parquetio.WriteFile(bad, []partial{{"inference"}}, nil)
	if _, err := readImport(bad); err == nil || !strings.Contains(err.Error(), `lacks column "backend"`) {
		t.Errorf("Parquet lacking columns: err = %v", err)
	}
	// Serving rows measured on another machine come in as any row does.
	serving, err := readImport(writeCSV(t, dir, header+
		"serving,onnxruntime,CPUExecutionProvider,host-b,placement,fp32,1,1,1,5.5e-6\n"+
		"serving,onnxruntime,CPUExecutionProvider,host-b,placement,fp32,32,1,1,2.1e-5\n"))
	if err != nil || len(serving) != 2 || serving[0].Kind != KindServing || serving[1].Batch != 32 || serving[1].Source != "import:gpu.csv" {
		t.Errorf("serving rows imported = %+v, %v", serving, err)
	}
	garbage := filepath.Join(dir, "garbage.parquet")
	os.WriteFile(garbage, []byte("PAR1 this is not parquet PAR1"), 0o644)
	if _, err := readImport(garbage); err == nil || !strings.Contains(err.Error(), "garbage.parquet") {
		t.Errorf("garbage Parquet: err = %v", err)
	}
}

func writeCSV(t *testing.T, dir, content string) string {
	path := filepath.Join(dir, "gpu.csv")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// library finds the onnxruntime that make setup installs; without it the
// measuring tests skip, unless REQUIRE_ONNXRUNTIME=1 (as make test sets).
func library(t *testing.T) Library {
	t.Helper()
	path, src := orttest.Library(t)
	return Library{Path: path, Source: src}
}

func TestDeviceName(t *testing.T) {
	for _, tt := range []struct {
		provider, device, want string
	}{
		{ProviderCPU, "", "cpu"},
		{ProviderCPU, "cpu", "cpu"},
		{ProviderCUDA, "", "gpu"},
		{ProviderCUDA, "h200", "h200"},
	} {
		c := DefaultConfig()
		c.Provider, c.Device = tt.provider, tt.device
		if got := c.DeviceName(); got != tt.want {
			t.Errorf("DeviceName() of provider %s, device %q = %q, want %q", tt.provider, tt.device, got, tt.want)
		}
	}
}

// TestProfileOnCUDA measures a tiny profile on the CUDA provider where
// this machine has one (a GPU machine with the CUDA build of onnxruntime's
// provider beside the library), and checks that every row is the GPU's;
// elsewhere it checks that the stage refuses, naming the provider and the
// library, rather than measuring the CPU under the GPU's name.
func TestProfileOnCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("measures inference")
	}
	lib := library(t)
	cfg := DefaultConfig()
	cfg.Provider, cfg.Device = ProviderCUDA, "gpu0"
	cfg.Models = profilespec.ZooModels("mlp", "resnet18")
	cfg.BatchSizes = []int{1, 8}
	cfg.ModelBatchSizes = map[string][]int{"mlp": {1, 8}}
	cfg.Threads = []int{1}
	cfg.Warmup, cfg.Repeats, cfg.MinRepeats, cfg.MinTime, cfg.MaxRepeats, cfg.MaxTime = 2, 5, 3, 0, 5, time.Second
	cfg.MatMul = MatMul{Sizes: []int{256}, Repeats: 3}
	cfg.Contention = Contention{Models: []string{"resnet18"}, Batch: 1, Sessions: []int{1, 2}, Repeats: 5, Rounds: 1}
	dir := t.TempDir()
	notes := map[string]string{}
	err := Run(context.Background(), cfg, 1, lib, "", Output{Dir: dir, Metadata: map[string]string{parquetio.KeyStage: "profile"}, Notes: notes})
	if _, terr := ort.Init(lib.Path, lib.Source); terr != nil {
		t.Fatal(terr)
	}
	if probe := ort.ProbeProvider(ort.CUDA); probe != nil {
		want := "profile.provider is cuda, but onnxruntime " + ort.Version() + " at " + lib.Path + " cannot use it"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run on CUDA without it = %v, want an error containing %q", err, want)
		}
		if _, serr := os.Stat(filepath.Join(dir, SamplesFile)); serr == nil {
			t.Errorf("a refused CUDA profile wrote %s", SamplesFile)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	samples, err := parquetio.ReadAll[Sample](filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range samples {
		kinds[s.Kind]++
		if s.Device != "gpu0" || s.Provider != ort.CUDA || s.Backend != backendORT {
			t.Fatalf("row %+v: want device gpu0 on %s through onnxruntime", s, ort.CUDA)
		}
	}
	if kinds[KindInference] == 0 || kinds[KindMatMul] == 0 || kinds[KindContention] == 0 || kinds[KindServing] != 0 {
		t.Errorf("rows per kind %v: want inference, matmul and contention rows, and no serving rows (the host's cores are not the GPU)", kinds)
	}
	sums, err := parquetio.ReadAll[Summary](filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Kind == KindInference && !s.Supported {
			t.Errorf("%s %s batch %d unsupported on CUDA: %s", s.Model, s.Precision, s.Batch, s.Note)
		}
	}
	if notes["gpu"] == "" || notes["gpu"] == "unknown" {
		t.Errorf("notes[gpu] = %q, want nvidia-smi's description", notes["gpu"])
	}
}

// TestMeasuredLatenciesFollowPhysics runs a tiny real profile and checks
// the orderings any honest measurement must show.
func TestMeasuredLatenciesFollowPhysics(t *testing.T) {
	if testing.Short() {
		t.Skip("measures inference")
	}
	lib := library(t)
	cfg := DefaultConfig()
	cfg.Models = profilespec.ZooModels("mlp", "resnet18", "resnet50")
	cfg.Precisions = []string{FP32}
	cfg.BatchSizes = []int{1, 4}
	cfg.ModelBatchSizes = map[string][]int{"mlp": {1, 4}}
	cfg.Threads = []int{1}
	cfg.Warmup, cfg.Repeats, cfg.MinRepeats, cfg.MaxTime = 1, 3, 3, time.Second
	// The mlp runs in microseconds: it runs on to min_time, up to
	// max_repeats; the ResNets are done after repeats, as long as three
	// runs take min_time (at 50 ms, a ResNet-18 at batch 1 can need a
	// fourth run).
	cfg.MinTime, cfg.MaxRepeats = 10*time.Millisecond, 40
	cfg.MatMul = MatMul{Sizes: []int{64, 256}, Repeats: 3}
	cfg.Contention = Contention{Models: []string{"mlp"}, Batch: 1, Sessions: []int{1, 2}, Repeats: 5, Rounds: 2}
	cfg.Serving = Serving{BatchSizes: []int{1, 32}, Calls: 300}
	dir := t.TempDir()
	notes := map[string]string{}
	// The progress: estimated work (work.go), rising within each model's
	// series run by run, ending at its total.
	var reports, last, total int64
	progress := func(done, all int64) {
		if done <= last || done > all || total != 0 && all != total {
			t.Errorf("progress %d of %d after %d of %d", done, all, last, total)
		}
		reports, last, total = reports+1, done, all
	}
	err := Run(context.Background(), cfg, 1, lib, "", Output{Dir: dir, Metadata: map[string]string{parquetio.KeyStage: "profile"}, Notes: notes, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	// One report a measurement would be 3 series, 4 contention rounds,
	// 2 serving sizes and 4 products; the ResNets' runs add their own.
	if last != total || reports <= 3+4+2+4+2*2*(1+3) {
		t.Errorf("progress ended at %d of %d after %d reports: want the total, and a report for each ResNet run", last, total, reports)
	}
	sums, err := parquetio.ReadAll[Summary](filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := parquetio.ReadAll[Sample](filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	p50 := map[string]float64{}
	for _, s := range sums {
		if s.Kind == KindInference {
			p50[s.Model+"/"+string(rune('0'+s.Batch))] = s.P50S
			want := int64(3)
			if s.Model == "mlp" {
				want = 40
			}
			if s.Count != want || s.Spread < 1 {
				t.Errorf("%s batch %d: count %d spread %v", s.Model, s.Batch, s.Count, s.Spread)
			}
		}
	}
	perSample := func(m string, b int) float64 { return p50[m+"/"+string(rune('0'+b))] / float64(b) }
	if !(perSample("resnet50", 1) > 1.3*perSample("resnet18", 1)) {
		t.Errorf("resnet50 %.1f ms/sample is not clearly slower than resnet18 %.1f ms", 1e3*perSample("resnet50", 1), 1e3*perSample("resnet18", 1))
	}
	if !(perSample("resnet18", 1) > 50*perSample("mlp", 1)) {
		t.Errorf("resnet18 %.3f ms is not far slower than the mlp %.3f ms", 1e3*perSample("resnet18", 1), 1e3*perSample("mlp", 1))
	}
	for _, m := range []string{"resnet18", "resnet50"} {
		if !(p50[m+"/4"] > 2*p50[m+"/1"]) {
			t.Errorf("%s: batch 4 takes %.1f ms, batch 1 %.1f ms: latency should grow with batch", m, 1e3*p50[m+"/4"], 1e3*p50[m+"/1"])
		}
	}
	var gpuRows, matmul, contention int
	for _, s := range sums {
		switch s.Kind {
		case KindProvider:
			if !s.Supported && strings.Contains(s.Note, "no GPU numbers") {
				gpuRows++
			}
		case KindMatMul:
			if s.GFLOPS <= 0 {
				t.Errorf("matmul %s n=%d: %v GFLOP/s", s.Backend, s.Batch, s.GFLOPS)
			}
			matmul++
		case KindContention:
			contention++
		}
	}
	if gpuRows == 0 || matmul != 4 || contention != 2 {
		t.Errorf("summary has %d GPU-absent rows, %d matmul, %d contention rows", gpuRows, matmul, contention)
	}
	// The serving path: every call a valid row, and 32 decisions in one
	// call take longer than one, if far less than 32 times as long.
	served := map[int32]*Summary{}
	for i, s := range sums {
		if s.Kind == KindServing {
			served[s.Batch] = &sums[i]
		}
	}
	for _, s := range samples {
		if err := s.Validate(); s.Kind == KindServing && err != nil {
			t.Errorf("serving row %+v: %v", s, err)
		}
	}
	if one, many := served[1], served[32]; one == nil || many == nil || len(served) != 2 || one.Count != 300 || many.Count != 300 {
		t.Errorf("serving summary rows %v: want batches 1 and 32, 300 calls each", served)
	} else if !(many.P50S > one.P50S && many.P50S < 32*one.P50S) {
		t.Errorf("serving: a call of 32 decisions took %.2f µs at the median, one %.2f µs: want more, and less than 32 times as much", 1e6*many.P50S, 1e6*one.P50S)
	}
	// Two rounds of 1 and 2 sessions, 5 runs each: every session's runs
	// kept, each (sessions, repeat) once.
	runs := map[[2]int32]int{}
	for _, s := range samples {
		if s.Kind == KindContention {
			runs[[2]int32{s.Concurrency, s.Repeat}]++
		}
	}
	for k, want := range map[int32]int{1: 2 * 1 * 5, 2: 2 * 2 * 5} {
		n := 0
		for key, c := range runs {
			if key[0] == k {
				n++
				if c != 1 {
					t.Errorf("contention %d sessions, repeat %d: %d rows, want 1", k, key[1], c)
				}
			}
		}
		if n != want {
			t.Errorf("contention %d sessions: %d runs, want %d (2 rounds)", k, n, want)
		}
	}
	// 2 models × 2 batches × 3 repeats and the mlp's 2 × 40, 2 sizes × 2
	// backends × 3, 2 rounds of 5 runs of 1 + 2 sessions, 2 serving sizes
	// × 300 calls.
	if len(samples) != 2*2*3+2*40+2*2*3+2*5*(1+2)+2*300 {
		t.Errorf("%d samples, want every timed run kept", len(samples))
	}
	for _, k := range []string{"cpu", "cores", "onnxruntime", "go", "memory"} {
		if notes[k] == "" {
			t.Errorf("machine note %q missing: %v", k, notes)
		}
	}
	meta, _, _ := digest.Footer(filepath.Join(dir, SamplesFile))
	if !strings.HasPrefix(meta["mlsched.machine.onnxruntime"], "1.24") || meta[parquetio.KeyStage] != "profile" {
		t.Errorf("samples footer = %v", meta)
	}
	for _, f := range []string{"mlp.onnx", "resnet18.onnx", "resnet50.onnx"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("model file: %v", err)
		}
	}
	checkMachine(t, dir, []string{"before", "mlp fp32 threads 1", "resnet18 fp32 threads 1", "contention round 1",
		"resnet50 fp32 threads 1", "contention round 2", "serving path", "matmul 64", "matmul 256"})
}

// checkMachine checks a measured profile's machine.parquet: an
// observation before the first measurement and after each part, in
// order, each with sane figures.
func checkMachine(t *testing.T, dir string, during []string) {
	t.Helper()
	rows, err := parquetio.ReadAll[MachineRow](filepath.Join(dir, MachineFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.During)
	}
	if !slices.Equal(got, during) {
		t.Errorf("observed after %q, want %q", got, during)
	}
	elapsed := 0.0
	for i, r := range rows {
		// An interval too short to count ticks over has no shares.
		short := r.IntervalS < minShareInterval.Seconds()
		share := func(v float64) bool { return v >= 0 && v <= 1 || short && math.IsNaN(v) }
		if int(r.Seq) != i || r.ElapsedS < elapsed || r.IntervalS <= 0 || r.Cores < 1 || !(r.Load1 >= 0 && r.Load5 >= 0 && r.Load15 >= 0) ||
			!share(r.OthersCPU) || !share(r.Steal) || !(r.SelfCPU >= 0) || !(r.ReferenceS > 0 && r.ReferenceS < 1) {
			t.Errorf("machine row %d = %+v: want loads >= 0, shares in [0, 1] and a reference timing", i, r)
		}
		elapsed = r.ElapsedS
	}
	if len(rows) > 0 && rows[0].IntervalS < quietWait.Seconds() {
		t.Errorf("the first observation covers %.3f s, want the idle wait of %v", rows[0].IntervalS, quietWait)
	}
}

// TestImportAloneObservesNothing: a profile that measures nothing has no
// machine to describe, and writes no machine.parquet.
func TestImportAloneObservesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Measure = false
	csv := writeCSV(t, t.TempDir(), "kind,backend,provider,device,model,precision,batch,threads,concurrency,latency_s\n"+
		"inference,onnxruntime,CUDAExecutionProvider,h200,mlp,fp32,1,1,1,0.0001\n")
	if err := Run(context.Background(), cfg, 1, Library{}, csv, Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, SamplesFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, MachineFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an import alone wrote %s (stat: %v)", MachineFile, err)
	}
}

// TestContentionModels checks how the contention rounds mix the models:
// over n² rounds, two sessions meet every ordered pair of n models once.
func TestContentionModels(t *testing.T) {
	for _, models := range [][]string{{"resnet18"}, {"mlp", "vit"}, {"resnet18", "resnet50", "vit"}, {"mlp", "resnet18", "resnet50", "vit"}} {
		c := Contention{Models: models}
		n := len(models)
		pairs := map[[2]string]int{}
		for r := range n * n {
			pairs[[2]string{c.ModelOf(r, 0), c.ModelOf(r, 1)}]++
		}
		for _, a := range models {
			for _, b := range models {
				if got := pairs[[2]string{a, b}]; got != 1 {
					t.Errorf("%v: sessions 0 and 1 run %s and %s in %d of %d rounds, want 1", models, a, b, got, n*n)
				}
			}
		}
		if got := c.ModelOf(5, 3); !slices.Contains(models, got) {
			t.Errorf("%v: ModelOf(5, 3) = %q", models, got)
		}
	}
}
