package temporalexec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/mlsched/mlsched/pipeline"
)

// describing is a Temporal client that describes workflows as the test
// sets them: their pending activities and children, and the requests
// their activities were scheduled with. Nothing else of it may be called
// but UpdateWorkflow, whose update answers once the workflow has been
// described twice.
type describing struct {
	client.Client
	mu        sync.Mutex
	pending   map[string][]*workflowpb.PendingActivityInfo // by workflow ID
	children  []*workflowpb.PendingChildExecutionInfo
	scheduled map[string]map[string]Request // workflow ID, activity ID
	describes int
	histories int
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
	d.histories++
	var events []*historypb.HistoryEvent
	for aid, req := range d.scheduled[id] {
		in, err := converter.GetDefaultDataConverter().ToPayloads(req)
		if err != nil {
			panic(err)
		}
		events = append(events, &historypb.HistoryEvent{
			EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
				ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityId: aid, Input: in}},
		})
	}
	return &history{events: events}
}

func (d *describing) set(id, activity string, attempt int32, failure string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending[id] = []*workflowpb.PendingActivityInfo{{ActivityId: activity, Attempt: attempt, MaximumAttempts: maxAttempts,
		LastFailure: &failurepb.Failure{Message: failure}, LastWorkerIdentity: "mlsched-worker@b:2"}}
}

func (d *describing) UpdateWorkflow(ctx context.Context, _ client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return answerLater{d}, nil
}

// answerLater is an update that answers once its workflow was described
// twice.
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

type history struct{ events []*historypb.HistoryEvent }

func (e *history) HasNext() bool { return len(e.events) > 0 }
func (e *history) Next() (*historypb.HistoryEvent, error) {
	ev := e.events[0]
	e.events = e.events[1:]
	return ev, nil
}

// TestCoordinatorReportsRetries checks that the coordinator tells of each
// retry of a run's activities once, as the attempt rises, naming what the
// activity runs (from the request it was scheduled with, in the run's
// workflow or in a stage's child workflow) and its last failure; and
// that waiting for a stage looks for retries while it waits.
func TestCoordinatorReportsRetries(t *testing.T) {
	const child = "run-1/schedule@5bbb38a8c0ffee00"
	d := &describing{
		pending:  map[string][]*workflowpb.PendingActivityInfo{},
		children: []*workflowpb.PendingChildExecutionInfo{{WorkflowId: child}},
		scheduled: map[string]map[string]Request{
			"run-1": {"5": {Stage: "generate", Version: "d8453684aa00bb11"}},
			child:   {"7": {Stage: "schedule", Version: "5bbb38a8c0ffee00", Shard: &pipeline.Shard{Index: 2, Count: 4}}},
		},
	}
	var lines []string
	c := &Client{Client: d, WorkflowID: "run-1", runID: "r", Log: func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	ctx := context.Background()
	look := func(want ...string) {
		t.Helper()
		lines = nil
		c.reportRetries(ctx)
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("reported\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	d.set("run-1", "5", 1, "")
	look() // a first attempt is no retry
	d.set("run-1", "5", 2, "read s3://team/x: connection refused")
	look("generate@d8453684aa00bb11: retried, attempt 2 of 10; the last failed on mlsched-worker@b:2: read s3://team/x: connection refused")
	look() // told once
	d.set(child, "7", 3, "activity Heartbeat timeout")
	look("schedule@5bbb38a8c0ffee00 part 3 of 4: retried, attempt 3 of 10; the last failed on mlsched-worker@b:2: activity Heartbeat timeout")
	d.set("run-1", "5", 4, "connection refused")
	look("generate@d8453684aa00bb11: retried, attempt 4 of 10; the last failed on mlsched-worker@b:2: connection refused")
	if d.histories != 2 {
		t.Errorf("read %d histories, want one per activity", d.histories)
	}
	// An activity whose request cannot be found is named by its ID.
	d.set("run-1", "9", 2, "boom")
	look("activity 9 of workflow run-1: retried, attempt 2 of 10; the last failed on mlsched-worker@b:2: boom")

	// A stage in flight looks every WatchEvery while it waits.
	c.WatchEvery, lines, d.describes = time.Millisecond, nil, 0
	d.set("run-1", "11", 2, "lost")
	d.scheduled["run-1"]["11"] = Request{Stage: "train", Version: "eb5ed8d0aa00bb11"}
	reply, err := c.Stage(ctx, Request{Stage: "train", Version: "eb5ed8d0aa00bb11", Task: task64})
	if err != nil || reply.Result != task64 {
		t.Fatalf("Stage = %v, %v", reply, err)
	}
	if want := "train@eb5ed8d0aa00bb11: retried, attempt 2 of 10; the last failed on mlsched-worker@b:2: lost"; len(lines) != 1 || lines[0] != want {
		t.Errorf("while waiting: %q, want %q", lines, want)
	}
}
