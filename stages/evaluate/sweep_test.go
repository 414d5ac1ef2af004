package evaluate

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestSweepSaysWhereAttainmentIsNotMonotone: a policy whose attainment
// missed the target below the load it sustains (capacity.parquet's dips)
// is named in the section, with the count; one without dips is not.
func TestSweepSaysWhereAttainmentIsNotMonotone(t *testing.T) {
	dir := t.TempDir()
	var points []schedulespec.SweepRow
	for _, p := range []string{"fifo", "edf"} {
		for _, u := range []float64{0.3, 0.5, 0.7} {
			att := 1.0
			if p == "fifo" && u == 0.3 {
				att = 0.8 // fifo places badly while the queues are short
			}
			points = append(points, schedulespec.SweepRow{Policy: p, Replication: 1, Load: u, ScheduleLoad: u, Jobs: 100,
				SLOAttainment: att, InteractiveSLOAttainment: att, MeanE2ES: 0.1, P99E2ES: 0.2})
		}
	}
	caps := []schedulespec.CapacityRow{
		{Policy: "fifo", Replication: 1, Target: 0.99, SustainedLoad: 0.7, FailedLoad: 0.9, Dips: 1},
		{Policy: "edf", Replication: 1, Target: 0.99, SustainedLoad: 0.7, FailedLoad: 0.9},
	}
	if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.SweepFile), points, nil); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.CapacityFile), caps, nil); err != nil {
		t.Fatal(err)
	}
	ev := &section.Evaluation{Config: DefaultConfig(), Schedule: dir, Policies: []string{"fifo", "edf"}}
	ev.Config.Baselines = []string{"fifo"}
	s := &sweepSection{}
	if err := s.Read(ev); err != nil {
		t.Fatal(err)
	}
	sec, err := s.Render(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sec.Markdown, "**not monotone in load** for fifo (1 grid load)") {
		t.Errorf("the section does not say fifo's attainment dips:\n%s", sec.Markdown)
	}
	if strings.Contains(sec.Markdown, "edf (") {
		t.Errorf("the section names edf, whose attainment does not dip:\n%s", sec.Markdown)
	}
}

// TestBeyondCapacity: the Summary says plainly when the main comparison
// offers more than the best policy sustains (beyond its interval's upper
// end), with the figures and the setting that compares the policies where
// they meet the target; within capacity, or within the interval, it says
// nothing.
func TestBeyondCapacity(t *testing.T) {
	sustained := estimate{mean: 0.403, lo: 0.370, hi: 0.437}
	for _, c := range []struct {
		name    string
		offered float64
		est     estimate
		want    string
	}{
		{"beyond", 0.70, sustained, "**The main comparison runs beyond every policy's capacity.** It offers 70.0% of the cluster's capacity; the most any policy sustains with 99.0% of its interactive jobs within SLO is learned's 40.3% (37.0% … 43.7%). At 70.0% the best keeps 95.9% of them (edf+batch+split+migrate). Its figures rank the policies under a load none serves as the target asks; to compare them where they meet it, set schedule.utilization to 37.0% or less.\n"},
		{"within the interval", 0.42, sustained, ""},
		{"below", 0.30, sustained, ""},
		{"one replication, beyond", 0.5, estimate{mean: 0.4, lo: math.NaN(), hi: math.NaN()}, "set schedule.utilization to 40.0% or less"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := beyondText(c.offered, 0.99, "learned", c.est, "edf+batch+split+migrate", 0.959)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("beyondText = %q, want %q", got, c.want)
			}
		})
	}
}

// TestSimplerAmongTheInseparable: where policies that cannot be separated
// include both learned and rule-based ones, the lead names the first
// rule-based one as the one that needs no trained network; otherwise it
// adds nothing.
func TestSimplerAmongTheInseparable(t *testing.T) {
	ev := &section.Evaluation{Policies: []string{"learned", "edf+batch+split+migrate", "fifo", "learned+batch"}}
	for _, tt := range []struct {
		set  []int
		want string
	}{
		{[]int{0, 1}, " Of them, **edf+batch+split+migrate** needs no trained network: it does as well here as learned without a model to train and keep up to date."},
		{[]int{1, 0, 3, 2}, " Of them, **edf+batch+split+migrate** needs no trained network: it does as well here as learned and learned+batch without a model to train and keep up to date."},
		{[]int{1, 2}, ""},
		{[]int{0, 3}, ""},
	} {
		if got := simplerText(ev, tt.set); got != tt.want {
			t.Errorf("simplerText(%v) = %q, want %q", tt.set, got, tt.want)
		}
	}
}
