package generate

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/spec/generatespec"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/memstat"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
)

var testMeta = map[string]string{
	parquetio.KeyStage:    "generate",
	parquetio.KeyVersion:  "test-version",
	parquetio.KeyUpstream: "",
}

// smallConfig is DefaultConfig with job counts small enough for unit tests
// but spanning several chunks and pages.
func smallConfig(train, eval int64) Config {
	c := DefaultConfig()
	c.Train.Jobs, c.Eval.Jobs = train, eval
	return c
}

// run runs the stage into a fresh directory and returns it.
func run(t *testing.T, cfg Config, seed int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := Run(context.Background(), cfg, seed, catalog.Zoo(), Output{Dir: dir, Metadata: testMeta}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return dir
}

// digests returns the raw SHA-256 of every output file.
func digests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{JobsFile(WorkloadTrain), JobsFile(WorkloadEval), StatsFile} {
		d, err := digest.File(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = d.SHA256
	}
	return out
}

func readJobs(t *testing.T, dir, workload string) []Job {
	t.Helper()
	jobs, err := parquetio.ReadAll[Job](filepath.Join(dir, JobsFile(workload)))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestDeterminism(t *testing.T) {
	cfg := smallConfig(40_000, 20_000)
	base := digests(t, run(t, cfg, 7))

	trainSeed := cfg
	trainSeed.Train.Seed = 99
	poisson := cfg
	poisson.Train.Arrival.Process = ProcessPoisson

	tests := []struct {
		name string
		cfg  Config
		seed int64
		// same lists the files that must be byte-identical to base; all
		// others must differ.
		same []string
	}{
		{"same config and seed", cfg, 7, []string{JobsFile(WorkloadTrain), JobsFile(WorkloadEval), StatsFile}},
		{"other global seed", cfg, 8, nil},
		{"other train seed", trainSeed, 7, []string{JobsFile(WorkloadEval)}},
		{"other train process", poisson, 7, []string{JobsFile(WorkloadEval)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := digests(t, run(t, tt.cfg, tt.seed))
			for name, sum := range got {
				if want := slices.Contains(tt.same, name); (sum == base[name]) != want {
					t.Errorf("%s identical to the base run = %v, want %v", name, sum == base[name], want)
				}
			}
		})
	}
}

// TestProvenanceKeepsContent checks early cutoff end to end: the same jobs
// written under another stage version differ in raw bytes but not in the
// content digest the runner compares.
func TestProvenanceKeepsContent(t *testing.T) {
	cfg := smallConfig(20_000, 10_000)
	a := run(t, cfg, 4)
	b := t.TempDir()
	meta := maps.Clone(testMeta)
	meta[parquetio.KeyVersion] = "another-version"
	if err := Run(context.Background(), cfg, 4, catalog.Zoo(), Output{Dir: b, Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{JobsFile(WorkloadTrain), JobsFile(WorkloadEval), StatsFile} {
		da, err := digest.File(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		db, err := digest.File(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if da.SHA256 == db.SHA256 || da.Content != db.Content {
			t.Errorf("%s: SHA256 equal = %v, Content equal = %v; want false, true", name, da.SHA256 == db.SHA256, da.Content == db.Content)
		}
	}
}

func TestRunErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	err := Run(context.Background(), smallConfig(10, 10), 1, catalog.Zoo(), Output{Dir: missing})
	if err == nil || !strings.Contains(err.Error(), "generate: ") || !strings.Contains(err.Error(), missing) {
		t.Errorf("Run into a missing directory = %v, want an error naming it", err)
	}
	cfg := smallConfig(0, 10)
	err = Run(context.Background(), cfg, 1, catalog.Zoo(), Output{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "generate.train.jobs: must be at least 1, got 0") {
		t.Errorf("Run with zero train jobs = %v, want the validation error", err)
	}
}

// TestArrivalProcessKeepsJobs checks the separate random streams: changing
// only the arrival process changes arrival times but not what the jobs are.
func TestArrivalProcessKeepsJobs(t *testing.T) {
	cfg := smallConfig(20_000, 1)
	a := readJobs(t, run(t, cfg, 3), WorkloadTrain)
	cfg.Train.Arrival.Process = ProcessBursty
	b := readJobs(t, run(t, cfg, 3), WorkloadTrain)
	for i := range a {
		x, y := a[i], b[i]
		if x.ArrivalS == y.ArrivalS {
			t.Fatalf("job %d arrives at %v under both processes", i, x.ArrivalS)
		}
		x.ArrivalS, x.DeadlineS, y.ArrivalS, y.DeadlineS = 0, 0, 0, 0
		if x != y {
			t.Fatalf("job %d differs beyond its times: %+v vs %+v", i, a[i], b[i])
		}
	}
}

// TestJobs checks every row against the model: ids, ordering, the derived
// columns recomputed from the catalog, and that the statistics file agrees
// with the rows.
func TestJobs(t *testing.T) {
	cfg := smallConfig(30_000, 20_000)
	cfg.Holdout.Jobs = 10_000
	dir := run(t, cfg, 5)
	stats, err := parquetio.ReadAll[Stat](filepath.Join(dir, StatsFile))
	if err != nil {
		t.Fatal(err)
	}
	statValue := map[[3]string]float64{}
	for _, s := range stats {
		statValue[[3]string{s.Workload, s.Statistic, s.Label}] = s.Value
	}
	// Each workload's job ids start at its ordinal's multiple of MaxJobs,
	// so that no two workloads share a job.
	for k, w := range []string{WorkloadTrain, WorkloadEval, generatespec.WorkloadHoldout} {
		jobs := readJobs(t, dir, w)
		wantN := []int64{cfg.Train.Jobs, cfg.Eval.Jobs, cfg.Holdout.Jobs}[k]
		ordinal := []int64{0, 1, generatespec.HoldoutOrdinal}[k]
		if int64(len(jobs)) != wantN {
			t.Fatalf("%s: %d jobs, want %d", w, len(jobs), wantN)
		}
		counts := map[[2]string]float64{}
		prev := 0.0
		for i, j := range jobs {
			if want := ordinal*MaxJobs + int64(i); j.ID != want {
				t.Fatalf("%s row %d: job_id = %d, want %d", w, i, j.ID, want)
			}
			if j.ArrivalS < prev {
				t.Fatalf("%s row %d: arrival %v before the previous %v", w, i, j.ArrivalS, prev)
			}
			prev = j.ArrivalS
			checkDerived(t, cfg, j)
			counts[[2]string{"class", j.Class}]++
			counts[[2]string{"model", j.Model}]++
			counts[[2]string{"precision", j.Precision}]++
		}
		for key, n := range counts {
			if got := statValue[[3]string{w, key[0] + "_jobs", key[1]}]; got != n {
				t.Errorf("%s: stats %s_jobs[%s] = %v, rows say %v", w, key[0], key[1], got, n)
			}
		}
		if got := statValue[[3]string{w, StatDurationS, ""}]; got != jobs[len(jobs)-1].ArrivalS {
			t.Errorf("%s: stats duration_s = %v, last arrival %v", w, got, jobs[len(jobs)-1].ArrivalS)
		}
	}
}

// checkDerived recomputes a job's derived columns from the catalog.
func checkDerived(t *testing.T, cfg Config, j Job) {
	t.Helper()
	m, ok := catalog.Zoo().Lookup(j.Model)
	if !ok || cfg.Models[j.Model] <= 0 {
		t.Fatalf("job %d: model %q is not in the mix", j.ID, j.Model)
	}
	class := cfg.Classes.Interactive
	if j.Class == ClassBatch {
		class = cfg.Classes.Batch
	} else if j.Class != ClassInteractive {
		t.Fatalf("job %d: class %q", j.ID, j.Class)
	}
	scale := 1.0
	switch j.Precision {
	case PrecisionFP16:
		scale = cfg.FP16BytesFactor
	case PrecisionFP32:
	default:
		t.Fatalf("job %d: precision %q", j.ID, j.Precision)
	}
	b := int64(j.BatchSize)
	bytes := float64(m.FootprintBytes(b)) * scale
	want := j
	want.SLOS = class.SLO.Seconds()
	want.DeadlineS = j.ArrivalS + want.SLOS
	want.MemoryMiB = bytes / (1 << 20)
	want.TaskGFLOP = float64(b*m.FLOPsPerSample) / 1e9
	want.IntensityFLOPPerByte = m.ArithmeticIntensity(b) / scale
	if b < int64(class.BatchMin) || b > int64(class.BatchMax) ||
		!near(j.SLOS, want.SLOS) || !near(j.DeadlineS, want.DeadlineS) || !near(j.MemoryMiB, want.MemoryMiB) ||
		!near(j.TaskGFLOP, want.TaskGFLOP) || !near(j.IntensityFLOPPerByte, want.IntensityFLOPPerByte) {
		t.Fatalf("job = %+v, want %+v with batch size in [%d, %d]", j, want, class.BatchMin, class.BatchMax)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// TestMixes checks the class, model, precision and batch-size frequencies
// against the configured distributions. Each count is binomial, so the
// tolerance is 5 standard errors sqrt(n·p·(1−p)).
func TestMixes(t *testing.T) {
	cfg := smallConfig(200_000, 1)
	cfg.InteractiveFraction = 0.35
	cfg.FP16Fraction = 0.6
	cfg.Models = map[string]float64{"mlp": 1, "resnet18": 0, "resnet50": 2, "vit": 5}
	cfg.Classes.Batch = Class{SLO: 2 * time.Second, BatchMin: 3, BatchMax: 20}
	jobs := readJobs(t, run(t, cfg, 11), WorkloadTrain)
	n := float64(len(jobs))

	counts := map[string]float64{}
	batchSizes := map[int32]float64{}
	batchJobs := 0.0
	for _, j := range jobs {
		counts["class="+j.Class]++
		counts["model="+j.Model]++
		counts["precision="+j.Precision]++
		if j.Class == ClassBatch {
			batchSizes[j.BatchSize]++
			batchJobs++
		}
	}
	check := func(what string, got, trials, p float64) {
		t.Helper()
		want := trials * p
		if tol := 5 * math.Sqrt(trials*p*(1-p)); math.Abs(got-want) > tol {
			t.Errorf("%s: %v of %v, want %.0f ± %.0f", what, got, trials, want, tol)
		}
	}
	check("class=interactive", counts["class=interactive"], n, 0.35)
	check("precision=fp16", counts["precision=fp16"], n, 0.6)
	check("model=mlp", counts["model=mlp"], n, 1.0/8)
	check("model=resnet50", counts["model=resnet50"], n, 2.0/8)
	check("model=vit", counts["model=vit"], n, 5.0/8)
	if counts["model=resnet18"] != 0 {
		t.Errorf("model=resnet18 drawn %v times with weight 0", counts["model=resnet18"])
	}
	span := math.Log(21.0 / 3.0)
	for b := int32(3); b <= 20; b++ {
		check("batch size "+strconv.Itoa(int(b)), batchSizes[b], batchJobs, math.Log(float64(b+1)/float64(b))/span)
	}
}

// TestReadBack reads the files with parquet-go and with Arrow's pqarrow and
// compares every value, and checks that provenance is in both footers.
func TestReadBack(t *testing.T) {
	dir := run(t, smallConfig(50_000, 30_000), 21)
	for _, w := range []string{WorkloadTrain, WorkloadEval} {
		path := filepath.Join(dir, JobsFile(w))
		jobs := readJobs(t, dir, w)
		meta, rows, err := digest.Footer(path)
		if err != nil {
			t.Fatal(err)
		}
		if rows != int64(len(jobs)) {
			t.Errorf("%s: footer rows = %d, want %d", w, rows, len(jobs))
		}
		for k, v := range testMeta {
			if meta[k] != v {
				t.Errorf("%s: footer %s = %q, want %q", w, k, meta[k], v)
			}
		}
		compareArrow(t, path, jobs)
	}
}

func compareArrow(t *testing.T, path string, jobs []Job) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("arrow: open %s: %v", path, err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	if got := kv.FindValue(parquetio.KeyVersion); got == nil || *got != testMeta[parquetio.KeyVersion] {
		t.Errorf("arrow: footer %s = %v, want %q", parquetio.KeyVersion, got, testMeta[parquetio.KeyVersion])
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow: read %s: %v", path, err)
	}
	defer tbl.Release()
	if tbl.NumRows() != int64(len(jobs)) {
		t.Fatalf("arrow: %d rows, want %d", tbl.NumRows(), len(jobs))
	}
	column := func(name string) *arrow.Chunked {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("arrow: no column %q in %v", name, tbl.Schema())
		}
		return tbl.Column(idx[0]).Data()
	}
	// values flattens a chunked column into one value per row.
	values := func(name string) []any {
		var out []any
		for _, chunk := range column(name).Chunks() {
			for i := range chunk.Len() {
				switch a := chunk.(type) {
				case *array.Int64:
					out = append(out, a.Value(i))
				case *array.Int32:
					out = append(out, a.Value(i))
				case *array.Float64:
					out = append(out, a.Value(i))
				case *array.String:
					out = append(out, a.Value(i))
				default:
					t.Fatalf("arrow: column %s has type %T", name, chunk)
				}
			}
		}
		return out
	}
	fields := []struct {
		name string
		get  func(Job) any
	}{
		{"job_id", func(j Job) any { return j.ID }},
		{"arrival_s", func(j Job) any { return j.ArrivalS }},
		{"class", func(j Job) any { return j.Class }},
		{"slo_s", func(j Job) any { return j.SLOS }},
		{"model", func(j Job) any { return j.Model }},
		{"batch_size", func(j Job) any { return j.BatchSize }},
		{"precision", func(j Job) any { return j.Precision }},
		{"memory_mib", func(j Job) any { return j.MemoryMiB }},
		{"task_gflop", func(j Job) any { return j.TaskGFLOP }},
		{"intensity_flop_per_byte", func(j Job) any { return j.IntensityFLOPPerByte }},
		{"deadline_s", func(j Job) any { return j.DeadlineS }},
	}
	if got := tbl.NumCols(); got != int64(len(fields)) {
		t.Errorf("arrow: %d columns, want %d", got, len(fields))
	}
	for _, f := range fields {
		vals := values(f.name)
		for i, j := range jobs {
			if vals[i] != f.get(j) {
				t.Fatalf("%s row %d: arrow reads %v, parquet-go %v", f.name, i, vals[i], f.get(j))
			}
		}
	}
}

func TestCancel(t *testing.T) {
	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Run(ctx, DefaultConfig(), 1, catalog.Zoo(), Output{Dir: t.TempDir()})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	})
	t.Run("while running", func(t *testing.T) {
		// Far more jobs than can be written before the cancel is seen.
		cfg := smallConfig(50_000_000, 50_000_000)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		dir := t.TempDir()
		var once sync.Once
		start := time.Now()
		err := Run(ctx, cfg, 1, catalog.Zoo(), Output{Dir: dir, Progress: func(done, total int64) { once.Do(cancel) }})
		if err != context.Canceled {
			t.Errorf("Run = %v, want ctx.Err() = context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Run took %v to stop after cancellation", d)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			t.Errorf("cancelled run left %s behind", e.Name())
		}
	})
}

func TestProgress(t *testing.T) {
	cfg := smallConfig(1_500_000, 700_000)
	cfg.Holdout.Jobs = 100_000
	const want = 2_300_000 // every workload's jobs: train, eval and holdout
	var calls []int64
	var mu sync.Mutex
	err := Run(context.Background(), cfg, 1, catalog.Zoo(), Output{Dir: t.TempDir(), Progress: func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if total != want {
			t.Errorf("Progress total = %d, want %d", total, want)
		}
		calls = append(calls, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(calls) || calls[len(calls)-1] != want {
		t.Errorf("Progress calls = %v, want increasing and ending at %d", calls, want)
	}
	// One call per row group's worth of jobs, plus the first and the last.
	if max := 2_200_000/parquetio.RowGroupRows + 2; len(calls) > max {
		t.Errorf("Progress called %d times, want at most %d", len(calls), max)
	}
}

// heapBound is the peak heap Run may use whatever the job count: per
// workload a few chunks of jobs, the writer's page buffers and one row group
// of compressed pages, with the garbage collector's headroom on top.
const heapBound = 256 << 20

// TestBoundedMemory runs 3M jobs and checks the heap stays under heapBound;
// BenchmarkGenerate10M does the same for 10M jobs.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3M jobs")
	}
	cfg := smallConfig(2_000_000, 1_000_000)
	var err error
	peak := memstat.PeakHeap(func() { err = Run(context.Background(), cfg, 1, catalog.Zoo(), Output{Dir: t.TempDir()}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak heap %.1f MiB for %d jobs", float64(peak)/(1<<20), cfg.Train.Jobs+cfg.Eval.Jobs)
	if peak > heapBound {
		t.Errorf("peak heap = %d MiB, want at most %d MiB", peak>>20, heapBound>>20)
	}
}
