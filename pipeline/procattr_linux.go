package pipeline

import "syscall"

// workerAttr makes a worker die with the process that started it: a
// second Ctrl-C, or a kill -9, ends mlsched at once, and a worker that
// outlived it would go on computing a stage nobody will store, holding the
// cores. The kernel sends SIGKILL when the thread that started the worker
// exits; Go's runtime keeps its threads for the life of the process (only
// a goroutine that locks its thread and exits ends one, and the runner
// does not lock threads).
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
