package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/mlsched/mlsched/pipeline/memstat"
)

// rssChild, set in the environment to a JSON rssJob, makes this test
// binary a child that runs the schedule stage once and prints its peak
// resident set in bytes: BenchmarkStagePeakRSS's subject, alone in its
// process as the stage is under mlsched's worker.
const rssChild = "MLSCHED_SCHEDULE_RSS_CHILD"

// rssJob is what the child runs: fifo alone on the inputs, at the load.
type rssJob struct {
	In   Inputs
	Load float64
	Dir  string
}

func TestMain(m *testing.M) {
	if s := os.Getenv(rssChild); s != "" {
		os.Exit(runRSSChild(s))
	}
	os.Exit(m.Run())
}

func runRSSChild(spec string) int {
	var j rssJob
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg := testConfig()
	cfg.Policies, cfg.Load = []string{"fifo"}, j.Load
	if err := Run(context.Background(), cfg, 1, j.In, Output{Dir: j.Dir, Metadata: testMeta}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	peak, ok := memstat.PeakRSS()
	if !ok {
		return 3
	}
	fmt.Println(peak)
	return 0
}

// BenchmarkStagePeakRSS is the memory figure: the peak resident
// set of a process that runs the whole schedule stage, fifo alone, on
// 1M, 3M and 10M eval jobs of generate's default mix at 80% of the
// default cluster's capacity, trace and devices files written (no sweep,
// studies or real runs; one replication). The stage streams: the figure
// should not grow with the jobs. Each run is a child process (this test
// binary, in the mode rssChild selects), so that the figure is the
// stage's alone, as /usr/bin/time -v gives it for mlsched's worker; it is
// the child's own high-water mark (memstat.PeakRSS), not the rusage a
// parent reads, which Linux inherits from the parent. Run it with
// -benchtime 1x.
func BenchmarkStagePeakRSS(b *testing.B) {
	if _, ok := memstat.PeakRSS(); !ok {
		b.Skip("no peak resident set size on this platform")
	}
	for _, n := range []int{1_000_000, 3_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			cfg, in := stageWorkload(b, n)
			dir := b.TempDir()
			spec, err := json.Marshal(rssJob{In: in, Load: cfg.Load, Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			var peak uint64
			for b.Loop() {
				// A fresh directory each time, as the runner gives a stage.
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), rssChild+"="+string(spec))
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("the stage's child process: %v", err)
				}
				var p uint64
				if _, err := fmt.Sscan(string(out), &p); err != nil {
					b.Fatalf("the stage's child process printed %q: %v", out, err)
				}
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(policyFileBytes(b, dir, []string{"fifo"}, TraceFile)+policyFileBytes(b, dir, []string{"fifo"}, DevicesFile))/(1<<20), "trace+devices-MiB")
		})
	}
}
