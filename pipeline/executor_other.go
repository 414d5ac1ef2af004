//go:build !linux

package pipeline

import "syscall"

// workerAttr is nil where the kernel cannot kill a worker with its runner:
// a worker orphaned by kill -9 then ends when it next reports progress or
// finishes, writing to a closed pipe.
func workerAttr() *syscall.SysProcAttr { return nil }
