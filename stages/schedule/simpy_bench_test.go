package schedule

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/memstat"
)

// simpyJobs is the size of both sides of BenchmarkStageAgainstSimPy.
const simpyJobs = 1_000_000

// BenchmarkStageAgainstSimPy is the yardstick for simulation
// speed: the whole stage (reading the workload, simulating, writing the
// trace and devices files) on a million eval jobs under fifo and under edf
// alone, with no sweep, studies or real runs (BenchmarkScheduleStage's
// config), against SimPy on a plain M/G/4 FIFO queue of as many jobs at
// the same 80% load and no output (testdata/simpy_mg4.py). Each iteration
// runs all three, one after the other, so that the machine's load weighs
// on them alike. It reports the CPU time of each (the stage's: every
// thread of this process; SimPy's: its process's), the stage's jobs per
// CPU-second, and how many times the stage's CPU time SimPy's is.
//
// SimPy is Debian's python3-simpy3 (make bench-tools installs it), run by
// the Python it was installed for: $SIMPY_PYTHON, else /usr/bin/python3,
// else python3 on PATH, the first that imports simpy. Without one the
// benchmark skips, saying so.
func BenchmarkStageAgainstSimPy(b *testing.B) {
	python, err := simpyPython()
	if err != nil {
		b.Skip(err)
	}
	if _, ok := memstat.CPU(); !ok {
		b.Skip("this system gives no process CPU time (getrusage)")
	}
	cfg, in := stageWorkload(b, simpyJobs)
	policies := []string{"fifo", "edf"}
	cpu := make([]time.Duration, len(policies))
	var simpy time.Duration
	for b.Loop() {
		t, err := runSimPy(python, simpyJobs)
		if err != nil {
			b.Fatal(err)
		}
		simpy += t
		for i, p := range policies {
			cfg.Policies = []string{p}
			used, err := stageCPU(cfg, in, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			cpu[i] += used
		}
	}
	n := float64(b.N)
	b.ReportMetric(simpy.Seconds()/n, "simpy-cpu-s")
	for i, p := range policies {
		b.ReportMetric(cpu[i].Seconds()/n, p+"-cpu-s")
		b.ReportMetric(simpyJobs*n/cpu[i].Seconds(), p+"-jobs/cpu-s")
		b.ReportMetric(simpy.Seconds()/cpu[i].Seconds(), p+"-x-simpy")
	}
}

// simpyPython returns the first Python that imports simpy, or why none
// does.
func simpyPython() (string, error) {
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("SIMPY_PYTHON"); p != "" {
		candidates = []string{p}
	}
	var tried []string
	for _, c := range candidates {
		if err := exec.Command(c, "-c", "import simpy").Run(); err == nil {
			return c, nil
		}
		tried = append(tried, c)
	}
	return "", fmt.Errorf("no Python that imports simpy (tried %s): make bench-tools installs Debian's python3-simpy3, or set SIMPY_PYTHON",
		strings.Join(tried, ", "))
}

// runSimPy runs testdata/simpy_mg4.py on jobs jobs and returns its
// process's CPU time, user and system, having checked that it served
// them all.
func runSimPy(python string, jobs int) (time.Duration, error) {
	cmd := exec.Command(python, "testdata/simpy_mg4.py", fmt.Sprint(jobs))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("simpy_mg4.py: %w: %s", err, errOut.Bytes())
	}
	if want := fmt.Sprintf("served %d ", jobs); !strings.HasPrefix(out.String(), want) {
		return 0, fmt.Errorf("simpy_mg4.py printed %q, want a line starting %q", out.String(), want)
	}
	st := cmd.ProcessState
	return st.UserTime() + st.SystemTime(), nil
}
