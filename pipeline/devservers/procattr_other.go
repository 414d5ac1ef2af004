//go:build !linux

package devservers

import "syscall"

// procAttr is nil where the kernel cannot kill a server with the program
// that started it: a server whose program is killed by kill -9 there
// outlives it, and must be stopped by hand.
func procAttr() *syscall.SysProcAttr { return nil }
