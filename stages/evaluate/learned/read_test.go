package learned

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestReadLearnedErrors damages one file or note at a time and checks
// that the error names it.
func TestReadLearnedErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(f *learnedFixture)
		file   func(t *testing.T, dir string)
		want   []string
	}{
		{name: "no serving file", file: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "learned+batch", schedulespec.ServingFile))
		}, want: []string{"learned+batch/serving.parquet", "no such file"}},
		{name: "serving not parquet", file: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "learned"), schedulespec.ServingFile, []byte("PAR1 damaged"))
		}, want: []string{"learned/serving.parquet"}},
		{name: "serving of another run", file: func(t *testing.T, dir string) {
			r := newLearnedFixture().serving[1]
			r.Replication = 2
			if err := parquetio.WriteFile(filepath.Join(dir, "learned", schedulespec.ServingFile), []schedulespec.ServingRow{r}, nil); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"learned/serving.parquet", "policy learned+batch replication 2, want learned replication 1"}},
		{name: "more hits than decisions", mutate: func(f *learnedFixture) { f.serving[1].CacheHits = 5000 },
			want: []string{"learned+batch/serving.parquet", "cache_hits 5000"}},
		{name: "unknown cost source", mutate: func(f *learnedFixture) { f.serving[0].CostSource = "guess" },
			want: []string{"learned/serving.parquet", `cost_source = "guess", want serving, tight_loop or configured`}},
		{name: "P99 charge below the median", mutate: func(f *learnedFixture) { f.serving[0].CostP99S = 1e-6 },
			want: []string{"learned/serving.parquet", "cost_p99_s = 1e-06, want a finite time of at least cost_s = 8e-06"}},
		{name: "study of an unknown cost source", mutate: func(f *learnedFixture) { f.studies[len(f.studies)-1].DecisionCostSource = "guess" },
			want: []string{schedulespec.StudiesFile, "row 26", `decision_cost_source = "guess"`}},
		{name: "note not a number", mutate: func(f *learnedFixture) { f.notes["serving:learned:cached_p99_us"] = "fast" },
			want: []string{"schedule manifest: note serving:learned:cached_p99_us = \"fast\""}},
		{name: "unknown evaluator", mutate: func(f *learnedFixture) { f.notes["serving:learned:evaluator"] = "tensorflow" },
			want: []string{`schedule manifest: note serving:learned:evaluator = "tensorflow": want go or onnxruntime`}},
		{name: "referred not a count", mutate: func(f *learnedFixture) { f.notes["serving:learned+batch:referred"] = "2.5" },
			want: []string{"schedule manifest: note serving:learned+batch:referred = 2.5: want a whole count"}},
		{name: "a path half noted", mutate: func(f *learnedFixture) { delete(f.notes, "serving:learned:batched_p99_us") },
			want: []string{"serving:learned:batched_n", "batched_p99_us"}},
		{name: "studies not parquet", file: func(t *testing.T, dir string) {
			writeFile(t, dir, schedulespec.StudiesFile, []byte("not parquet"))
		}, want: []string{schedulespec.StudiesFile}},
		{name: "study of no policy", mutate: func(f *learnedFixture) { f.studies[2].Policy = "sjf" },
			want: []string{schedulespec.StudiesFile, "row 3", `policy "sjf" was not simulated`}},
		{name: "negative MAPE", mutate: func(f *learnedFixture) { f.studies[1].PredictionMAPE = -0.1 },
			want: []string{schedulespec.StudiesFile, "row 2", "prediction_mape = -0.1"}},
		{name: "unknown study", mutate: func(f *learnedFixture) { f.studies[0].Study = "load" },
			want: []string{schedulespec.StudiesFile, "row 1", `study "load"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLearnedFixture()
			if tt.mutate != nil {
				tt.mutate(&f)
			}
			dir := f.write(t)
			if tt.file != nil {
				tt.file(t, dir)
			}
			_, err := readRuns(dir, f.policies, nil, 1, f.notes)
			if err == nil {
				t.Fatal("readRuns succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestLearnedRows checks the learned scope of metrics.parquet: the
// serving counts and each simulated comparison's differences.
func TestLearnedRows(t *testing.T) {
	_, l := fixtureData(t, newLearnedFixture())
	rows := metricRows(l)
	find := func(policy, baseline, metric string) *section.MetricRow {
		i := slices.IndexFunc(rows, func(r section.MetricRow) bool {
			return r.Scope == section.ScopeLearned && r.Policy == policy && r.Baseline == baseline && r.Metric == metric
		})
		if i < 0 {
			t.Errorf("no %s row of %s against %q", metric, policy, baseline)
			return nil
		}
		return &rows[i]
	}
	if r := find("learned", "", "cache_changed"); r != nil && r.Value != 12 {
		t.Errorf("cache_changed %v, want 12", r.Value)
	}
	if r := find("learned+batch", "", "mean_batch"); r != nil && r.Value != 3 {
		t.Errorf("mean_batch %v, want 3", r.Value)
	}
	if r := find("learned", "", "cost_p99_s"); r != nil && r.Value != 70e-6 {
		t.Errorf("learned's cost_p99_s %v, want the drawn charge's P99, 70e-6", r.Value)
	}
	if r := find("learned+batch", "", "cost_p99_s"); r != nil && r.Value != 0.00011 {
		t.Errorf("learned+batch's cost_p99_s %v, want the fixed charge, 0.00011", r.Value)
	}
	for _, base := range []string{"edf+migrate", "edf"} {
		want := fixtureDiffs(base)[0]
		if r := find("learned", base, metrics.MetricMeanE2E); r != nil && (r.Value != want.Value || *r.Lo != want.Lo || *r.Hi != want.Hi || !r.Significant) {
			t.Errorf("learned against %s: %+v, want %+v", base, r, want)
		}
	}
	if slices.ContainsFunc(rows, func(r section.MetricRow) bool { return r.Policy == "learned+batch" && r.Baseline != "" }) {
		t.Error("differences of learned+batch, whose counterparts were not simulated")
	}
	if metricRows(nil) != nil {
		t.Error("rows without a learned policy")
	}
}

// TestReadServingLayouts reads a learned policy's serving rows from one
// serving.parquet, a row per replication, and from the layout of a
// schedule artifact made before: the first replication's row there and
// each other's in rep-k/serving.parquet. A row missing, or out of place,
// is an error naming the file.
func TestReadServingLayouts(t *testing.T) {
	rows := make([]schedulespec.ServingRow, 3)
	for i := range rows {
		rows[i] = schedulespec.ServingRow{Policy: "learned", Replication: int32(i + 1), Decisions: int64(100 * (i + 1)), Batches: 90,
			MeanBatch: 1.1, CostS: 8e-6, CostP99S: 9e-6, CostSource: schedulespec.CostServing}
	}
	write := func(t *testing.T, dir string, k int, rows ...schedulespec.ServingRow) {
		path := filepath.Join(dir, filepath.FromSlash(schedulespec.ReplicationFile("learned", k, schedulespec.ServingFile)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := parquetio.WriteFile(path, rows, nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		files   func(t *testing.T, dir string)
		wantErr []string
	}{
		{"one file", func(t *testing.T, dir string) { write(t, dir, 1, rows...) }, nil},
		{"a file per replication", func(t *testing.T, dir string) {
			for k, r := range rows {
				write(t, dir, k+1, r)
			}
		}, nil},
		{"a row missing", func(t *testing.T, dir string) { write(t, dir, 1, rows[:2]...) },
			[]string{"learned/serving.parquet", "2 rows, want 3"}},
		{"rows out of order", func(t *testing.T, dir string) { write(t, dir, 1, rows[0], rows[2], rows[1]) },
			[]string{"learned/serving.parquet", "replication 3, want learned replication 2"}},
		{"a replication's file missing", func(t *testing.T, dir string) { write(t, dir, 1, rows[0]); write(t, dir, 2, rows[1]) },
			[]string{"learned/rep-3", "no such file"}},
		{"a replication's file of another", func(t *testing.T, dir string) {
			write(t, dir, 1, rows[0])
			write(t, dir, 2, rows[1])
			write(t, dir, 3, rows[1])
		}, []string{"learned/rep-3/serving.parquet", "replication 2, want learned replication 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.files(t, dir)
			got, err := readServing(dir, "learned", 3)
			if tt.wantErr == nil {
				if err != nil || !slices.Equal(got, rows) {
					t.Fatalf("readServing = %+v, %v; want %+v", got, err, rows)
				}
				return
			}
			if err == nil {
				t.Fatalf("readServing succeeded: %+v", got)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}
