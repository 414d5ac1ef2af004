package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDevServersRefusals: without the servers' programs, dev-servers says
// how to build them; on a port in use, how to pick another. Both builds
// say it (the lean one hands the command over). The servers themselves
// start in TestDistributedDevServers (make test-distributed).
func TestDevServersRefusals(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	fake := t.TempDir()
	for _, name := range []string{"temporal", "versitygw"} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no programs", []string{"--tools", t.TempDir()}, "build it with 'make distributed-tools'"},
		{"port in use", []string{"--tools", fake, "--dir", t.TempDir(), "--temporal-port", taken},
			"Temporal: 127.0.0.1:" + taken + ": port in use: is another mlsched dev-servers running?"},
	} {
		for build, bin := range map[string]string{"full": mlschedBin, "lean": leanBin} {
			t.Run(tt.name+"/"+build, func(t *testing.T) {
				out, errs, code := p.cliOf(bin, append([]string{"dev-servers"}, tt.args...)...)
				if code != exitUsage || !strings.Contains(errs, tt.want) {
					t.Errorf("mlsched dev-servers %s: exit %d, stderr:\n%s\nwant exit %d saying %q", strings.Join(tt.args, " "), code, errs, exitUsage, tt.want)
				}
				if out != "" {
					t.Errorf("stdout: %q, want nothing", out)
				}
			})
		}
	}
}
