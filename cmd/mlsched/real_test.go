package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestRealRunEndToEnd runs the whole pipeline with a tiny real execution:
// a few dozen mlp and resnet18 jobs scheduled by fifo and edf on this
// machine's onnxruntime. Each real trace must have the simulator's schema
// and be causal: no job starts before it arrives, no lane runs two batches
// at once, and no batch ends sooner than half the smallest latency the
// profile measured for it. The declared device cannot run for real and is
// said to be left out.
func TestRealRunEndToEnd(t *testing.T) {
	requireORT(t)
	p := newProject(t, "real.yaml")
	p.runAll()
	one := p.stored
	sched := one("schedule/*")
	runs, err := parquetio.ReadAll[schedulespec.RealRunRow](filepath.Join(sched, schedulespec.RealRunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Policy != "fifo" || runs[1].Policy != "edf" {
		t.Fatalf("real runs: %+v", runs)
	}
	cluster, err := parquetio.ReadAll[schedulespec.ClusterRow](filepath.Join(sched, schedulespec.RealDir, schedulespec.ClusterFile))
	if err != nil || len(cluster) != 1 || cluster[0].Device != "cpu" {
		t.Fatalf("real cluster: %+v, %v", cluster, err)
	}
	if show := p.mustCLI("show", "schedule"); !strings.Contains(show, "real:left_out") || !strings.Contains(show, "accel (declared)") {
		t.Errorf("show schedule does not say the declared device was left out:\n%s", show)
	}
	// edf+migrate, with one real device to move jobs to, would repeat
	// edf's run: it is not run, and the report says why.
	if show := p.mustCLI("show", "schedule"); !strings.Contains(show, schedulespec.NoteRealSkipped) || !strings.Contains(show, "edf+migrate") {
		t.Errorf("show schedule does not note edf+migrate as not run for real:\n%s", show)
	}
	if md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md")); err != nil || !strings.Contains(string(md), "Not run for real (schedule.real.policies): edf+migrate.") {
		t.Errorf("the report does not say edf+migrate was not run for real (%v)", err)
	}
	jobs, err := parquetio.ReadAll[generate.Job](one("generate/*/" + generatespec.JobsFile(generatespec.WorkloadEval)))
	if err != nil {
		t.Fatal(err)
	}
	models := map[int64]string{}
	for _, j := range jobs {
		models[j.ID] = j.Model
	}
	floor := smallestLatencies(t, one("profile/*/"+profilespec.SamplesFile))
	simSchema := schemaOf(t, filepath.Join(sched, "fifo", schedulespec.TraceFile))
	for _, r := range runs {
		if r.Jobs < 10 || r.Jobs > 200 {
			t.Errorf("%s: %d jobs in the slice, want a few dozen", r.Policy, r.Jobs)
		}
		if r.Sensitivity != 0.02 || r.FasterTrace == "" || r.SlowerTrace == "" {
			t.Errorf("%s: sensitivity %v, faster %q, slower %q; want the default's two simulations", r.Policy, r.Sensitivity, r.FasterTrace, r.SlowerTrace)
		}
		// The profile's contention rounds time the mlp alone three times
		// over: the prediction band's variation is measured on them.
		if !(r.Variation > 0) || r.BandFasterTrace == "" || r.BandSlowerTrace == "" || !strings.Contains(r.VariationFrom, "mlp fp32 batch") {
			t.Errorf("%s: variation %v (%q), band traces %q and %q; want the profile's run-to-run variation and its two simulations",
				r.Policy, r.Variation, r.VariationFrom, r.BandFasterTrace, r.BandSlowerTrace)
		}
		files := []string{r.Trace, r.SimTrace, r.ReplayTrace, r.FasterTrace, r.SlowerTrace, r.BandFasterTrace, r.BandSlowerTrace}
		if r.Draws != 10 {
			t.Errorf("%s: %d draws, want the default's 10", r.Policy, r.Draws)
		}
		for k := 2; k <= int(r.Draws); k++ {
			files = append(files, schedulespec.RealDrawDir(r.Policy, r.Load, k)+"/"+schedulespec.TraceFile)
		}
		for _, f := range files {
			if s := schemaOf(t, filepath.Join(sched, f)); s != simSchema {
				t.Errorf("%s has another schema than the simulator's trace:\n%s\nwant\n%s", f, s, simSchema)
			}
		}
		trace, err := parquetio.ReadAll[schedulespec.TraceRow](filepath.Join(sched, r.Trace))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(trace)) != r.Jobs {
			t.Errorf("%s: %d trace rows for %d jobs", r.Policy, len(trace), r.Jobs)
		}
		for _, x := range trace {
			if x.Rejected {
				continue
			}
			if x.StartS < x.ArrivalS {
				t.Errorf("%s: job %d starts at %v, before it arrives at %v", r.Policy, x.JobID, x.StartS, x.ArrivalS)
			}
			least, ok := floor[fmt.Sprintf("%s/%d", models[x.JobID], x.BatchSize)]
			if !ok {
				t.Fatalf("%s: job %d ran a %s batch of %d, which the profile has no size at or below", r.Policy, x.JobID, models[x.JobID], x.BatchSize)
			}
			if x.EndS-x.StartS < 0.5*least {
				t.Errorf("%s: job %d's %s batch of %d took %v, under half the least measured %v", r.Policy, x.JobID, models[x.JobID], x.BatchSize, x.EndS-x.StartS, least)
			}
		}
		batches, err := parquetio.ReadAll[schedulespec.BatchRow](filepath.Join(sched, r.Devices))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(batches, func(i, j int) bool { return batches[i].StartS < batches[j].StartS })
		end := map[string]float64{}
		for _, b := range batches {
			lane := fmt.Sprintf("%s/%d", b.Device, b.Lane)
			if b.StartS < end[lane] {
				t.Errorf("%s: batch %d starts on %s at %v, before its batch ending at %v", r.Policy, b.BatchID, lane, b.StartS, end[lane])
			}
			end[lane] = b.EndS
		}
		dispatch, err := parquetio.ReadAll[schedulespec.DispatchRow](filepath.Join(sched, r.Dispatch))
		if err != nil || len(dispatch) != len(batches) {
			t.Fatalf("%s: %d dispatch rows for %d batches: %v", r.Policy, len(dispatch), len(batches), err)
		}
		for _, d := range dispatch {
			if !(d.StartS <= d.HandedS && d.HandedS <= d.PickedS && d.PickedS <= d.RunS && d.RunS < d.EndS && d.EndS <= d.NoticedS) || !(d.ProfileMeanS > 0) {
				t.Errorf("%s: batch %d's moments are out of order: %+v", r.Policy, d.BatchID, d)
			}
		}
		// The replay ran every batch the real run did, each taking the
		// real batch's time: the same busy time on each lane.
		replayed, err := parquetio.ReadAll[schedulespec.BatchRow](filepath.Join(sched, r.ReplayDevices))
		if err != nil {
			t.Fatal(err)
		}
		busy := func(rows []schedulespec.BatchRow) map[string]float64 {
			m := map[string]float64{}
			for _, b := range rows {
				m[fmt.Sprintf("%s/%d samples", b.Device, b.Samples)] += b.EndS - b.StartS
			}
			return m
		}
		if r.ReplayMissed != 0 || len(replayed) != len(batches) {
			t.Errorf("%s: the replay ran %d batches (%d without a real time), the real run %d", r.Policy, len(replayed), r.ReplayMissed, len(batches))
		}
		want := busy(batches)
		for k, v := range busy(replayed) {
			if math.Abs(v-want[k]) > 1e-9*float64(len(batches)) {
				t.Errorf("%s: the replay's %s batches took %v s in all, the real run's %v s", r.Policy, k, v, want[k])
			}
		}
	}
	// Each slice ran again, after both first runs: the same jobs.
	repeats, err := parquetio.ReadAll[schedulespec.RealRepeatRow](filepath.Join(sched, schedulespec.RealRepeatsFile))
	if err != nil || len(repeats) != len(runs) {
		t.Fatalf("%d repeated runs of %d runs: %v", len(repeats), len(runs), err)
	}
	for i, rep := range repeats {
		first := runs[i]
		if rep.Policy != first.Policy || rep.Load != first.Load || rep.Repeat != 2 || rep.Jobs != first.Jobs {
			t.Errorf("repeat %d: %+v, of the run %s at %v with %d jobs", i+1, rep, first.Policy, first.Load, first.Jobs)
		}
		ids := func(rel string) []int64 {
			trace, err := parquetio.ReadAll[schedulespec.TraceRow](filepath.Join(sched, rel))
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, x := range trace {
				if x.StartS < x.ArrivalS {
					t.Errorf("%s: job %d starts at %v, before it arrives at %v", rel, x.JobID, x.StartS, x.ArrivalS)
				}
				out = append(out, x.JobID)
			}
			slices.Sort(out) // a trace lists its jobs as they end
			return out
		}
		if a, b := ids(first.Trace), ids(rep.Trace); !slices.Equal(a, b) {
			t.Errorf("%s ran %d jobs, the first run %d, not the same", rep.Trace, len(b), len(a))
		}
	}
	report, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Fidelity", "### Real against real", "### Sensitivity", "### The prediction band", "**The prediction band** over all the real runs"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md has no %q", want)
		}
	}
	// The profile measured this machine, and the report says how busy it
	// was, whichever it was: quiet, or busy with a warning atop the report.
	_, profile, _ := strings.Cut(string(report), "## Profile\n\n")
	quiet := strings.HasPrefix(profile, "The machine was quiet while the profile measured: other processes used ")
	busy := strings.HasPrefix(profile, "**The profile was measured on a busy machine.** ") &&
		strings.HasPrefix(string(report), "# mlsched evaluation\n\n**The profile was measured on a busy machine.** ")
	if quiet == busy {
		t.Errorf("the Profile section does not open with how busy the machine was:\n%.600s", profile)
	}
	if got := outcomes(p.mustCLI("run", "--force", "evaluate")); got["schedule"] != "cached" {
		t.Errorf("rerun: %v; the real runs must not run again", got)
	}
}

// smallestLatencies maps "model/batch" to the least fp32 latency the
// profile measured at one thread for that model at that batch size or the
// largest measured size below it (a larger batch takes no less).
func smallestLatencies(t *testing.T, path string) map[string]float64 {
	t.Helper()
	samples, err := parquetio.ReadAll[profilespec.Sample](path)
	if err != nil {
		t.Fatal(err)
	}
	least := map[string]map[int32]float64{}
	for _, s := range samples {
		if s.Kind != profilespec.KindInference || s.Concurrency != 1 || s.Threads != 1 || s.Precision != "fp32" {
			continue
		}
		if least[s.Model] == nil {
			least[s.Model] = map[int32]float64{}
		}
		if v, ok := least[s.Model][s.Batch]; !ok || s.LatencyS < v {
			least[s.Model][s.Batch] = s.LatencyS
		}
	}
	out := map[string]float64{}
	for m, byBatch := range least {
		sizes := slices.Sorted(func(yield func(int32) bool) {
			for b := range byBatch {
				if !yield(b) {
					return
				}
			}
		})
		for b := int32(1); b <= 64; b++ {
			v := math.NaN()
			for _, s := range sizes {
				if s <= b {
					v = byBatch[s]
				}
			}
			if !math.IsNaN(v) {
				out[fmt.Sprintf("%s/%d", m, b)] = v
			}
		}
	}
	return out
}

// schemaOf is a Parquet file's schema, printed.
func schemaOf(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pf.Schema().String()
}
