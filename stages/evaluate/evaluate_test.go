package evaluate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"golang.org/x/net/html"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/outputanalysis"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/schedule"
)

const ms = 1e-3

func inference(model, precision string, batch int, latMS ...float64) []profilespec.Sample {
	return runs(profilespec.KindInference, model, precision, batch, 1, latMS...)
}

func runs(kind, model, precision string, batch, concurrency int, latMS ...float64) []profilespec.Sample {
	out := make([]profilespec.Sample, len(latMS))
	for i, l := range latMS {
		out[i] = profilespec.Sample{Kind: kind, Backend: "onnxruntime", Provider: "CPUExecutionProvider", Device: "cpu",
			Model: model, Precision: precision, Batch: int32(batch), Threads: 1, Concurrency: int32(concurrency),
			Repeat: int32(i), LatencyS: l * ms, Source: profilespec.SourceMeasured}
	}
	return out
}

// fixture is a tiny fixed run: a hand-made profile of the mlp and
// resnet18 measured on a quiet machine, 2000 generated eval jobs, and
// four policies simulated on the default cluster at about 70% of its
// capacity.
type fixture struct {
	in    Inputs
	sched schedule.Config
}

func newFixture(t *testing.T) fixture { return newFixtureReps(t, 1) }

func newFixtureReps(t *testing.T, replications int) fixture {
	return newFixtureWith(t, replications, nil)
}

// newFixtureWith builds the fixture with replications, letting with
// change schedule's config and inputs before it runs (to add learned
// policies, say); the schedule manifest's notes go to Inputs.ScheduleNotes.
func newFixtureWith(t *testing.T, replications int, with func(*schedule.Config, *schedule.Inputs)) fixture {
	t.Helper()
	dir := t.TempDir()
	var s []profilespec.Sample
	for _, p := range []string{profilespec.FP32, profilespec.FP16} {
		s = append(s, inference("mlp", p, 1, 1.0, 1.2, 0.9, 1.5, 1.1)...)
		s = append(s, inference("mlp", p, 8, 3, 3.5, 4, 3.2)...)
		s = append(s, inference("resnet18", p, 1, 20, 22, 19, 25)...)
		s = append(s, inference("resnet18", p, 8, 120, 130, 118, 140)...)
	}
	s = append(s, runs(profilespec.KindContention, "mlp", profilespec.FP32, 1, 1, 1, 1.1, 0.9)...)
	s = append(s, runs(profilespec.KindContention, "mlp", profilespec.FP32, 1, 2, 1.3, 1.4, 1.2)...)
	samples := filepath.Join(dir, profilespec.SamplesFile)
	if err := parquetio.WriteFile(samples, s, nil); err != nil {
		t.Fatal(err)
	}
	gen := generate.DefaultConfig()
	gen.Train.Jobs, gen.Eval.Jobs = 1, 2000
	gen.Models = map[string]float64{"mlp": 0.8, "resnet18": 0.2}
	if err := generate.Run(context.Background(), gen, 1, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	machine := filepath.Join(dir, profilespec.MachineFile)
	if err := parquetio.WriteFile(machine, quietMachine(), nil); err != nil {
		t.Fatal(err)
	}
	in := Inputs{Schedule: filepath.Join(dir, "schedule"), Jobs: filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadEval)), Samples: samples, Machine: machine}
	sched := schedule.DefaultConfig()
	sched.Policies = []string{"fifo", "round_robin", "edf", "greedy+split"}
	sched.Splitting.MinBatch = 16
	sched.Replications = replications
	sched.Predictor = schedule.PredictorTable // evaluate reads the traces, whatever predicted them
	sched.Real = schedule.Real{}
	sched.Sweep = schedule.Sweep{Loads: []float64{0.5, 0.9, 1.3}, Jobs: 1000, Target: 0.99, Tolerance: 0.05}
	cl, err := cluster.Open(sched, catalog.Zoo(), samples)
	if err != nil {
		t.Fatal(err)
	}
	bd, err := cl.Bounds(context.Background(), in.Jobs, sched.Load, 0)
	if err != nil {
		t.Fatal(err)
	}
	sched.Load = 0.7 * bd.ArrivalLBS / bd.WorkLBS
	if err := os.Mkdir(in.Schedule, 0o755); err != nil {
		t.Fatal(err)
	}
	memo := pipeline.NewMemo(filepath.Join(dir, "memo"), "schedule", pipeline.KeyInputs{Code: "test"})
	sin := schedule.Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: in.Jobs}
	if with != nil {
		with(&sched, &sin)
	}
	in.ScheduleNotes = map[string]string{}
	if err := schedule.Run(context.Background(), sched, 1, sin, schedule.Output{Dir: in.Schedule, Memo: memo, Notes: in.ScheduleNotes}); err != nil {
		t.Fatal(err)
	}
	return fixture{in: in, sched: sched}
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.Timeline.Span = 200 * time.Millisecond
	cfg.Baselines = []string{"fifo", "round_robin"} // the fixture's policies: round_robin is the one that loses clearly
	return cfg
}

var testProvenance = Provenance{
	Versions: []string{"evaluate@0000000000000004", "generate@0000000000000001", "profile@0000000000000002", "schedule@0000000000000003"},
	Config:   "seed = 1\n",
	Machine:  map[string]string{"cpu": "test CPU", "cores": "2"},
	Commands: []string{"mlsched run"},
}

func run(t *testing.T, f fixture, cfg Config) string {
	t.Helper()
	out := t.TempDir()
	var last, total atomic.Int64
	progress := func(done, all int64) {
		if done <= last.Load() {
			t.Errorf("progress went from %d to %d", last.Load(), done)
		}
		last.Store(done)
		total.Store(all)
	}
	err := Run(context.Background(), cfg, 1, f.in, Output{Dir: out, Provenance: testProvenance, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(f.sched.Runs())); last.Load() != want || total.Load() != want {
		t.Errorf("progress ended at %d of %d, want %d of %d", last.Load(), total.Load(), want, want)
	}
	return out
}

// TestTinyRun runs the stage on the fixture and checks the report against
// its golden Markdown (go test ./stages/evaluate -update refreshes it),
// the HTML page, metrics.parquet and determinism.
func TestTinyRun(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig()
	out := run(t, f, cfg)

	md, err := os.ReadFile(filepath.Join(out, ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tiny-report.md", md, "report.md")

	t.Run("html", func(t *testing.T) { checkHTML(t, out) })
	t.Run("metrics", func(t *testing.T) { checkMetrics(t, out, f.sched, cfg) })
	t.Run("peak attainment", func(t *testing.T) {
		// Each policy's highest attainment at any load schedule tried,
		// grid or search, and the lowest load where it was reached.
		points, err := parquetio.ReadAll[schedule.SweepRow](filepath.Join(f.in.Schedule, schedule.SweepFile))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.sched.Policies {
			peak, load := -1.0, 0.0
			for _, r := range points {
				if a := r.TargetAttainment(); r.Policy == p && (a > peak || a == peak && r.Load < load) {
					peak, load = a, r.Load
				}
			}
			i := slices.IndexFunc(rows, func(r MetricRow) bool {
				return r.Scope == section.ScopeSustained && r.Policy == p && r.Metric == metricPeakAttainment
			})
			switch {
			case i < 0:
				t.Errorf("%s: no %s row", p, metricPeakAttainment)
			case rows[i].Value != peak || rows[i].Load != load:
				t.Errorf("%s: %s %v at load %v, want %v at %v", p, metricPeakAttainment, rows[i].Value, rows[i].Load, peak, load)
			}
		}
	})
	t.Run("compare_to", func(t *testing.T) {
		// An earlier run that differed in one number, lacked one and had
		// one this run does not.
		old, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(old, func(r MetricRow) bool {
			return r.Scope == section.ScopePolicy && r.Policy == "edf" && r.Metric == "mean_e2e_s"
		})
		old[i].Value *= 2
		now := old[i].Value / 2
		j := slices.IndexFunc(old, func(r MetricRow) bool {
			return r.Scope == section.ScopePolicy && r.Policy == "fifo" && r.Metric == "makespan_s"
		})
		old = slices.Delete(old, j, j+1)
		old = append(old, MetricRow{Scope: section.ScopePolicy, Policy: "sjf", Metric: "mean_e2e_s", Value: 1})
		prev := filepath.Join(t.TempDir(), MetricsFile)
		if err := parquetio.WriteFile(prev, old, nil); err != nil {
			t.Fatal(err)
		}
		in := f.in
		in.Previous, in.PreviousVersion = prev, "00000000000000ff"
		dir := t.TempDir()
		if err := Run(context.Background(), cfg, 1, in, Output{Dir: dir, Provenance: testProvenance}); err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(filepath.Join(dir, ReportMD))
		for _, want := range []string{
			"## Since evaluate@00000000000000ff",
			fmt.Sprintf("| edf | mean_e2e_s | %s | %s | -50.0%% |", report.Num(2*now), report.Num(now)),
			"1 numbers are new in this run and 1 of the earlier run's are gone",
		} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		rows, err := parquetio.ReadAll[MetricRow](filepath.Join(dir, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			isNew := r.Scope == section.ScopePolicy && r.Policy == "fifo" && r.Metric == "makespan_s"
			if (r.Previous == nil) != isNew {
				t.Errorf("%s %s %s: previous %v", r.Scope, where(r), r.Metric, r.Previous)
			}
		}
	})
	t.Run("train", func(t *testing.T) {
		// With the train artifact, the report gains its two sections and
		// metrics.parquet the trained models' headline numbers.
		tf := newTrainFixture()
		in := f.in
		in.Train = tf.write(t, modelFile(t, tf.kind))
		dir := t.TempDir()
		if err := Run(context.Background(), cfg, 1, in, Output{Dir: dir, Provenance: testProvenance}); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, ReportMD))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\n## Predictor\n", "\n## Placement network\n", "**forest** (kept)"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		if i, j := strings.Index(string(md), "## Profile"), strings.Index(string(md), "## Predictor"); i < 0 || j < i {
			t.Errorf("the predictor section is not after the profile's")
		}
		for _, name := range []string{"predictor-scatter.svg", "placement-training.svg", "placement-roc.svg"} {
			if _, err := os.Stat(filepath.Join(dir, ChartsDir, name)); err != nil {
				t.Error(err)
			}
		}
		rows, err := parquetio.ReadAll[MetricRow](filepath.Join(dir, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rows, func(r MetricRow) bool {
			return r.Scope == section.ScopePredictor && r.Metric == "grouped_kfold_mape" && r.Value == fixtureMAPE
		}) {
			t.Errorf("metrics.parquet has no grouped_kfold_mape row of %v", fixtureMAPE)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		again := run(t, f, cfg)
		for _, name := range []string{ReportMD, ReportHTML, MetricsFile} {
			a, _ := os.ReadFile(filepath.Join(out, name))
			b, _ := os.ReadFile(filepath.Join(again, name))
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two runs", name)
			}
		}
	})
}

// checkHTML parses report.html and checks that it is one self-contained
// page: every chart inline with data drawn in it, no reference outside
// the page, every contents link landing on a heading.
func checkHTML(t *testing.T, out string) {
	page, err := os.ReadFile(filepath.Join(out, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("report.html does not parse: %v", err)
	}
	ids := map[string]bool{}
	var links []string
	charts := 0
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "img", "script", "link", "iframe", "object", "embed":
			t.Errorf("report.html has a <%s> element", n.Data)
		case "svg":
			charts++
			shapes := 0
			for c := range n.Descendants() {
				if c.Type == html.ElementNode && (c.Data == "path" || c.Data == "rect" || c.Data == "polyline" || c.Data == "circle") {
					shapes++
				}
			}
			if shapes < 10 {
				t.Errorf("chart %d has %d shapes: no data drawn?", charts, shapes)
			}
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "id":
				ids[a.Val] = true
			case "href", "src":
				links = append(links, a.Val)
			}
		}
	}
	if charts < 9 {
		t.Errorf("%d inline charts, want the 9 of the report", charts)
	}
	for _, l := range links {
		if !strings.HasPrefix(l, "#") || !ids[l[1:]] {
			t.Errorf("link %q does not land on the page", l)
		}
	}
	clean := page
	for _, ns := range []string{"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"} {
		clean = bytes.ReplaceAll(clean, []byte(ns), nil)
	}
	for _, ext := range []string{"http://", "https://", "url(", "@import", "@font-face"} {
		if bytes.Contains(clean, []byte(ext)) {
			t.Errorf("report.html contains %q", ext)
		}
	}
	chartFiles, _ := filepath.Glob(filepath.Join(out, ChartsDir, "*.svg"))
	if len(chartFiles) != charts {
		t.Errorf("%d chart files for %d inline charts", len(chartFiles), charts)
	}
}

// checkMetrics reads metrics.parquet and checks that it holds the numbers
// the report shows: each policy's summary with its P99 interval, each
// difference against each baseline, and the sweep.
func checkMetrics(t *testing.T, out string, sched schedule.Config, cfg Config) {
	policies := sched.Policies
	rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	find := func(scope, policy, baseline, metric string, load float64) *MetricRow {
		i := slices.IndexFunc(rows, func(r MetricRow) bool {
			return r.Scope == scope && r.Policy == policy && r.Baseline == baseline && r.Metric == metric && r.Load == load
		})
		if i < 0 {
			t.Errorf("no %s row for %s/%s %s at %v", scope, policy, baseline, metric, load)
			return nil
		}
		return &rows[i]
	}
	for _, p := range policies {
		// The mean latency has an interval: across the replications, or
		// batch means over one; the P99 has one across replications only.
		if r := find(section.ScopePolicy, p, "", "mean_e2e_s", 0); r != nil && (r.Lo == nil || r.Hi == nil || !(*r.Lo <= r.Value && r.Value <= *r.Hi)) {
			t.Errorf("%s: mean latency %v outside its interval %v … %v", p, r.Value, r.Lo, r.Hi)
		}
		if r := find(section.ScopePolicy, p, "", "p99_e2e_s", 0); r != nil {
			if sched.Replications > 1 && (r.Lo == nil || r.Hi == nil || !(*r.Lo <= r.Value && r.Value <= *r.Hi)) {
				t.Errorf("%s: P99 %v outside its interval %v … %v", p, r.Value, r.Lo, r.Hi)
			}
			if sched.Replications == 1 && (r.Lo == nil || !math.IsNaN(*r.Lo)) {
				t.Errorf("%s: P99 of one replication has an interval %v", p, r.Lo)
			}
		}
		if r := find(section.ScopePolicy, p, "", "slo_violation", 0); r != nil && !(r.Value >= 0 && r.Value <= 1) {
			t.Errorf("%s: SLO violation rate %v", p, r.Value)
		}
		// Every objective's row carries the estimate the report gives,
		// with its interval where it has one (mlsched diff reads them).
		for _, o := range section.Objectives() {
			scope, class, metric := o.Where()
			i := slices.IndexFunc(rows, func(r MetricRow) bool {
				return r.Scope == scope && r.Policy == p && r.Class == class && r.Metric == metric
			})
			switch {
			case i < 0 && scope == section.ScopeClass:
				// A workload without the class has no row of it.
			case i < 0:
				t.Errorf("%s: no %s row %s", p, scope, metric)
			case rows[i].Lo == nil || rows[i].Hi == nil:
				t.Errorf("%s: %s (%s %s %s) has no interval", p, o.Name, scope, class, metric)
			case sched.Replications > 1 && !(*rows[i].Lo <= rows[i].Value && rows[i].Value <= *rows[i].Hi):
				t.Errorf("%s: %s %v outside its interval %v … %v", p, o.Name, rows[i].Value, *rows[i].Lo, *rows[i].Hi)
			}
		}
		for _, b := range cfg.Baselines {
			if b != p {
				find(section.ScopeDifference, p, b, "mean_e2e_s", 0)
				find(section.ScopeDifference, p, b, "ratio_makespan_s", 0)
			}
		}
		for _, u := range sched.Sweep.Loads {
			find(section.ScopeSweep, p, "", metricInteractiveSLO, u)
		}
		find(section.ScopeSustained, p, "", metricSustained, 0)
		find(section.ScopeSustained, p, "", metricFailed, 0)
	}
	if !slices.ContainsFunc(rows, func(r MetricRow) bool {
		return r.Scope == section.ScopeProfile && r.Model == "resnet18" && r.Precision == profilespec.FP32 && r.Batch == 8 &&
			r.Metric == "p50_latency_s" && math.Abs(r.Value-0.120) < 1e-12
	}) {
		t.Error("no profile row for resnet18 in fp32 at batch 8 with its median (nearest rank of 118, 120, 130, 140 ms) of 120 ms")
	}
	if r := find(section.ScopeDifference, "edf", "round_robin", "mean_e2e_s", 0); r != nil && (r.Value >= 0 || !r.Significant) {
		t.Errorf("edf against round_robin: mean latency difference %v (significant %v); round_robin ignores device speed and should lose clearly", r.Value, r.Significant)
	}
}

// TestReplications runs three replications and checks the means and
// intervals across them against the per-run traces' own summaries.
func TestReplications(t *testing.T) {
	f := newFixtureReps(t, 3)
	cfg := testConfig()
	out := run(t, f, cfg)
	rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := metrics.ReadCluster(filepath.Join(f.in.Schedule, schedule.ClusterFile))
	if err != nil {
		t.Fatal(err)
	}
	// Each policy's replications' latency series, completed jobs in
	// arrival order; each policy's deletion is MSER-5's on its averaged
	// series.
	series := map[string][][]float64{}
	deleted := map[string]int{}
	for _, p := range f.sched.Policies {
		for k := 1; k <= 3; k++ {
			tr, err := metrics.ReadTrace(filepath.Join(f.in.Schedule, schedule.ReplicationFile(p, k, schedule.TraceFile)), cl.Devices)
			if err != nil {
				t.Fatal(err)
			}
			var e2e []float64
			for i, e := range tr.E2E {
				if !tr.Rejected[i] {
					e2e = append(e2e, e)
				}
			}
			series[p] = append(series[p], e2e)
		}
		_, d := outputanalysis.ReplicationDeletion(series[p], 0.95)
		deleted[p] = d.Deleted
	}
	for _, p := range f.sched.Policies {
		var means []float64
		for _, e2e := range series[p] {
			var sum float64
			for _, e := range e2e[deleted[p]:] {
				sum += e
			}
			means = append(means, sum/float64(len(e2e)-deleted[p]))
		}
		if means[0] == means[1] {
			t.Errorf("%s: replications 1 and 2 have the same mean latency %v", p, means[0])
		}
		// The mean latency is the mean over the replications of each
		// one's mean after the deletion, with its Student-t interval.
		iv := outputanalysis.TInterval(means, 0.95)
		i := slices.IndexFunc(rows, func(r MetricRow) bool {
			return r.Scope == section.ScopePolicy && r.Policy == p && r.Metric == metrics.MetricMeanE2E
		})
		if i < 0 {
			t.Fatalf("%s: no mean latency", p)
		}
		if r := rows[i]; math.Abs(r.Value-iv.Mean) > 1e-12*iv.Mean || math.Abs(*r.Lo-iv.Lo) > 1e-12*iv.Mean || math.Abs(*r.Hi-iv.Hi) > 1e-12*iv.Mean {
			t.Errorf("%s: mean across replications %v (%v … %v), want %v (%v … %v)", p, r.Value, *r.Lo, *r.Hi, iv.Mean, iv.Lo, iv.Hi)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportMD))
	if !strings.Contains(string(md), "over 3 independent replications") {
		t.Errorf("the report's first paragraph does not say its intervals are over the 3 replications")
	}
	// The summary names a best policy for each objective only with a
	// verdict of multiple comparisons with the best, and the report opens,
	// under its title, with the objective's.
	for _, o := range section.Objectives() {
		i := slices.IndexFunc(rows, func(r MetricRow) bool { return r.Scope == section.ScopeBest && strings.HasPrefix(r.Metric, o.Diff+":") })
		if i < 0 {
			t.Errorf("metrics.parquet has no verdict on %s", o.Name)
			continue
		}
		if kind := strings.TrimPrefix(rows[i].Metric, o.Diff+":"); kind != bestSeparated && kind != bestWithinDelta && kind != bestInseparable {
			t.Errorf("%s: verdict %q with three replications", o.Name, kind)
		}
	}
	if first := strings.SplitN(string(md), "\n\n", 3)[1]; !strings.HasPrefix(first, "**Use ") && !strings.HasPrefix(first, "**No single policy is best**") {
		t.Errorf("the report opens with %q, not a recommendation", first)
	}

	// Each policy's capacity is the mean of its replications' searches,
	// with an interval; the best's ratio to fifo is paired by replication.
	caps, err := parquetio.ReadAll[schedule.CapacityRow](filepath.Join(f.in.Schedule, schedule.CapacityFile))
	if err != nil {
		t.Fatal(err)
	}
	sustained := map[string][]float64{}
	for _, c := range caps {
		sustained[c.Policy] = append(sustained[c.Policy], c.SustainedLoad)
	}
	best, top := "", -1.0
	for _, p := range f.sched.Policies {
		x := sustained[p]
		if len(x) != 3 {
			t.Fatalf("%s: %d capacity rows, want 3", p, len(x))
		}
		mean := (x[0] + x[1] + x[2]) / 3
		if mean > top {
			best, top = p, mean
		}
		i := slices.IndexFunc(rows, func(r MetricRow) bool {
			return r.Scope == section.ScopeSustained && r.Policy == p && r.Metric == metricSustained
		})
		if i < 0 || math.Abs(rows[i].Value-mean) > 1e-12 || rows[i].Lo == nil || rows[i].Hi == nil {
			t.Errorf("%s: sustained load row %+v, want mean %v with an interval", p, rows, mean)
		}
	}
	i := slices.IndexFunc(rows, func(r MetricRow) bool {
		return r.Scope == section.ScopeSustained && r.Metric == metricSustainedRatio && r.Baseline == "fifo"
	})
	if i < 0 {
		t.Fatal("no ratio of the best sustained load to fifo's")
	}
	var want float64
	for k := range 3 {
		want += sustained[best][k] / sustained["fifo"][k] / 3
	}
	if r := rows[i]; r.Policy != best || math.Abs(r.Value-want) > 1e-12 {
		t.Errorf("ratio row %+v, want %s over fifo, paired mean %v", r, best, want)
	}
}

func TestBadConfig(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"unknown baseline", func(c *Config) { c.Baselines = []string{"fifo", "sjf"} }, `evaluate.baselines[1]: unknown policy "sjf"`},
		{"repeated baseline", func(c *Config) { c.Baselines = []string{"fifo", "fifo"} }, `evaluate.baselines[1]: baseline "fifo" is already listed`},
		{"confidence", func(c *Config) { c.Confidence = 1 }, "evaluate.confidence: must be in [0.5, 0.999], got 1"},
		{"confidence tiny", func(c *Config) { c.Confidence = 1e-300 }, "evaluate.confidence: must be in [0.5, 0.999], got 1e-300"},
		{"objective", func(c *Config) { c.Objective = "speed" }, `evaluate.objective: must be one of [mean_e2e_s p99_e2e_s slo_violation interactive_slo_violation goodput], got "speed"`},
		{"indifference latency", func(c *Config) { c.Indifference.Latency = -time.Millisecond }, "evaluate.indifference.latency: must be a duration from 0s to 1h, got -1ms"},
		{"indifference slo", func(c *Config) { c.Indifference.SLO = 0.9 }, "evaluate.indifference.slo: must be a fraction of jobs in [0, 0.5], got 0.9"},
		{"indifference goodput NaN", func(c *Config) { c.Indifference.Goodput = math.NaN() }, "evaluate.indifference.goodput: must be jobs per second in [0, 1e9], got NaN"},
		{"timeline start", func(c *Config) { c.Timeline.Start = 1 }, "evaluate.timeline.start"},
		{"timeline span", func(c *Config) { c.Timeline.Span = 0 }, "evaluate.timeline.span: must be a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if err := DefaultConfig().CheckBaselines([]string{"fifo", "edf"}); err == nil || !strings.Contains(err.Error(), `evaluate.baselines[1]: "edf+batch+split+migrate" is not among schedule.policies`) {
		t.Errorf("CheckBaselines = %v", err)
	}
}

// TestProfileSectionNamesDevices: with a GPU's imported profile beside this
// machine's, the Profile section says which device each row and line is
// and where its runs came from.
func TestProfileSectionNamesDevices(t *testing.T) {
	curve := func(device, source string, p50 float64) profileCurve {
		return profileCurve{device: device, model: "resnet50", precision: "fp32", source: source, threads: 1,
			batch: []float64{1, 8}, runs: []int{20, 20}, p5: []float64{p50, 8 * p50}, p50: []float64{p50, 8 * p50}, p95: []float64{p50, 8 * p50}}
	}
	sec := &profileSection{curves: []profileCurve{curve("cpu", "measured", 0.036), curve("h200", "import:profile-h200-cuda.parquet", 0.0027)}}
	s, err := sec.Render(&section.Evaluation{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"one line per device, model and precision",
		"cpu measured on this machine; h200 imported from `profile-h200-cuda.parquet`",
		"| device | model |",
		"| h200 | resnet50 | fp32 | 1 | 8 | 20 |",
		"| cpu | resnet50 | fp32 | 1 | 1 | 20 |",
	} {
		if !strings.Contains(s.Markdown, want) {
			t.Errorf("Profile section lacks %q:\n%s", want, s.Markdown)
		}
	}
}
