package main

import (
	"testing"

	"github.com/mlsched/mlsched/pipeline/temporalexec"
)

// TestTemporalFlagsDefaultTaskQueue checks that the task queue both builds
// declare by default is the one temporalexec's workers poll by default.
func TestTemporalFlagsDefaultTaskQueue(t *testing.T) {
	if defaultTaskQueue != temporalexec.DefaultTaskQueue {
		t.Errorf("defaultTaskQueue = %q, want temporalexec.DefaultTaskQueue, %q", defaultTaskQueue, temporalexec.DefaultTaskQueue)
	}
}
