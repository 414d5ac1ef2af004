package devservers

import "syscall"

// procAttr puts a server in a process group of its own, so that Ctrl-C in
// a terminal reaches only the program that started it, and makes the
// kernel kill it with SIGKILL when that program dies, even by kill -9, so
// that no server outlives it. The kernel sends the signal when the thread
// that started the server exits; Go keeps its threads until the process
// ends, unless a goroutine locked to one exits, which Start never does.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
