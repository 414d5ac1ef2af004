package schedule

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// keyCase is a change of one setting and the specs whose units it
// rebuilds: those that read it.
type keyCase struct {
	setting string
	set     func(*Config)
	rebuilt []string
}

// testNarrowKeys runs cfg on a memo, then each case's change of it on the
// same memo: every unit of the case's specs is built again, and no other
// unit is. The run on the memo writes the files a run without one does,
// byte for byte, so that no unit left cached was one the change changes.
func testNarrowKeys(t *testing.T, cfg Config, in Inputs, cases []keyCase) {
	t.Helper()
	memo := &countingMemo{Memo: pipeline.NewMemo(t.TempDir(), "schedule", pipeline.KeyInputs{Code: "test"})}
	run := func(t *testing.T, cfg Config, memo Memo) string {
		t.Helper()
		dir := t.TempDir()
		if err := Run(context.Background(), cfg, 7, in, Output{Dir: dir, Metadata: testMeta, Memo: memo}); err != nil {
			t.Fatalf("Run: %v", err)
		}
		return dir
	}
	run(t, cfg, memo)
	units := memo.built() // every unit of each spec
	for _, spec := range cfg.Policies {
		if units[spec] == 0 {
			t.Fatalf("the run built no unit of %s: %v", spec, units)
		}
	}
	for _, tc := range cases {
		t.Run(tc.setting, func(t *testing.T) {
			changed := cfg
			tc.set(&changed)
			memo.built()
			dir := run(t, changed, memo)
			want := map[string]int{}
			for _, spec := range tc.rebuilt {
				want[spec] = units[spec]
			}
			if got := memo.built(); !maps.Equal(got, want) {
				var cached []string
				for _, spec := range cfg.Policies {
					if got[spec] == 0 {
						cached = append(cached, spec)
					}
				}
				t.Errorf("changing %s built the units %v (left %v cached), want %v: every unit of the specs that read it, and no other",
					tc.setting, got, cached, want)
			}
			fresh := run(t, changed, nil)
			for _, f := range []string{SweepFile, CapacityFile, StudiesFile} {
				a, _ := os.ReadFile(filepath.Join(dir, f))
				b, _ := os.ReadFile(filepath.Join(fresh, f))
				if !bytes.Equal(a, b) {
					t.Errorf("after changing %s, %s on the memo differs from a run without it: a unit kept was one the setting changes", tc.setting, f)
				}
			}
		})
	}
}

// TestUnitKeysAreNarrow: a simulation unit's key holds only the settings
// its policy spec reads, so that changing batching.window from 2 ms to
// 5 ms rebuilds the units of the specs that batch and leaves fifo's,
// round_robin's and every other one's cached; and so for every option's
// settings. The cluster's and the memory model's are everyone's.
func TestUnitKeysAreNarrow(t *testing.T) {
	cfg := testConfig()
	cfg.Policies = []string{"fifo", "round_robin", "random", "greedy+split", "edf+migrate", "edf+batch", "batch_aware", "dynamic"}
	cfg.Sweep = Sweep{Loads: []float64{0.5, 1}, Jobs: 300, Target: 0.9}
	cfg.Studies = Studies{Jobs: 300, Replications: 1, PredictionErrors: []float64{0.2}}
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: generateJobs(t, mlpWorkload(400), 3)}
	batching := []string{"edf+batch", "batch_aware", "dynamic"}
	testNarrowKeys(t, cfg, in, []keyCase{
		{"batching.window", func(c *Config) { c.Batching.Window = 5 * time.Millisecond }, batching},
		{"batching.max_batch", func(c *Config) { c.Batching.MaxBatch = 8 }, batching},
		{"splitting.min_batch", func(c *Config) { c.Splitting.MinBatch = 4 }, []string{"greedy+split"}},
		{"migration.cost", func(c *Config) { c.Migration.Cost = 3 * time.Millisecond }, []string{"edf+migrate"}},
		{"migration.min_gain", func(c *Config) { c.Migration.MinGain = time.Millisecond }, []string{"edf+migrate"}},
		{"dynamic.urgency", func(c *Config) { c.Dynamic.Urgency = 3 }, []string{"dynamic"}},
		{"learned.batch", func(c *Config) { c.Learned.Batch = 8 }, nil},
		{"memory.fp16_factor", func(c *Config) { c.Memory.FP16Factor = 0.6 }, slices.Clone(cfg.Policies)},
	})
}

// TestLearnedUnitKeysAreNarrow: the learned policy's units hold its
// serving's settings and the migrations' cost, not the threshold rule's
// gain; with +batch, the batching's settings too.
func TestLearnedUnitKeysAreNarrow(t *testing.T) {
	lib, src := orttest.Library(t)
	cfg := testConfig()
	cfg.Policies = []string{"edf", "learned", "learned+batch"}
	cfg.Sweep = Sweep{Loads: []float64{0.5, 1}, Jobs: 500, Target: 0.9}
	cfg.Studies = Studies{Jobs: 500, Replications: 1, PredictionErrors: []float64{0.2}, DecisionCosts: []string{"0s"}}
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, learnedProfile()), Jobs: generateJobs(t, mlpWorkload(800), 3),
		Placement: "testdata/placement.onnx", ORTLib: lib, ORTSource: src}
	learned := []string{"learned", "learned+batch"}
	testNarrowKeys(t, cfg, in, []keyCase{
		{"batching.window", func(c *Config) { c.Batching.Window = 5 * time.Millisecond }, []string{"learned+batch"}},
		{"migration.cost", func(c *Config) { c.Migration.Cost = 3 * time.Millisecond }, learned},
		{"migration.min_gain", func(c *Config) { c.Migration.MinGain = time.Millisecond }, nil},
		{"learned.batch", func(c *Config) { c.Learned.Batch = 8 }, learned},
		{"learned.cache.step", func(c *Config) { c.Learned.Cache.Step = 0.2 }, learned},
		{"learned.evaluator", func(c *Config) { c.Learned.Evaluator = schedulespec.EvaluatorONNXRuntime }, learned},
		{"dynamic.urgency", func(c *Config) { c.Dynamic.Urgency = 3 }, nil},
	})
}
