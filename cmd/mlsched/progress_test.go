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
			p := &progress{start: now.Add(-10 * time.Second), done: tt.done, total: tt.total, previous: tt.previous}
			if got := p.describe("generate", now, tt.bar); got != tt.want {
				t.Errorf("describe = %q, want %q", got, tt.want)
			}
		})
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
