package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/memstat"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// A profile measured beside other work times that work too, and nothing in
// its samples says so: the observer records how busy the machine was
// around the measurements (machine.parquet), and the report warns from it.
const (
	// quietWait is the idle wait before the first measurement, over which
	// the first row's CPU figures are taken: this process does nothing in
	// it, so every busy tick is another's. A second holds /proc/stat's
	// tick (a hundredth of a second) to half a percent of two cores.
	quietWait = time.Second
	// The reference computation (profilespec.ReferenceN) is timed
	// referenceRuns times after one untimed run. Pure Go on one
	// goroutine, it times only whether this process got a core when it
	// asked.
	referenceN    = profilespec.ReferenceN
	referenceRuns = 5
	// minShareInterval is the shortest interval whose shares are taken:
	// 20 ticks of two cores, a share to 5%. A shorter one (an mlp's
	// products take milliseconds) has a tick or two, which would read as
	// 0% or 50%.
	minShareInterval = 100 * time.Millisecond
)

// observer observes the machine between the profile's measurements.
type observer struct {
	// proc is the /proc to read; a test points it at a fixture.
	proc string
	// selfCPU is this process's CPU time so far, every thread's; false
	// where it cannot be had.
	selfCPU func() (time.Duration, bool)

	first   time.Time
	prev    snapshot
	rows    []MachineRow
	a, b, c []float64 // the reference computation's matrices
}

// newObserver returns an observer of the machine whose /proc is at proc.
func newObserver(proc string) *observer {
	n := referenceN * referenceN
	o := &observer{proc: proc, selfCPU: memstat.CPU, a: make([]float64, n), b: make([]float64, n), c: make([]float64, n)}
	for i := range o.a {
		// Fixed, ordinary values: no zeros or denormals to take odd paths.
		o.a[i], o.b[i] = 1+float64(i%7)/8, 1-float64(i%5)/8
	}
	return o
}

// snapshot is what the observer reads at one moment.
type snapshot struct {
	at    time.Time
	cpu   cpuTimes
	cpuOK bool
	self  time.Duration
	// selfOK is false where this process's CPU time could not be read.
	selfOK bool
}

func (o *observer) snapshot() snapshot {
	s := snapshot{at: time.Now()}
	if b, err := os.ReadFile(filepath.Join(o.proc, "stat")); err == nil {
		s.cpu, err = parseStat(string(b))
		s.cpuOK = err == nil
	}
	s.self, s.selfOK = o.selfCPU()
	return s
}

// start takes the first observation: an idle wait of quietWait before the
// profile measures anything (cut short by ctx).
func (o *observer) start(ctx context.Context) {
	o.prev = o.snapshot()
	o.first = o.prev.at
	t := time.NewTimer(quietWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	o.observe(profilespec.DuringBefore)
}

// observe records the interval since the last observation, in which the
// profile measured what during names, then times the reference
// computation; its CPU time is this process's, which the next interval
// leaves out of the others'.
func (o *observer) observe(during string) {
	s := o.snapshot()
	row := shares(o.prev, s)
	row.Seq, row.During = int32(len(o.rows)), during
	row.ElapsedS = s.at.Sub(o.first).Seconds()
	row.Load1, row.Load5, row.Load15 = math.NaN(), math.NaN(), math.NaN()
	if b, err := os.ReadFile(filepath.Join(o.proc, "loadavg")); err == nil {
		if l, err := parseLoadavg(string(b)); err == nil {
			row.Load1, row.Load5, row.Load15 = l[0], l[1], l[2]
		}
	}
	row.ReferenceS = o.reference()
	o.rows = append(o.rows, row)
	o.prev = s
}

// shares are the CPU figures of the interval from prev to cur: the
// fractions of all cores' time that other processes used, that this
// process used and that a hypervisor stole. The busy ticks of
// /proc/stat are every process's, so the others' share is the busy share
// less this process's own (its CPU time over the interval's wall time
// on every core), held to [0, 1]: the two clocks tick apart by a tick or
// two. A figure that cannot be had is NaN, as are the shares of /proc/stat
// over an interval shorter than minShareInterval.
func shares(prev, cur snapshot) MachineRow {
	r := MachineRow{IntervalS: cur.at.Sub(prev.at).Seconds(), Cores: int32(runtime.NumCPU()),
		OthersCPU: math.NaN(), SelfCPU: math.NaN(), Steal: math.NaN()}
	if cur.cpuOK && cur.cpu.cores > 0 {
		r.Cores = int32(cur.cpu.cores)
	}
	// A core taken offline takes its ticks out of the sums: such an
	// interval's shares cannot be had, nor those of one too short to
	// count ticks over.
	cpuOK := prev.cpuOK && cur.cpuOK && cur.cpu.cores > 0 && cur.cpu.total > prev.cpu.total &&
		cur.cpu.busy >= prev.cpu.busy && cur.cpu.steal >= prev.cpu.steal && cur.at.Sub(prev.at) >= minShareInterval
	if prev.selfOK && cur.selfOK && r.IntervalS > 0 {
		r.SelfCPU = (cur.self - prev.self).Seconds() / (r.IntervalS * float64(r.Cores))
	}
	if !cpuOK {
		return r
	}
	total := float64(cur.cpu.total - prev.cpu.total)
	r.Steal = float64(cur.cpu.steal-prev.cpu.steal) / total
	if !math.IsNaN(r.SelfCPU) {
		r.OthersCPU = min(1, max(0, float64(cur.cpu.busy-prev.cpu.busy)/total-r.SelfCPU))
	}
	return r
}

// reference times the reference computation: the median of its timed
// runs, in seconds.
func (o *observer) reference() float64 {
	multiply(o.c, o.a, o.b, referenceN)
	runs := make([]float64, referenceRuns)
	for i := range runs {
		t0 := time.Now()
		multiply(o.c, o.a, o.b, referenceN)
		runs[i] = time.Since(t0).Seconds()
	}
	slices.Sort(runs)
	return runs[len(runs)/2]
}

// multiply sets c to the n×n product a·b, row-major.
func multiply(c, a, b []float64, n int) {
	for i := range n {
		ci := c[i*n : (i+1)*n]
		clear(ci)
		for k := range n {
			aik, bk := a[i*n+k], b[k*n:(k+1)*n]
			for j := range ci {
				ci[j] += aik * bk[j]
			}
		}
	}
}

// cpuTimes are /proc/stat's times summed over every core, in ticks, and
// how many cores it lists.
type cpuTimes struct {
	busy, steal, total uint64
	cores              int
}

// parseStat reads /proc/stat: the "cpu" line's user, nice, system, idle,
// iowait, irq, softirq and steal columns, and the count of its cpuN
// lines. Busy is user, nice, system, irq and softirq; the total adds idle,
// iowait and steal. guest and guest_nice are left out, being counted in
// user and nice already. A kernel before 2.6.11 has no steal column (and
// before 2.6 no iowait, irq or softirq): what it lacks counts as zero.
func parseStat(text string) (cpuTimes, error) {
	var t cpuTimes
	found := false
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || !strings.HasPrefix(f[0], "cpu"):
			continue
		case f[0] != "cpu":
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				t.cores++
			}
			continue
		}
		if len(f) < 5 {
			return cpuTimes{}, fmt.Errorf("cpu line has %d columns, want at least user, nice, system and idle", len(f)-1)
		}
		found = true
		for i, col := range f[1:min(len(f), 9)] {
			v, err := strconv.ParseUint(col, 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("cpu line, column %d: %w", i+1, err)
			}
			t.total += v
			switch i {
			case 0, 1, 2, 5, 6: // user, nice, system, irq, softirq
				t.busy += v
			case 7:
				t.steal = v
			}
		}
	}
	if !found {
		return cpuTimes{}, errors.New("no cpu line")
	}
	return t, nil
}

// parseLoadavg reads /proc/loadavg's 1-, 5- and 15-minute load averages.
func parseLoadavg(text string) ([3]float64, error) {
	var l [3]float64
	f := strings.Fields(text)
	if len(f) < 3 {
		return l, fmt.Errorf("%d fields, want at least 3", len(f))
	}
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return l, fmt.Errorf("field %d: not a load average: %q", i+1, f[i])
		}
		l[i] = v
	}
	return l, nil
}
