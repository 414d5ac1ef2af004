package main

import (
	"fmt"
	"io"
	"os"
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
	var noWait bool
	cmd := &cobra.Command{
		Use:   "run [STAGE...]",
		Short: "Bring stages (default: all) up to date, with their upstreams",
		Long: `Run brings the named stages, and every stage they depend on, up to date.
A stage whose cache key matches a stored version is not run. Prints one line
per stage: cached, ran or pinned, its version and its duration.`,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.loadFor(args)
			if err != nil {
				return err
			}
			if opts.Jobs < 1 {
				return usageError{fmt.Errorf("-j %d: want at least 1", opts.Jobs)}
			}
			opts.Targets, opts.NoWait = args, noWait
			opts.Waiting = func(holder string) {
				fmt.Fprintf(a.stderr, "mlsched: waiting for the store %s, in use by %s\n", l.p.Store.Location(), holder)
			}
			rep := newRunReporter(a.stdout)
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
			return err
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Force, "force", false, "rerun the named stages (default: all) even if cached")
	f.BoolVar(&opts.Locked, "locked", false, "fail, running nothing, if any version would differ from pipeline.lock")
	f.IntVarP(&opts.Jobs, "jobs", "j", 2, "run at most `N` stages at once")
	f.BoolVar(&noWait, "no-wait", false, "fail at once if another mlsched holds the store")
	return cmd
}

// runReporter prints one line per finished stage and, on a terminal, a live
// status line for the stages still running.
type runReporter struct {
	out  io.Writer
	live bool

	mu      sync.Mutex
	running map[string]*progress
	drawn   bool
	stop    chan struct{}
	stopped chan struct{}
}

type progress struct {
	start       time.Time
	done, total int64
}

func newRunReporter(out io.Writer) *runReporter {
	r := &runReporter{out: out, running: map[string]*progress{}}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		r.live = true
		r.stop, r.stopped = make(chan struct{}), make(chan struct{})
		go r.animate()
	}
	return r
}

// Report implements pipeline.Reporter.
func (r *runReporter) Report(e pipeline.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case pipeline.EventStart:
		r.running[e.Stage] = &progress{start: time.Now()}
	case pipeline.EventProgress:
		if p := r.running[e.Stage]; p != nil {
			p.done, p.total = e.Done, e.Total
		}
	case pipeline.EventDone:
		delete(r.running, e.Stage)
		r.clearLocked()
		line := fmt.Sprintf("%-10s %-7s %-8s %8s", e.Stage, e.Outcome, shortVersion(e.Version), formatDuration(e.Duration))
		if e.Reason != "" && e.Outcome == pipeline.Ran {
			line += "  (" + e.Reason + ")"
		}
		fmt.Fprintln(r.out, strings.TrimRight(line, " "))
	}
}

// animate redraws the live line while stages run.
func (r *runReporter) animate() {
	defer close(r.stopped)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			r.drawLocked()
			r.mu.Unlock()
		}
	}
}

func (r *runReporter) drawLocked() {
	if len(r.running) == 0 {
		r.clearLocked()
		return
	}
	names := make([]string, 0, len(r.running))
	for n := range r.running {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		p := r.running[n]
		s := fmt.Sprintf("%s %s", n, formatDuration(time.Since(p.start)))
		if p.total > 0 {
			s += fmt.Sprintf(" %s %3.0f%%", bar(float64(p.done)/float64(p.total), 20), 100*float64(p.done)/float64(p.total))
		}
		parts = append(parts, s)
	}
	fmt.Fprintf(r.out, "\r\033[Krunning: %s", strings.Join(parts, " | "))
	r.drawn = true
}

func (r *runReporter) clearLocked() {
	if r.drawn {
		fmt.Fprint(r.out, "\r\033[K")
		r.drawn = false
	}
}

func (r *runReporter) close() {
	if r.live {
		close(r.stop)
		<-r.stopped
		r.mu.Lock()
		r.clearLocked()
		r.mu.Unlock()
	}
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
