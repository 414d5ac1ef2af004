//go:build !linux

package pipeline

import "syscall"

// workerAttr has nothing to add where the kernel cannot tie a worker's
// life to its parent's.
func workerAttr() *syscall.SysProcAttr { return nil }
