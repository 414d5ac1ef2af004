package temporalexec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/mlsched/mlsched/pipeline"
)

// describing is a Temporal client over workflows the test writes: their
// pending activities and children (DescribeWorkflowExecution) and their
// histories. Nothing else of it may be called but UpdateWorkflow, whose
// update answers once the run's workflow has been described twice.
type describing struct {
	client.Client
	mu        sync.Mutex
	pending   map[string][]*workflowpb.PendingActivityInfo // by workflow ID
	children  []*workflowpb.PendingChildExecutionInfo
	history   map[string][]*historypb.HistoryEvent
	describes int
	read      map[string]int // histories read, by workflow ID
}

func newDescribing() *describing {
	return &describing{pending: map[string][]*workflowpb.PendingActivityInfo{}, history: map[string][]*historypb.HistoryEvent{}, read: map[string]int{}}
}

func (d *describing) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	resp := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: d.pending[id]}
	if !strings.Contains(id, "/") {
		d.describes++
		resp.PendingChildren = d.children
	}
	return resp, nil
}

func (d *describing) GetWorkflowHistory(ctx context.Context, id, runID string, long bool, filter enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.read[id]++
	return &events{list: d.history[id]}
}

// pend makes an activity of a workflow pending at an attempt.
func (d *describing) pend(id, activity string, attempt int32, failure string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending[id] = []*workflowpb.PendingActivityInfo{{ActivityId: activity, Attempt: attempt, MaximumAttempts: maxAttempts,
		LastFailure: &failurepb.Failure{Message: failure}, LastWorkerIdentity: "mlsched-worker@b:2"}}
}

// record adds events to a workflow's history.
func (d *describing) record(id string, evs ...*historypb.HistoryEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.history[id] = append(d.history[id], evs...)
}

// scheduledEvent schedules activity with req, as event eventID.
func scheduledEvent(eventID int64, activity string, req Request) *historypb.HistoryEvent {
	in, err := converter.GetDefaultDataConverter().ToPayloads(req)
	if err != nil {
		panic(err)
	}
	return &historypb.HistoryEvent{EventId: eventID, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityId: activity, Input: in, RetryPolicy: &commonpb.RetryPolicy{MaximumAttempts: maxAttempts}}}}
}

// startedEvent starts attempt of the activity scheduled as event eventID.
func startedEvent(eventID int64, attempt int32, failure string) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
		Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{
			ScheduledEventId: eventID, Attempt: attempt, LastFailure: &failurepb.Failure{Message: failure}}}}
}

func childEvents(id string) (started, closed *historypb.HistoryEvent) {
	ex := &commonpb.WorkflowExecution{WorkflowId: id}
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
			Attributes: &historypb.HistoryEvent_ChildWorkflowExecutionStartedEventAttributes{ChildWorkflowExecutionStartedEventAttributes: &historypb.ChildWorkflowExecutionStartedEventAttributes{WorkflowExecution: ex}}},
		&historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
			Attributes: &historypb.HistoryEvent_ChildWorkflowExecutionCompletedEventAttributes{ChildWorkflowExecutionCompletedEventAttributes: &historypb.ChildWorkflowExecutionCompletedEventAttributes{WorkflowExecution: ex}}}
}

func (d *describing) UpdateWorkflow(ctx context.Context, _ client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return answerLater{d}, nil
}

// answerLater is an update that answers once the run's workflow was
// described twice.
type answerLater struct{ d *describing }

func (answerLater) WorkflowID() string { return "run-1" }
func (answerLater) RunID() string      { return "r" }
func (answerLater) UpdateID() string   { return "u" }
func (a answerLater) Get(ctx context.Context, v any) error {
	for {
		a.d.mu.Lock()
		n := a.d.describes
		a.d.mu.Unlock()
		if n >= 2 {
			*v.(*Reply) = Reply{Result: task64}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

type events struct{ list []*historypb.HistoryEvent }

func (e *events) HasNext() bool { return len(e.list) > 0 }
func (e *events) Next() (*historypb.HistoryEvent, error) {
	ev := e.list[0]
	e.list = e.list[1:]
	return ev, nil
}

// TestCoordinatorReportsRetries checks that the coordinator tells of each
// retry of a run's activities once: of a pending one as its attempt rises,
// and, from the histories once the stage is done, of one that was retried
// and finished between two looks; each named by what it runs (from the
// request it was scheduled with, in the run's workflow or in a stage's
// child workflow), with its last failure.
func TestCoordinatorReportsRetries(t *testing.T) {
	const child = "run-1/schedule@5bbb38a8c0ffee00"
	d := newDescribing()
	d.children = []*workflowpb.PendingChildExecutionInfo{{WorkflowId: child}}
	childStarted, childClosed := childEvents(child)
	d.record("run-1", scheduledEvent(5, "5", Request{Stage: "generate", Version: "d8453684aa00bb11"}), childStarted)
	d.record(child, scheduledEvent(7, "7", Request{Stage: "schedule", Version: "5bbb38a8c0ffee00", Shard: &pipeline.Shard{Index: 2, Count: 4}}))
	var lines []string
	c := &Client{Client: d, WorkflowID: "run-1", runID: "r", Log: func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	c.retries.init()
	ctx := context.Background()
	expect := func(look func(), want ...string) {
		t.Helper()
		lines = nil
		look()
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("told\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	pending := func() { c.reportPending(ctx) }
	sweep := func() { c.sweepHistory(ctx, "run-1", "r") }

	d.pend("run-1", "5", 1, "")
	expect(pending) // a first attempt is no retry
	d.pend("run-1", "5", 2, "read s3://team/x: connection refused")
	expect(pending, "generate@d8453684aa00bb11: retried as attempt 2 of 10 after attempt 1 failed: read s3://team/x: connection refused")
	expect(pending) // told once
	d.pend(child, "7", 3, "activity Heartbeat timeout")
	expect(pending, "schedule@5bbb38a8c0ffee00 part 3 of 4: retried as attempt 3 of 10 after attempt 2 failed: activity Heartbeat timeout")
	d.pend("run-1", "9", 2, "boom") // its request is nowhere
	expect(pending, "activity 9 of workflow run-1: retried as attempt 2 of 10 after attempt 1 failed: boom")

	// Retries that began and ended between two looks are in the histories.
	d.pending = map[string][]*workflowpb.PendingActivityInfo{}
	d.record("run-1", startedEvent(5, 2, "connection refused"), scheduledEvent(11, "11", Request{Stage: "train", Version: "eb5ed8d0aa00bb11"}), startedEvent(11, 2, "lost"))
	d.record(child, startedEvent(7, 4, "lost"))
	expect(sweep,
		"train@eb5ed8d0aa00bb11: retried as attempt 2 of 10 after attempt 1 failed: lost",
		"schedule@5bbb38a8c0ffee00 part 3 of 4: retried as attempt 4 of 10 after attempt 3 failed: lost")
	d.record("run-1", childClosed)
	expect(sweep)
	expect(sweep)
	if n := d.read[child]; n != 3 {
		t.Errorf("the child's history was read %d times, want 3: once for its activity's name, then until it was read closed", n)
	}

	// A stage in flight looks every WatchEvery while it waits, and in the
	// histories when it is done.
	c.WatchEvery, lines, d.describes = time.Millisecond, nil, 0
	d.pend("run-1", "13", 2, "lost")
	d.record("run-1", scheduledEvent(13, "13", Request{Stage: "evaluate", Version: "1995e5faaa00bb11"}),
		scheduledEvent(14, "14", Request{Stage: "evaluate", Version: "1995e5faaa00bb11"}), startedEvent(14, 2, "gone"))
	reply, err := c.Stage(ctx, Request{Stage: "evaluate", Version: "1995e5faaa00bb11", Task: task64})
	if err != nil || reply.Result != task64 {
		t.Fatalf("Stage = %v, %v", reply, err)
	}
	want := []string{"evaluate@1995e5faaa00bb11: retried as attempt 2 of 10 after attempt 1 failed: lost",
		"evaluate@1995e5faaa00bb11: retried as attempt 2 of 10 after attempt 1 failed: gone"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("while waiting, then done:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
