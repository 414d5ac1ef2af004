package pipeline

import "syscall"

// workerAttr makes the kernel kill a worker whose runner dies, even by
// kill -9: otherwise the worker, orphaned, would go on computing (and
// writing into a staging directory that the next run removes) until its
// stage ended, for a long stage minutes after its runner was gone.
//
// The kernel sends the signal when the thread that started the worker
// exits; Go keeps its threads until the process ends, unless a goroutine
// locked to one (runtime.LockOSThread) exits, which the runner never does.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
