package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

func TestProgressDescribe(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name        string
		done, total int64
		bar         bool
		previous    time.Duration
		want        string
	}{
		{"a quarter in 10s", 25, 100, false, 0, "generate 10.00s  25%, about 30s left"},
		{"with a bar", 50, 100, true, 0, "generate 10.00s [##########..........]  50%, about 10s left"},
		{"no progress yet", 0, 100, false, time.Second, "generate 10.00s   0%"},
		{"no total", 5, 0, false, 0, "generate 10.00s"},
		{"as fast as the last run", 25, 100, false, 40 * time.Second, "generate 10.00s  25%, about 30s left"},
		{"within the spread of the last run", 25, 100, false, 31 * time.Second, "generate 10.00s  25%, about 30s left"},
		{"slower than the last run", 25, 100, false, 20 * time.Second, "generate 10.00s  25%, about 30s left, 2.0× the 20.00s its last run with this config took: is the machine busy?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &progress{start: now.Add(-10 * time.Second), first: now.Add(-10 * time.Second), done: tt.done, total: tt.total, previous: tt.previous}
			if got := p.describe("generate", now, tt.bar); got != tt.want {
				t.Errorf("describe = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProgressRateFromFirstReport: work a stage does before it reports
// progress (schedule's real runs) does not count against the rate of the
// work it counts.
func TestProgressRateFromFirstReport(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	p := &progress{start: t0}
	p.update(t0.Add(3*time.Minute), 0, 100) // three minutes of uncounted work, then the count starts
	if _, ok := p.eta(t0.Add(3 * time.Minute)); ok {
		t.Error("an estimate before any counted work was done")
	}
	p.update(t0.Add(3*time.Minute+10*time.Second), 10, 100)
	left, ok := p.eta(t0.Add(3*time.Minute + 10*time.Second))
	if !ok || left != 90*time.Second {
		t.Errorf("10 of 100 done in the 10 s since counting began: %v left (%v), want 1m30s", left, ok)
	}
	p.update(t0.Add(4*time.Minute), 0, 50) // a new total starts a new count
	if _, ok := p.eta(t0.Add(4 * time.Minute)); ok {
		t.Error("an estimate from before the total changed")
	}
	// A first report of work already done counts from the stage's start.
	q := &progress{start: t0}
	q.update(t0.Add(20*time.Second), 20, 100)
	if left, ok := q.eta(t0.Add(20 * time.Second)); !ok || left != 80*time.Second {
		t.Errorf("20 of 100 done in the first 20 s: %v left (%v), want 1m20s", left, ok)
	}
}

// TestProgressGoesToStderr: stage lines go to stdout; progress, for a log
// (stderr not a terminal), goes to stderr as plain lines.
func TestProgressGoesToStderr(t *testing.T) {
	var out, errw bytes.Buffer
	r := newRunReporter(&out, &errw, progressEvery)
	r.Report(pipeline.Event{Kind: pipeline.EventStart, Stage: "schedule"})
	r.Report(pipeline.Event{Kind: pipeline.EventProgress, Stage: "schedule", Done: 1, Total: 4})
	r.mu.Lock()
	r.logLocked()
	r.mu.Unlock()
	r.Report(pipeline.Event{Kind: pipeline.EventDone, Stage: "schedule", Outcome: pipeline.Ran, Version: "0123456789abcdef"})
	r.close()
	if !strings.HasPrefix(errw.String(), "mlsched: running schedule ") || !strings.Contains(errw.String(), "25%, about") || strings.Contains(errw.String(), "\r") {
		t.Errorf("stderr = %q", errw.String())
	}
	if !strings.HasPrefix(out.String(), "schedule   ran     01234567") || strings.Contains(out.String(), "running") {
		t.Errorf("stdout = %q", out.String())
	}
}
