package temporalexec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
)

// RetryWatchEvery is how often a coordinator waiting for a stage asks
// Temporal about the run's activities (Client.Log).
const RetryWatchEvery = 3 * time.Second

// retries is what a Client has told of its run's activity retries: the
// attempt it last reported of each activity, and what each activity runs.
// Every stage in flight looks on its own; whichever first sees an attempt
// reports it.
type retries struct {
	mu     sync.Mutex
	told   map[string]int32  // workflow ID and activity ID: attempt
	labels map[string]string // workflow ID and activity ID: stage@version, part
}

// watchRetries describes the run's workflow, and its stages' child
// workflows, every c.WatchEvery until the returned function is called,
// telling c.Log of each retried activity. Temporal's retries are
// otherwise invisible here: the update a stage waits on answers only
// when the stage is done or has failed for good.
func (c *Client) watchRetries(ctx context.Context) (stop func()) {
	if c.Log == nil {
		return func() {}
	}
	every := c.WatchEvery
	if every <= 0 {
		every = RetryWatchEvery
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.reportRetries(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// reportRetries describes the run's workflow and each child workflow it
// waits on (a stage in parts), and tells c.Log of each pending activity
// whose attempt rose since it was last told. A workflow Temporal cannot
// describe now (a server restarting) is left for the next look.
func (c *Client) reportRetries(ctx context.Context) {
	desc, err := c.Client.DescribeWorkflowExecution(ctx, c.WorkflowID, c.runID)
	if err != nil {
		return
	}
	type execution struct{ id, runID string }
	runs := []execution{{c.WorkflowID, c.runID}}
	for _, ch := range desc.GetPendingChildren() {
		runs = append(runs, execution{ch.GetWorkflowId(), ch.GetRunId()})
	}
	for i, run := range runs {
		if i > 0 {
			if desc, err = c.Client.DescribeWorkflowExecution(ctx, run.id, run.runID); err != nil {
				continue
			}
		}
		for _, a := range desc.GetPendingActivities() {
			name := run.id + "\x00" + a.GetActivityId()
			c.retries.mu.Lock()
			if c.retries.told == nil {
				c.retries.told, c.retries.labels = map[string]int32{}, map[string]string{}
			}
			told := max(c.retries.told[name], 1)
			if a.GetAttempt() > told {
				c.retries.told[name] = a.GetAttempt()
			}
			label, known := c.retries.labels[name]
			c.retries.mu.Unlock()
			if a.GetAttempt() <= told {
				continue
			}
			if !known {
				label = c.activityLabel(ctx, run.id, run.runID, a.GetActivityId())
				c.retries.mu.Lock()
				c.retries.labels[name] = label
				c.retries.mu.Unlock()
			}
			why := "no failure recorded"
			if f := a.GetLastFailure(); f != nil {
				why = f.GetMessage()
				if cause := f.GetCause(); cause != nil && cause.GetMessage() != "" && !strings.Contains(why, cause.GetMessage()) {
					why += ": " + cause.GetMessage()
				}
			}
			of := ""
			if m := a.GetMaximumAttempts(); m > 0 {
				of = fmt.Sprintf(" of %d", m)
			}
			on := ""
			if w := a.GetLastWorkerIdentity(); w != "" {
				on = " on " + w
			}
			c.Log("%s: retried, attempt %d%s; the last failed%s: %s", label, a.GetAttempt(), of, on, why)
		}
	}
}

// activityLabel names what an activity runs (stage@version, and its part)
// from the request its workflow scheduled it with; failing that, by its ID.
func (c *Client) activityLabel(ctx context.Context, workflowID, runID, activityID string) string {
	fallback := fmt.Sprintf("activity %s of workflow %s", activityID, workflowID)
	it := c.Client.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return fallback
		}
		attrs := ev.GetActivityTaskScheduledEventAttributes()
		if attrs == nil || attrs.GetActivityId() != activityID {
			continue
		}
		var req Request
		if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &req); err != nil || req.Stage == "" {
			return fallback
		}
		return req.label()
	}
	return fallback
}

// label names what a request runs, for messages: stage@version, and
// which part.
func (r Request) label() string {
	s := r.Stage + "@" + r.Version
	if r.Shard != nil {
		s += fmt.Sprintf(" part %d of %d", r.Shard.Index+1, r.Shard.Count)
	}
	return s
}
