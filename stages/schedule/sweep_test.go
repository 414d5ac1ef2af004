package schedule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestSearchCapacity: against a known threshold, the search ends with the
// threshold inside a bracket no wider than the tolerance, its ends on the
// right sides, and it never asks for a grid load again.
func TestSearchCapacity(t *testing.T) {
	grid := []float64{0.3, 0.5, 0.7, 0.9, 1.1}
	tests := []struct {
		name      string
		grid      []float64
		tol       float64
		threshold float64 // loads up to it are sustained
	}{
		{"between grid loads", grid, 0.01, 0.637},
		{"below the grid", grid, 0.01, 0.137},
		{"none at all", grid, 0.01, 0},
		{"above the grid", grid, 0.01, 2.71},
		{"beyond the largest load", grid, 0.01, 100},
		{"no grid", nil, 0.02, 0.45},
		{"no search", grid, 0, 0.637},
		{"on a grid load", grid, 0.01, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []float64
			sustained, failed, points, dips, err := searchCapacity(tt.grid, tt.tol, func(u float64, search bool) (bool, error) {
				if search && slices.Contains(tt.grid, u) {
					t.Errorf("the search asked for grid load %v again", u)
				}
				if search {
					asked = append(asked, u)
				}
				return u <= tt.threshold, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if int(points) != len(asked) {
				t.Errorf("points = %d, the search asked %d loads", points, len(asked))
			}
			if dips != 0 {
				t.Errorf("dips = %d for attainment that falls with load", dips)
			}
			if sustained > tt.threshold || (failed <= tt.threshold && !math.IsInf(failed, 1)) {
				t.Errorf("bracket [%v, %v] does not hold the threshold %v", sustained, failed, tt.threshold)
			}
			switch {
			case tt.threshold >= MaxSweepLoad:
				if sustained != MaxSweepLoad || !math.IsInf(failed, 1) {
					t.Errorf("bracket [%v, %v], want [%v, +Inf]", sustained, failed, float64(MaxSweepLoad))
				}
			case tt.tol == 0:
				// Neighbours on the grid.
				if sustained != 0.5 || failed != 0.7 {
					t.Errorf("bracket [%v, %v], want the grid's [0.5, 0.7]", sustained, failed)
				}
			case failed-sustained > tt.tol:
				t.Errorf("bracket [%v, %v] is wider than %v", sustained, failed, tt.tol)
			}
		})
	}
	boom := errors.New("boom")
	if _, _, _, _, err := searchCapacity(grid, 0.01, func(float64, bool) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing simulation gave %v", err)
	}
}

// TestSearchCapacityNotMonotone: attainment that misses the target at a
// low load and meets it higher up (fifo placing badly while queues are
// short) still has its sustained load found: the scan takes the highest
// grid load that meets the target, brackets it with the next, counts the
// misses below it, and bisects only inside that bracket.
func TestSearchCapacityNotMonotone(t *testing.T) {
	grid := []float64{0.02, 0.3, 0.5, 0.7, 0.9, 1.1}
	tests := []struct {
		name         string
		meets        func(u float64) bool
		tol          float64
		lo, hi       float64 // the bracket must lie within [lo, hi]
		wantDips     int32
		wantNoneLeft bool
	}{
		{"a miss at the lowest load", func(u float64) bool { return u > 0.1 && u <= 0.63 }, 0.01, 0.62, 0.64, 1, false},
		{"two misses below", func(u float64) bool { return u == 0.3 || (u > 0.55 && u <= 0.81) }, 0.01, 0.8, 0.82, 2, false},
		{"no search", func(u float64) bool { return u > 0.1 && u <= 0.63 }, 0, 0.5, 0.7, 1, false},
		{"none on the grid", func(u float64) bool { return false }, 0.01, 0, 0.02, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sustained, failed, _, dips, err := searchCapacity(grid, tt.tol, func(u float64, search bool) (bool, error) {
				if search && (u < tt.lo-0.2 || u > tt.hi+0.2) {
					t.Errorf("the search asked for %v, outside the bracket the scan found", u)
				}
				return tt.meets(u), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if dips != tt.wantDips {
				t.Errorf("dips = %d, want %d", dips, tt.wantDips)
			}
			if tt.wantNoneLeft {
				if sustained != 0 || failed > tt.hi {
					t.Errorf("bracket [%v, %v], want none sustained below %v", sustained, failed, tt.hi)
				}
				return
			}
			if sustained < tt.lo || failed > tt.hi || sustained >= failed {
				t.Errorf("bracket [%v, %v], want within [%v, %v]", sustained, failed, tt.lo, tt.hi)
			}
			if !tt.meets(sustained) || tt.meets(failed) {
				t.Errorf("bracket [%v, %v]: its ends are on the wrong sides", sustained, failed)
			}
		})
	}
}

// countingMemo is the runner's memo, counting the entries it builds, in
// all and by the spec line of their keys.
type countingMemo struct {
	*pipeline.Memo
	builds atomic.Int32

	mu     sync.Mutex
	bySpec map[string]int
}

func (c *countingMemo) Get(unit string, config any, lines [][2]string, build func(dir string) error) (string, error) {
	return c.Memo.Get(unit, config, lines, func(dir string) error {
		c.builds.Add(1)
		c.mu.Lock()
		if c.bySpec == nil {
			c.bySpec = map[string]int{}
		}
		for _, l := range lines {
			if l[0] == "spec" {
				c.bySpec[l[1]]++
			}
		}
		c.mu.Unlock()
		return build(dir)
	})
}

// built returns the entries built since the last call, by spec.
func (c *countingMemo) built() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bySpec
	c.bySpec = nil
	return b
}

// sweepConfig sweeps fifo and edf on one two-lane device.
func sweepConfig() Config {
	cfg := oneDevice(2, 1<<20, "fifo", "edf")
	cfg.Replications = 2
	// edf keeps its interactive jobs within SLO far above capacity (batch
	// jobs wait instead), so the grid reaches 4.
	cfg.Sweep = Sweep{Loads: []float64{0.3, 0.6, 0.9, 1.2, 4}, Jobs: 2000, Target: 0.9, Tolerance: 0.02}
	return cfg
}

func readSweep(t *testing.T, dir string) ([]SweepRow, []CapacityRow) {
	t.Helper()
	points, err := parquetio.ReadAll[SweepRow](filepath.Join(dir, SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := parquetio.ReadAll[CapacityRow](filepath.Join(dir, CapacityFile))
	if err != nil {
		t.Fatal(err)
	}
	return points, capacity
}

// TestSweep: every grid point of every policy's replication is simulated,
// each capacity is bracketed by points that say so, a point is what a run of
// the whole stage on the same jobs at the same load gives, and the memo
// holds each point under a key of everything it depends on.
func TestSweep(t *testing.T) {
	prof := writeSamples(t, noisyProfile())
	jobs := generateJobs(t, mlpWorkload(6000), 3)
	cfg := sweepConfig()
	memo := &countingMemo{Memo: pipeline.NewMemo(t.TempDir(), "schedule", pipeline.KeyInputs{Code: "test"})}
	run := func(cfg Config, memo Memo) string {
		t.Helper()
		dir := t.TempDir()
		if err := Run(context.Background(), cfg, 7, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, Output{Dir: dir, Metadata: testMeta, Memo: memo}); err != nil {
			t.Fatalf("Run: %v", err)
		}
		return dir
	}
	dir := run(cfg, memo)
	points, capacity := readSweep(t, dir)

	at := map[pointOf]SweepRow{}
	for _, p := range points {
		at[pointOf{p.Policy, int(p.Replication), p.Load}] = p
		if p.Jobs != cfg.Sweep.Jobs {
			t.Errorf("%s rep %d at %v simulated %d jobs, want %d", p.Policy, p.Replication, p.Load, p.Jobs, cfg.Sweep.Jobs)
		}
	}
	if len(capacity) != len(cfg.Policies)*cfg.Replications {
		t.Fatalf("%d capacity rows, want %d", len(capacity), len(cfg.Policies)*cfg.Replications)
	}
	var searched int32
	for _, c := range capacity {
		for _, u := range cfg.Sweep.Loads {
			if p, ok := at[pointOf{c.Policy, int(c.Replication), u}]; !ok || p.Search {
				t.Errorf("%s rep %d: grid load %v missing or marked as a search point", c.Policy, c.Replication, u)
			}
		}
		searched += c.Points
		meets := func(u float64) bool {
			p, ok := at[pointOf{c.Policy, int(c.Replication), u}]
			if !ok {
				t.Fatalf("%s rep %d: no point at %v", c.Policy, c.Replication, u)
			}
			return p.InteractiveSLOAttainment >= cfg.Sweep.Target
		}
		if c.SustainedLoad > 0 && !meets(c.SustainedLoad) {
			t.Errorf("%s rep %d: sustained load %v misses the target", c.Policy, c.Replication, c.SustainedLoad)
		}
		if math.IsInf(c.FailedLoad, 1) || meets(c.FailedLoad) {
			t.Errorf("%s rep %d: failed load %v meets the target", c.Policy, c.Replication, c.FailedLoad)
		}
		if c.FailedLoad-c.SustainedLoad > cfg.Sweep.Tolerance {
			t.Errorf("%s rep %d: bracket [%v, %v] wider than the tolerance", c.Policy, c.Replication, c.SustainedLoad, c.FailedLoad)
		}
	}
	if want := len(cfg.Policies)*cfg.Replications*len(cfg.Sweep.Loads) + int(searched); len(points) != want || int(memo.builds.Load()) != want {
		t.Errorf("%d points, %d built; want %d (grid and search)", len(points), memo.builds.Load(), want)
	}

	// A point is the whole stage run on the same first jobs at the same
	// schedule load: same trace, so the same attainment.
	p := at[pointOf{"edf", 2, 0.9}]
	first := firstJobsFile(t, jobs, cfg.Sweep.Jobs)
	full := cfg
	full.Sweep, full.Load = Sweep{Target: 0.9}, p.ScheduleLoad
	o := runStage(t, full, 7, prof, first)
	var met, inter, interMet int
	for _, r := range o.traces[replicationKey("edf", 2)] {
		if r.SLOMet {
			met++
		}
		if r.Class == generatespec.ClassInteractive {
			inter++
			if r.SLOMet {
				interMet++
			}
		}
	}
	n := len(o.traces[replicationKey("edf", 2)])
	if got, want := p.SLOAttainment, float64(met)/float64(n); got != want {
		t.Errorf("edf rep 2 at 0.9: slo_attainment %v, the full stage's trace gives %v", got, want)
	}
	if got, want := p.InteractiveSLOAttainment, float64(interMet)/float64(inter); got != want {
		t.Errorf("edf rep 2 at 0.9: interactive_slo_attainment %v, the full stage's trace gives %v", got, want)
	}

	// The same run again builds nothing, and writes the same bytes; with
	// no memo, too.
	before := memo.builds.Load()
	again := run(cfg, memo)
	if memo.builds.Load() != before {
		t.Errorf("a second run built %d points", memo.builds.Load()-before)
	}
	base := digests(t, dir)
	for _, d := range []string{again, run(cfg, nil)} {
		for _, name := range []string{SweepFile, CapacityFile} {
			if got := digests(t, d)[name]; got != base[name] {
				t.Errorf("%s differs between runs of the same config", name)
			}
		}
	}

	// A load above every failing one adds exactly its own points: the
	// brackets, and so the search, stay as they were.
	for _, c := range capacity {
		if c.FailedLoad > 4 {
			t.Fatalf("%s rep %d sustains 4; the test needs a load it fails", c.Policy, c.Replication)
		}
	}
	more := cfg
	more.Sweep.Loads = append(slices.Clone(cfg.Sweep.Loads), 6)
	before = memo.builds.Load()
	run(more, memo)
	if got, want := memo.builds.Load()-before, int32(len(cfg.Policies)*cfg.Replications); got != want {
		t.Errorf("adding a load built %d points, want %d", got, want)
	}
	// Another seed or another cluster misses the memo.
	before = memo.builds.Load()
	other := cfg
	other.Cluster = slices.Clone(cfg.Cluster)
	other.Cluster[0].Lanes = 3
	run(other, memo)
	if memo.builds.Load() == before {
		t.Error("a run on another cluster built no point")
	}
}

// firstJobsFile writes the first n jobs of a jobs file to a new one.
func firstJobsFile(t *testing.T, path string, n int64) string {
	t.Helper()
	jobs, err := parquetio.ReadAll[generate.Job](path)
	if err != nil {
		t.Fatal(err)
	}
	return writeJobs(t, jobs[:n])
}

func TestSweepConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		set  func(*Sweep)
		want string
	}{
		{"descending", func(s *Sweep) { s.Loads = []float64{0.5, 0.4} }, "schedule.sweep.loads[1]: loads must ascend, got 0.4 after 0.5"},
		{"zero load", func(s *Sweep) { s.Loads = []float64{0} }, "schedule.sweep.loads[0]: must be a fraction of the cluster's capacity in [0.01, 16], got 0"},
		{"huge load", func(s *Sweep) { s.Loads = []float64{40} }, fmt.Sprintf("schedule.sweep.loads[0]: must be a fraction of the cluster's capacity in [0.01, %d], got 40", MaxSweepLoad)},
		{"negative jobs", func(s *Sweep) { s.Jobs = -1 }, "schedule.sweep.jobs: must be in [0, 2^40]"},
		{"target", func(s *Sweep) { s.Target = 1.5 }, "schedule.sweep.target: must be an SLO attainment in [0.5, 1], got 1.5"},
		{"tolerance", func(s *Sweep) { s.Tolerance = -0.01 }, "schedule.sweep.tolerance: must be 0 (no capacity search) or a fraction of capacity in [0.001, 0.5], got -0.01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.set(&cfg.Sweep)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	// Empty sweep files, not missing ones, when the sweep is off.
	dir := t.TempDir()
	cfg := testConfig()
	cfg.Policies = []string{"fifo"}
	if err := Run(context.Background(), cfg, 1, Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, noisyProfile()), Jobs: generateJobs(t, mlpWorkload(100), 1)}, Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	points, capacity := readSweep(t, dir)
	if len(points) != 0 || len(capacity) != 0 {
		t.Errorf("sweep off: %d points, %d capacities", len(points), len(capacity))
	}
	if _, err := os.Stat(filepath.Join(dir, RunsFile)); err != nil {
		t.Error(err)
	}
}

// TestShardsFillTheMemoForTheStage checks the sweep's parts: the parts of
// every count together simulate each point once, write no file, and leave
// the stage itself, run after them on their memo, nothing to simulate in
// the sweep; its sweep and capacity files are those of a run without
// parts, byte for byte.
func TestShardsFillTheMemoForTheStage(t *testing.T) {
	prof := writeSamples(t, noisyProfile())
	jobs := generateJobs(t, mlpWorkload(6000), 3)
	cfg := sweepConfig()
	whole := t.TempDir()
	if err := Run(context.Background(), cfg, 7, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, Output{Dir: whole, Metadata: testMeta}); err != nil {
		t.Fatal(err)
	}
	if n := schedulespec.Shards(cfg); n != 4 {
		t.Fatalf("Shards = %d, want 4 (2 policies × 2 replications)", n)
	}
	for _, count := range []int{1, 3, 4, 6} {
		t.Run(fmt.Sprint(count, " parts"), func(t *testing.T) {
			memo := &countingMemo{Memo: pipeline.NewMemo(t.TempDir(), "schedule", pipeline.KeyInputs{Code: "test"})}
			for i := range count {
				dir := t.TempDir()
				out := Output{Dir: dir, Metadata: testMeta, Memo: memo, Shard: &Shard{Index: i, Count: count}}
				if err := Run(context.Background(), cfg, 7, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, out); err != nil {
					t.Fatalf("part %d of %d: %v", i, count, err)
				}
				if files, _ := os.ReadDir(dir); len(files) != 0 {
					t.Errorf("part %d of %d wrote %d files", i, count, len(files))
				}
			}
			built := memo.builds.Load()
			dir := t.TempDir()
			if err := Run(context.Background(), cfg, 7, Inputs{Models: catalogtest.ZooFile(t), Samples: prof, Jobs: jobs}, Output{Dir: dir, Metadata: testMeta, Memo: memo}); err != nil {
				t.Fatal(err)
			}
			if again := memo.builds.Load() - built; again != 0 {
				t.Errorf("the stage simulated %d sweep points its parts had not", again)
			}
			points, _ := readSweep(t, dir)
			if int(built) != len(points) {
				t.Errorf("the parts simulated %d points, the sweep has %d: a point was simulated twice or never", built, len(points))
			}
			for _, f := range []string{SweepFile, CapacityFile} {
				a, _ := os.ReadFile(filepath.Join(whole, f))
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from a run without parts", f)
				}
			}
		})
	}
}
