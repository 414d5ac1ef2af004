package main

import "time"

// temporalFlags are the flags that reach a Temporal service, of run
// --executor temporal and of worker. Both builds declare them here, so that
// the lean one parses and documents run's as the full one does before it
// hands the command over; only the full build dials (distributed.go).
type temporalFlags struct {
	address, namespace, taskQueue string
	// waitWorker is how long run waits for a worker built from its code
	// before it gives up (run only).
	waitWorker time.Duration
}

// defaultTaskQueue is the task queue workers poll unless told another:
// temporalexec.DefaultTaskQueue, which the lean build does not link (a test
// holds the two equal).
const defaultTaskQueue = "mlsched"

func (t *temporalFlags) add(f interface {
	StringVar(p *string, name, value, usage string)
}) {
	f.StringVar(&t.address, "temporal", "127.0.0.1:7233", "Temporal frontend `address` (host:port)")
	f.StringVar(&t.namespace, "namespace", "default", "Temporal `namespace`")
	f.StringVar(&t.taskQueue, "task-queue", defaultTaskQueue, "Temporal task `queue` the workers poll: its base name, to which each build adds its code's fingerprint")
}

// addRun adds the flags that only run's side of a distributed run takes.
func (t *temporalFlags) addRun(f interface {
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
}) {
	f.DurationVar(&t.waitWorker, "wait-for-worker", time.Minute, "with --executor temporal, give up after `duration` if no worker built from this code polls the task queue")
}
