package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mlsched/mlsched/pipeline"
)

func (a *app) runCmd() *cobra.Command {
	var opts pipeline.RunOptions
	var noWait, noRemote, noPush bool
	var executor string
	var every time.Duration
	var tflags temporalFlags
	cmd := &cobra.Command{
		Use:   "run [STAGE...]",
		Short: "Bring stages (default: all) up to date, with their upstreams",
		Long: `Run brings the named stages, and every stage they depend on, up to date.
A stage whose cache key matches a stored version is not run. Prints one line
per stage: cached, ran, pinned or fetched, its version and its duration.

With a remote in the config (remote: s3://bucket/prefix?…), a stage that
must run is first looked for there: a version someone already computed is
downloaded, its files checked against their digests, instead of computed
again ("fetched"); each version the run computes is pushed there. A line
under the stage's says what each fetch and push moved. A remote that
cannot be reached fails the run, which says so: --no-remote runs without
it, --no-push without pushing.`,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args)
			if err != nil {
				return err
			}
			if opts.Jobs < 1 {
				return usageError{fmt.Errorf("-j %d: want at least 1", opts.Jobs)}
			}
			opts.Targets, opts.NoWait = args, noWait
			if noRemote {
				l.p.Remote = nil
			}
			l.p.ReadOnlyRemote = noPush
			if executor != executorLocal && executor != executorTemporal {
				return usageError{fmt.Errorf("--executor %q: want %s or %s", executor, executorLocal, executorTemporal)}
			}
			if executor == executorTemporal && noRemote {
				return usageError{errors.New("--executor temporal needs the remote: drop --no-remote")}
			}
			if every <= 0 {
				return usageError{fmt.Errorf("--progress-every %s: want a positive duration, e.g. 10s", every)}
			}
			opts.Waiting = l.p.Waiting
			rep := newRunReporter(a.stdout, a.stderr, every)
			if l.remote != nil {
				l.remote.moved = rep.moved
			}
			if executor == executorTemporal {
				exec, err := a.temporalExecutor(cmd.Context(), l, tflags, rep.note)
				if err != nil {
					rep.close()
					return err
				}
				l.p.Executor = exec
			}
			opts.Reporter = pipeline.ReporterFunc(func(e pipeline.Event) {
				// From the first stage that runs on, an interrupt stops
				// the stages cleanly rather than ending the process.
				if e.Kind == pipeline.EventStart && a.interrupts != nil {
					a.interrupts.catch()
				}
				rep.Report(e)
			})
			_, err = l.p.Run(cmd.Context(), opts)
			rep.close()
			if f, ok := l.p.Executor.(pipeline.Finisher); ok {
				// What the executor started elsewhere (the Temporal
				// dispatcher's workflow) ends with the run: done, or
				// cancelled (which stops its stages on the workers) after
				// a failure.
				ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 30*time.Second)
				defer cancel()
				if ferr := f.Finish(ctx, err != nil); ferr != nil && err == nil {
					err = fmt.Errorf("end the run's workflow: %w", ferr)
				}
			}
			return explainRemote(err, executor)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Force, "force", false, "rerun the named stages (default: all) even if cached")
	f.BoolVar(&opts.Locked, "locked", false, "fail, running nothing, if any version would differ from pipeline.lock")
	f.IntVarP(&opts.Jobs, "jobs", "j", 2, "run at most `N` stages at once")
	f.BoolVar(&noWait, "no-wait", false, "fail at once if another mlsched holds the store")
	f.BoolVar(&noRemote, "no-remote", false, "neither fetch from nor push to the config's remote")
	f.BoolVar(&noPush, "no-push", false, "fetch from the config's remote, but push nothing to it")
	f.DurationVar(&every, "progress-every", progressEvery, "when stderr is a log, not a terminal: print each running stage's progress this often")
	f.StringVar(&executor, "executor", executorLocal, "where stages run: `local` (here), or temporal (on 'mlsched worker' machines, through the remote)")
	tflags.add(f)
	tflags.addRun(f)
	return cmd
}

// remoteError is a fetch or push that the remote failed during a run.
type remoteError struct {
	op  string // "fetch" or "push"
	err error
}

func (e *remoteError) Error() string { return e.err.Error() }
func (e *remoteError) Unwrap() error { return e.err }

// explainRemote adds to a run's error, when the remote failed it, how to
// run without the remote.
//
// A run whose remote is out of reach fails rather than going on without
// it, because a silent fall-back would hide a misconfigured or lost team
// store: a typo in the endpoint or expired credentials would look like a
// run that worked, while every version was computed again here and none
// reached the team. The person at the keyboard decides, with the flag
// the error names, which is one word to add.
func explainRemote(err error, executor string) error {
	var re *remoteError
	if !errors.As(err, &re) {
		return err
	}
	switch {
	case executor == executorTemporal:
		return fmt.Errorf("%w\n(--executor temporal needs the remote; to run here without it, use --executor local --no-remote)", err)
	case re.op == "push":
		return fmt.Errorf("%w\n(to run on without pushing, add --no-push; --no-remote also fetches nothing)", err)
	}
	return fmt.Errorf("%w\n(to run without the remote, fetching and pushing nothing, add --no-remote)", err)
}

// The executors run can use.
const (
	executorLocal    = "local"
	executorTemporal = "temporal"
)

// runReporter prints one line per finished stage on stdout and, on
// stderr, the progress of the stages still running with an estimate of the
// time left: a live line when stderr is a terminal, else a line per stage
// every progressEvery.
type runReporter struct {
	out, errw io.Writer
	live      bool

	mu      sync.Mutex
	running map[string]*progress
	drawn   bool
	// reported holds the stages whose line is printed; held, the lines of
	// what a fetch or push moved for a stage whose line is not yet.
	reported map[string]bool
	held     map[string][]string
	stop     chan struct{}
	stopped  chan struct{}
}

// progressEvery is how often, by default, a stage's progress is printed
// when stderr is not a terminal (a log): rarely enough not to flood it.
// run --progress-every sets it.
const progressEvery = 30 * time.Second

type progress struct {
	start       time.Time
	done, total int64
	// first is when the stage first reported its progress, and done0 how
	// far it was then: the rate is measured from there, so that work a
	// stage does before it counts (schedule's real runs) does not slow
	// the estimate of the counted work.
	first time.Time
	done0 int64
	// previous is how long the stage's last run with this config took
	// (pipeline.Event.Previous), or zero.
	previous time.Duration
}

// update records a progress report at now. A first report of no work
// done starts the count there; one of some work done counts it from the
// stage's start.
func (p *progress) update(now time.Time, done, total int64) {
	if p.first.IsZero() || total != p.total {
		p.first, p.done0 = now, done
		if done > 0 {
			p.first, p.done0 = p.start, 0
		}
	}
	p.done, p.total = done, total
}

// eta is the time left for a stage at its rate since it first reported
// progress, or false while that cannot be told.
func (p *progress) eta(now time.Time) (time.Duration, bool) {
	if p.total <= 0 || p.done <= p.done0 || p.done > p.total {
		return 0, false
	}
	spent := now.Sub(p.first)
	return time.Duration(float64(spent) * float64(p.total-p.done) / float64(p.done-p.done0)), true
}

// describe says how far a stage is: elapsed time, and with progress a
// bar (on a terminal), the percentage and the time left.
func (p *progress) describe(name string, now time.Time, withBar bool) string {
	s := fmt.Sprintf("%s %s", name, formatDuration(now.Sub(p.start)))
	if p.total > 0 {
		frac := float64(p.done) / float64(p.total)
		if withBar {
			s += " " + bar(frac, 20)
		}
		s += fmt.Sprintf(" %3.0f%%", 100*frac)
		if left, ok := p.eta(now); ok {
			s += ", about " + left.Round(time.Second).String() + " left"
			if whole := now.Sub(p.start) + left; p.previous > 0 && whole > p.previous*slower/100 {
				s += fmt.Sprintf(", %.1f× the %s its last run with this config took: is the machine busy?",
					float64(whole)/float64(p.previous), formatDuration(p.previous))
			}
		}
	}
	return s
}

// slower is the percentage of a stage's last run time beyond which its
// projected time is worth a word: run-to-run spread stays well below it.
const slower = 130

// newRunReporter prints stage lines to out and progress to errw: a live
// line redrawn on a terminal, or a line per running stage every every
// for a log.
func newRunReporter(out, errw io.Writer, every time.Duration) *runReporter {
	r := &runReporter{out: out, errw: errw, running: map[string]*progress{}, reported: map[string]bool{}, held: map[string][]string{}}
	r.stop, r.stopped = make(chan struct{}), make(chan struct{})
	if f, ok := errw.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		r.live, every = true, 100*time.Millisecond
	}
	go r.animate(every)
	return r
}

// Report implements pipeline.Reporter.
func (r *runReporter) Report(e pipeline.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case pipeline.EventStart:
		r.running[e.Stage] = &progress{start: time.Now(), previous: e.Previous}
	case pipeline.EventProgress:
		if p := r.running[e.Stage]; p != nil {
			p.update(time.Now(), e.Done, e.Total)
		}
	case pipeline.EventDone:
		delete(r.running, e.Stage)
		r.clearLocked()
		line := fmt.Sprintf("%-10s %-7s %-8s %8s", e.Stage, e.Outcome, shortVersion(e.Version), formatDuration(e.Duration))
		if e.Reason != "" && e.Outcome == pipeline.Ran {
			line += "  (" + e.Reason + ")"
		}
		fmt.Fprintln(r.out, strings.TrimRight(line, " "))
		if e.Repaired != "" {
			fmt.Fprintf(r.out, "  repaired: %s\n", e.Repaired)
		}
		r.reported[e.Stage] = true
		for _, l := range r.held[e.Stage] {
			fmt.Fprintf(r.out, "  %s\n", l)
		}
		delete(r.held, e.Stage)
	}
}

// note prints a line on stderr, as "mlsched: line", escaped: something
// a user should see while the run goes on (a retried stage).
func (r *runReporter) note(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLocked()
	fmt.Fprintf(r.errw, "mlsched: %s\n", escapeControl(line))
}

// moved prints a line saying what a fetch or push of stage's version
// moved, indented under the stage's line: held until that line is
// printed (the runner fetches and pushes before it reports the stage), or
// at once if it was (an input a distributed run pushes).
func (r *runReporter) moved(stage, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.reported[stage] {
		r.held[stage] = append(r.held[stage], line)
		return
	}
	r.clearLocked()
	fmt.Fprintf(r.out, "  %s\n", line)
}

// animate redraws the live line, or prints the progress lines, while
// stages run.
func (r *runReporter) animate(every time.Duration) {
	defer close(r.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.live {
				r.drawLocked()
			} else {
				r.logLocked()
			}
			r.mu.Unlock()
		}
	}
}

func (r *runReporter) names() []string {
	names := make([]string, 0, len(r.running))
	for n := range r.running {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *runReporter) drawLocked() {
	if len(r.running) == 0 {
		r.clearLocked()
		return
	}
	now := time.Now()
	var parts []string
	for _, n := range r.names() {
		parts = append(parts, r.running[n].describe(n, now, true))
	}
	fmt.Fprintf(r.errw, "\r\033[Krunning: %s", strings.Join(parts, " | "))
	r.drawn = true
}

// logLocked prints one line per running stage, for a log.
func (r *runReporter) logLocked() {
	now := time.Now()
	for _, n := range r.names() {
		fmt.Fprintf(r.errw, "mlsched: running %s\n", r.running[n].describe(n, now, false))
	}
}

func (r *runReporter) clearLocked() {
	if r.drawn {
		fmt.Fprint(r.errw, "\r\033[K")
		r.drawn = false
	}
}

func (r *runReporter) close() {
	close(r.stop)
	<-r.stopped
	r.mu.Lock()
	r.clearLocked()
	// A stage that never reported (a run that stopped) still moved what
	// it moved.
	for _, stage := range slices.Sorted(maps.Keys(r.held)) {
		for _, l := range r.held[stage] {
			fmt.Fprintf(r.out, "  %s\n", l)
		}
	}
	r.mu.Unlock()
}

func bar(frac float64, width int) string {
	frac = min(max(frac, 0), 1)
	n := int(frac * float64(width))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

func shortVersion(v string) string {
	if len(v) > 8 {
		return v[:8]
	}
	if v == "" {
		return "-"
	}
	return v
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
