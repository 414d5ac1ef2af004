package profile

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		file string
		want cpuTimes
	}{
		// busy = user + nice + system + irq + softirq; the total adds
		// idle, iowait and steal; guest is in user already.
		{"proc/stat", cpuTimes{busy: 3697149 + 427 + 1069263 + 0 + 18975, steal: 12647,
			total: 3697149 + 427 + 1069263 + 1568425 + 42849 + 0 + 18975 + 12647, cores: 2}},
		// No steal column: steal is zero, and the total is what there is.
		{"proc-2.6.10/stat", cpuTimes{busy: 3697149 + 427 + 1069263 + 0 + 18975, steal: 0,
			total: 3697149 + 427 + 1069263 + 1568425 + 42849 + 0 + 18975, cores: 4}},
		// Only user, nice, system and idle.
		{"proc-2.4/stat", cpuTimes{busy: 3697149 + 427 + 1069263, total: 3697149 + 427 + 1069263 + 1568425, cores: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseStat(string(b))
			if err != nil || got != tt.want {
				t.Errorf("parseStat(%s) = %+v, %v, want %+v", tt.file, got, err, tt.want)
			}
		})
	}
	for _, bad := range []struct{ text, want string }{
		{"", "no cpu line"},
		{"cpu0 1 2 3 4\nintr 5\n", "no cpu line"},
		{"cpu  1 2 3\n", "cpu line has 3 columns, want at least user, nice, system and idle"},
		{"cpu  1 2 x 4\n", "cpu line, column 3"},
		{"cpu  1 2 3 -4\n", "cpu line, column 4"},
	} {
		if _, err := parseStat(bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("parseStat(%q) = %v, want an error containing %q", bad.text, err, bad.want)
		}
	}
}

func TestParseLoadavg(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := parseLoadavg(string(b)); err != nil || got != [3]float64{10.15, 6.84, 5.23} {
		t.Errorf("parseLoadavg(testdata/proc/loadavg) = %v, %v, want [10.15 6.84 5.23]", got, err)
	}
	for _, bad := range []struct{ text, want string }{
		{"", "0 fields, want at least 3"},
		{"0.5 0.4\n", "2 fields, want at least 3"},
		{"0.5 x 0.3 1/2 3\n", `field 2: not a load average: "x"`},
		{"0.5 0.4 -1 1/2 3\n", `field 3: not a load average: "-1"`},
		{"NaN 0.4 0.3 1/2 3\n", `field 1: not a load average: "NaN"`},
	} {
		if _, err := parseLoadavg(bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("parseLoadavg(%q) = %v, want an error containing %q", bad.text, err, bad.want)
		}
	}
}

// TestShares checks the arithmetic of an interval's figures: a 2-core
// machine observed over 10 s has 20 core-seconds, 2000 ticks.
func TestShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64, busy, steal, total uint64, self time.Duration) snapshot {
		return snapshot{at: t0.Add(time.Duration(s * float64(time.Second))), cpu: cpuTimes{busy: busy, steal: steal, total: total, cores: 2},
			cpuOK: true, self: self, selfOK: true}
	}
	start := at(0, 5000, 100, 10000, 3*time.Second)
	tests := []struct {
		name                string
		cur                 snapshot
		prev                snapshot
		others, self, steal float64
	}{
		{"quiet: this process's ticks alone", at(10, 5000+1000, 100, 12000, 13*time.Second), start, 0, 0.5, 0},
		{"others used a core beside this process's", at(10, 5000+1900, 100, 12000, 13*time.Second), start, 0.45, 0.5, 0},
		{"idle process, others busy", at(10, 5000+1600, 100, 12000, 3*time.Second), start, 0.8, 0, 0},
		{"a hypervisor stole 5%", at(10, 5000+1000, 100+100, 12000, 13*time.Second), start, 0, 0.5, 0.05},
		// The process's clock is ahead of the ticks: never below zero.
		{"self ahead of the ticks", at(10, 5000+990, 100, 12000, 13*time.Second), start, 0, 0.5, 0},
		{"no /proc/stat", snapshot{at: t0.Add(10 * time.Second), self: 13 * time.Second, selfOK: true},
			snapshot{at: t0, self: 3 * time.Second, selfOK: true}, math.NaN(), 10.0 / (10 * float64(runtime.NumCPU())), math.NaN()},
		{"no getrusage", snapshot{at: t0.Add(10 * time.Second), cpu: cpuTimes{busy: 6000, steal: 100, total: 12000, cores: 2}, cpuOK: true},
			snapshot{at: t0, cpu: cpuTimes{busy: 5000, steal: 100, total: 10000, cores: 2}, cpuOK: true}, math.NaN(), math.NaN(), 0},
		{"a core went offline", at(10, 4000, 100, 12000, 13*time.Second), start, math.NaN(), 0.5, math.NaN()},
		{"no tick passed", at(0.001, 5000, 100, 10000, 3*time.Second), start, math.NaN(), 0, math.NaN()},
		{"two ticks in 10 ms: too few to count", at(0.01, 5000+2, 100, 10000+2, 3*time.Second), start, math.NaN(), 0, math.NaN()},
	}
	same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-12 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := shares(tt.prev, tt.cur)
			if !same(r.OthersCPU, tt.others) || !same(r.SelfCPU, tt.self) || !same(r.Steal, tt.steal) {
				t.Errorf("shares = others %v, self %v, steal %v; want %v, %v, %v", r.OthersCPU, r.SelfCPU, r.Steal, tt.others, tt.self, tt.steal)
			}
			if want := tt.cur.at.Sub(tt.prev.at).Seconds(); r.IntervalS != want {
				t.Errorf("interval %v s, want %v", r.IntervalS, want)
			}
		})
	}
}

// TestObserverWithoutProc observes a machine whose /proc lacks what it
// reads, or holds fixed text: what cannot be had is NaN, never a failure,
// and the reference timing is still taken.
func TestObserverWithoutProc(t *testing.T) {
	for _, tt := range []struct {
		proc  string
		load1 float64
	}{
		{t.TempDir(), math.NaN()},
		{"testdata/proc", 10.15},
	} {
		o := newObserver(tt.proc)
		o.prev = o.snapshot()
		o.first = o.prev.at
		o.observe("mlp fp32 threads 1")
		o.observe("matmul 256")
		if len(o.rows) != 2 {
			t.Fatalf("%s: %d rows, want 2", tt.proc, len(o.rows))
		}
		for i, r := range o.rows {
			if int(r.Seq) != i || r.ReferenceS <= 0 || r.Cores < 1 || r.IntervalS <= 0 || r.ElapsedS < r.IntervalS {
				t.Errorf("%s: row %d = %+v", tt.proc, i, r)
			}
			// The fixture's counters never move, so no tick passes.
			if !math.IsNaN(r.OthersCPU) || !math.IsNaN(r.Steal) {
				t.Errorf("%s: row %d: others %v, steal %v, want NaN", tt.proc, i, r.OthersCPU, r.Steal)
			}
			if r.Load1 != tt.load1 && !(math.IsNaN(r.Load1) && math.IsNaN(tt.load1)) {
				t.Errorf("%s: row %d: load1 %v, want %v", tt.proc, i, r.Load1, tt.load1)
			}
		}
		if o.rows[1].During != "matmul 256" {
			t.Errorf("%s: row 1 during %q", tt.proc, o.rows[1].During)
		}
	}
}

// TestObserverSeesABusyMachine runs a child process that burns a core
// between two observations: its CPU time must show among the others', and
// none of this process's.
func TestObserverSeesABusyMachine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat on this machine")
	}
	o := newObserver("/proc")
	o.prev = o.snapshot()
	o.first = o.prev.at
	burner := exec.Command("sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	burner.Process.Kill()
	burner.Wait()
	o.observe("burner")
	r := o.rows[0]
	burnt := (burner.ProcessState.UserTime() + burner.ProcessState.SystemTime()).Seconds()
	others := r.OthersCPU * r.IntervalS * float64(r.Cores)
	// A tick or two apart per core: the kernel's sampling of the ticks.
	if slack := 3 * float64(r.Cores) / 100; others < burnt-slack {
		t.Errorf("the burner used %.2f core-seconds, others' CPU shows %.2f (%.1f%% of %d cores over %.2f s)",
			burnt, others, 100*r.OthersCPU, r.Cores, r.IntervalS)
	}
	if !(r.OthersCPU >= 0 && r.OthersCPU <= 1) || !(r.SelfCPU >= 0 && r.SelfCPU < 0.5) || !(r.Steal >= 0 && r.Steal <= 1) {
		t.Errorf("row %+v: want shares in [0, 1], and this process nearly idle", r)
	}
	if !(r.Load1 >= 0) || r.ReferenceS <= 0 {
		t.Errorf("row %+v: want a load average and a reference timing", r)
	}
}
