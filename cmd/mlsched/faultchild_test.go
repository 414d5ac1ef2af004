package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is an mlsched process a fault test started. It leads a process
// group of its own, with the workers it starts, so that a hung one can be
// ended whole and its workers found once it is killed.
type child struct {
	t         *testing.T
	args      []string
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
}

// start starts mlsched in the project with args.
func (p *project) start(args ...string) *child {
	p.t.Helper()
	c := &child{t: p.t, args: args, done: make(chan struct{})}
	c.cmd = exec.Command(mlschedBin, args...)
	c.cmd.Dir = p.dir
	c.cmd.Env = append(os.Environ(), p.env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errb
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A worker that outlives mlsched holds its output pipes open; Wait
	// stops waiting for them this long after mlsched exits (survivors
	// reports such workers).
	c.cmd.WaitDelay = time.Second
	if err := c.cmd.Start(); err != nil {
		p.t.Fatalf("start mlsched %s: %v", c, err)
	}
	go func() {
		c.cmd.Wait()
		close(c.done)
	}()
	p.t.Cleanup(c.end)
	return c
}

func (c *child) String() string { return strings.Join(c.args, " ") }

// running reports whether the process has not exited yet.
func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// end kills the process group, if mlsched still runs, and reaps mlsched.
// (Once mlsched is reaped, its group's id may name another's group.)
func (c *child) end() {
	if c.running() {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-c.done
}

// wait waits at most limit for the process to exit and returns its exit
// code, or -signal if a signal ended it. A process still running at the
// limit has hung: the test ends its process group and fails naming it.
func (c *child) wait(limit time.Duration) int {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(limit):
		c.end()
		c.t.Fatalf("mlsched %s (pid %d) hung: still running after %s\nstdout:\n%s\nstderr:\n%s", c, c.cmd.Process.Pid, limit, &c.out, &c.errb)
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}

// kill9 kills mlsched alone with SIGKILL, as a user's kill -9 would,
// reaps it, and reports whether the kill landed: false when the process
// had exited by itself first.
func (c *child) kill9() bool {
	c.t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	return c.wait(quickLimit) == -int(syscall.SIGKILL)
}

// survivors returns the processes of the group still alive (the workers of
// a killed mlsched) after waiting up to grace for them to end, and how long
// it waited.
func (c *child) survivors(grace time.Duration) ([]string, time.Duration) {
	pgid := c.cmd.Process.Pid
	start := time.Now()
	for deadline := start.Add(grace); ; time.Sleep(20 * time.Millisecond) {
		var alive []string
		for _, p := range processes() {
			// Only the test's binaries: the group's id may have been
			// taken by another group since its leader was reaped.
			if p.state == "Z" || p.pgrp != pgid || !strings.HasPrefix(p.cmdline, filepath.Dir(mlschedBin)+string(filepath.Separator)) {
				continue
			}
			alive = append(alive, fmt.Sprintf("pid %d (%s)", p.pid, p.cmdline))
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive, time.Since(start)
		}
	}
}

// checkNoSurvivors fails the test if a worker of the killed c outlives it
// by more than orphanGrace, and ends it.
func (c *child) checkNoSurvivors(what string) {
	c.t.Helper()
	alive, waited := c.survivors(orphanGrace)
	if len(alive) == 0 && waited > 100*time.Millisecond {
		c.t.Logf("%s: its workers outlived mlsched by %s", what, waited.Round(10*time.Millisecond))
	}
	if len(alive) > 0 {
		c.t.Errorf("%s: %s outlived the mlsched that started it (killed -9) by %s", what, strings.Join(alive, ", "), orphanGrace)
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// await waits until marker holds (the process reached a phase the test
// aims at) and reports true, or false if the process exits first. A
// process that reaches neither within limit has hung.
func (c *child) await(marker func() bool, limit time.Duration) bool {
	c.t.Helper()
	for deadline := time.Now().Add(limit); !marker(); time.Sleep(time.Millisecond) {
		if !c.running() {
			return marker()
		}
		if time.Now().After(deadline) {
			c.end()
			c.t.Fatalf("mlsched %s hung: it neither exited nor reached the moment the test aims at within %s\nstdout:\n%s\nstderr:\n%s", c, limit, &c.out, &c.errb)
		}
	}
	return true
}

// strike waits until marker holds, then for delay more, and kills the
// process -9. landed is false when the process exited by itself first;
// after is then how long it ran once marker held (zero if it never held).
// still says whether marker held yet just before the kill (a stage's
// staging folder: the stage had not committed).
func (c *child) strike(marker func() bool, delay time.Duration, limit time.Duration) (landed, still bool, after time.Duration) {
	c.t.Helper()
	if !c.await(marker, limit) {
		return false, false, 0
	}
	seen := time.Now()
	select {
	case <-c.done:
	case <-time.After(delay):
	}
	still = marker()
	if c.kill9() {
		return true, still, 0
	}
	return false, false, time.Since(seen)
}

// faultRun runs mlsched in the project, at most limit, and returns its
// stdout, stderr and exit code.
func (p *project) faultRun(limit time.Duration, args ...string) (string, string, int) {
	p.t.Helper()
	c := p.start(args...)
	code := c.wait(limit)
	return c.out.String(), c.errb.String(), code
}

// mustFault is faultRun that fails the test unless mlsched exits 0.
func (p *project) mustFault(limit time.Duration, args ...string) string {
	p.t.Helper()
	out, errs, code := p.faultRun(limit, args...)
	if code != 0 {
		p.t.Fatalf("mlsched %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}
