package temporalexec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// RetryWatchEvery is how often a coordinator waiting for a stage asks
// Temporal about the run's activities (Client.Log).
const RetryWatchEvery = 3 * time.Second

// retries is what a Client has told of its run's activity retries. Every
// stage in flight looks on its own; whichever first sees an attempt
// reports it.
type retries struct {
	mu sync.Mutex
	// told is the attempt last told of each activity, by workflow ID and
	// activity ID (activityName).
	told map[string]int32
	// labels says what each activity runs, once looked up.
	labels map[string]string
	// swept holds the child workflows whose history was read after they
	// closed: nothing more can be retried in them.
	swept map[string]bool
}

func (r *retries) init() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.told == nil {
		r.told, r.labels, r.swept = map[string]int32{}, map[string]string{}, map[string]bool{}
	}
}

// activityName names an activity of a workflow in retries' maps.
func activityName(workflowID, activityID string) string { return workflowID + "\x00" + activityID }

// watchRetries tells c.Log of the retries of the run's activities while a
// stage waits for its update, which answers only once the stage is done
// or has failed for good, so that Temporal's retries are not silent here:
// every c.WatchEvery it describes the run's workflow and the child
// workflows of its stages in parts and reports each pending activity
// whose attempt rose (a worker lost, a remote out of reach); stop then
// reads their histories for the retries that began and ended between two
// looks.
func (c *Client) watchRetries(ctx context.Context) (stop func()) {
	if c.Log == nil {
		return func() {}
	}
	every := c.WatchEvery
	if every <= 0 {
		every = RetryWatchEvery
	}
	c.retries.init()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				c.reportPending(wctx)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		if ctx.Err() == nil {
			c.sweepHistory(ctx, c.WorkflowID, c.runID)
		}
	}
}

// reportPending describes the run's workflow and each child workflow it
// waits on, and tells of each pending activity whose attempt rose since
// it was last told. A workflow Temporal cannot describe now (a server
// restarting) waits for the next look.
func (c *Client) reportPending(ctx context.Context) {
	desc, err := c.Client.DescribeWorkflowExecution(ctx, c.WorkflowID, c.runID)
	if err != nil {
		return
	}
	runs := []*commonpb.WorkflowExecution{{WorkflowId: c.WorkflowID, RunId: c.runID}}
	for _, ch := range desc.GetPendingChildren() {
		runs = append(runs, &commonpb.WorkflowExecution{WorkflowId: ch.GetWorkflowId(), RunId: ch.GetRunId()})
	}
	for i, run := range runs {
		if i > 0 {
			if desc, err = c.Client.DescribeWorkflowExecution(ctx, run.GetWorkflowId(), run.GetRunId()); err != nil {
				continue
			}
		}
		for _, a := range desc.GetPendingActivities() {
			if !c.rose(run.GetWorkflowId(), a.GetActivityId(), a.GetAttempt()) {
				continue
			}
			name := activityName(run.GetWorkflowId(), a.GetActivityId())
			c.retries.mu.Lock()
			label, ok := c.retries.labels[name]
			c.retries.mu.Unlock()
			if !ok {
				label = c.activityLabel(ctx, run, a.GetActivityId())
			}
			c.tell(label, a.GetAttempt(), a.GetMaximumAttempts(), a.GetLastFailure())
		}
	}
}

// rose records attempt as told of an activity, and reports whether it
// is a retry not told before.
func (c *Client) rose(workflowID, activityID string, attempt int32) bool {
	c.retries.mu.Lock()
	defer c.retries.mu.Unlock()
	name := activityName(workflowID, activityID)
	if attempt <= max(c.retries.told[name], 1) {
		return false
	}
	c.retries.told[name] = attempt
	return true
}

// tell tells c.Log of an activity's retry.
func (c *Client) tell(label string, attempt, maxAttempts int32, failure *failurepb.Failure) {
	why := "no failure recorded"
	if failure != nil {
		why = failure.GetMessage()
		if cause := failure.GetCause().GetMessage(); cause != "" && !strings.Contains(why, cause) {
			why += ": " + cause
		}
	}
	of := ""
	if maxAttempts > 0 {
		of = fmt.Sprintf(" of %d", maxAttempts)
	}
	c.Log("%s: retried as attempt %d%s after attempt %d failed: %s", label, attempt, of, attempt-1, why)
}

// scheduled is what a history says of an activity it scheduled.
type scheduled struct {
	activityID, label string
	maxAttempts       int32
}

// readHistory reads a workflow's history: the activities it scheduled, by
// event ID, and calls each for every event.
func (c *Client) readHistory(ctx context.Context, run *commonpb.WorkflowExecution, each func(ev *historypb.HistoryEvent, acts map[int64]scheduled)) error {
	acts := map[int64]scheduled{}
	it := c.Client.GetWorkflowHistory(ctx, run.GetWorkflowId(), run.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		if attrs := ev.GetActivityTaskScheduledEventAttributes(); attrs != nil {
			label := fmt.Sprintf("activity %s of workflow %s", attrs.GetActivityId(), run.GetWorkflowId())
			var req Request
			if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &req); err == nil && req.Stage != "" {
				label = req.label()
			}
			acts[ev.GetEventId()] = scheduled{attrs.GetActivityId(), label, attrs.GetRetryPolicy().GetMaximumAttempts()}
			c.retries.mu.Lock()
			c.retries.labels[activityName(run.GetWorkflowId(), attrs.GetActivityId())] = label
			c.retries.mu.Unlock()
		}
		each(ev, acts)
	}
	return nil
}

// activityLabel names what an activity runs (stage@version, and its part)
// from the request its workflow scheduled it with; failing that, by its ID.
func (c *Client) activityLabel(ctx context.Context, run *commonpb.WorkflowExecution, activityID string) string {
	_ = c.readHistory(ctx, run, func(*historypb.HistoryEvent, map[int64]scheduled) {})
	c.retries.mu.Lock()
	defer c.retries.mu.Unlock()
	if label, ok := c.retries.labels[activityName(run.GetWorkflowId(), activityID)]; ok {
		return label
	}
	return fmt.Sprintf("activity %s of workflow %s", activityID, run.GetWorkflowId())
}

// sweepHistory tells of the retries a workflow's history records (an
// activity's started event carries its attempt and the last failure) that
// were not told, and does the same in each child workflow it started that
// was not swept once closed.
func (c *Client) sweepHistory(ctx context.Context, workflowID, runID string) {
	var children []*commonpb.WorkflowExecution
	closed := map[string]bool{}
	err := c.readHistory(ctx, &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID}, func(ev *historypb.HistoryEvent, acts map[int64]scheduled) {
		if st := ev.GetActivityTaskStartedEventAttributes(); st != nil {
			if a, ok := acts[st.GetScheduledEventId()]; ok && c.rose(workflowID, a.activityID, st.GetAttempt()) {
				c.tell(a.label, st.GetAttempt(), a.maxAttempts, st.GetLastFailure())
			}
		}
		if ch := ev.GetChildWorkflowExecutionStartedEventAttributes().GetWorkflowExecution(); ch != nil {
			children = append(children, ch)
		}
		if id := closedChild(ev); id != "" {
			closed[id] = true
		}
	})
	if err != nil {
		return
	}
	for _, ch := range children {
		c.retries.mu.Lock()
		done := c.retries.swept[ch.GetWorkflowId()]
		c.retries.mu.Unlock()
		if done {
			continue
		}
		c.sweepHistory(ctx, ch.GetWorkflowId(), ch.GetRunId())
		if closed[ch.GetWorkflowId()] {
			c.retries.mu.Lock()
			c.retries.swept[ch.GetWorkflowId()] = true
			c.retries.mu.Unlock()
		}
	}
}

// closedChild is the workflow ID of the child workflow whose closing an
// event records, or "".
func closedChild(ev *historypb.HistoryEvent) string {
	for _, ch := range []*commonpb.WorkflowExecution{
		ev.GetChildWorkflowExecutionCompletedEventAttributes().GetWorkflowExecution(),
		ev.GetChildWorkflowExecutionFailedEventAttributes().GetWorkflowExecution(),
		ev.GetChildWorkflowExecutionCanceledEventAttributes().GetWorkflowExecution(),
		ev.GetChildWorkflowExecutionTimedOutEventAttributes().GetWorkflowExecution(),
		ev.GetChildWorkflowExecutionTerminatedEventAttributes().GetWorkflowExecution(),
	} {
		if ch != nil {
			return ch.GetWorkflowId()
		}
	}
	return ""
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
