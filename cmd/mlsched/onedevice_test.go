package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneDeviceCluster runs the whole pipeline on a cluster of one device
// with policies that never migrate: train trains the predictor alone (no
// policy asks for the placement network, and there is no move to label),
// schedule reads no network, and the report says why. A learned policy
// there is a config error naming the policy and the device.
func TestOneDeviceCluster(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	cfgPath := filepath.Join(p.dir, "pipeline.yaml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	second := cfg[strings.Index(cfg, "    - name: accel-x2"):strings.Index(cfg, "  sweep:")]
	cfg = strings.Replace(cfg, second, "", 1)
	cfg = strings.Replace(cfg, "policies: [fifo, edf, random, dynamic, edf+batch+split+migrate]", "policies: [fifo, edf]", 1)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	got := outcomes(p.mustCLI("run"))
	for _, s := range []string{"profile", "generate", "train", "schedule", "evaluate"} {
		if got[s] != "ran" {
			t.Fatalf("run on one device: %v", got)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "models", "placement.onnx")); err == nil {
		t.Error("models/placement.onnx was published, though no policy asks for the network")
	}
	if show := p.mustCLI("show", "train"); strings.Contains(show, "placement.onnx") || !strings.Contains(show, "not trained") {
		t.Errorf("show train does not say the network was not trained:\n%s", show)
	}
	md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "The placement network was not trained: no policy of schedule.policies or schedule.real.policies is served by it"; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
	_, errs, code := p.cli("status", "--set", "schedule.policies=fifo,learned")
	if want := "--set schedule.policies=fifo,learned: schedule.policies[1]: learned needs the placement network, which learns when to move a job between devices, and schedule.cluster has one device (accel)"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("a learned policy on one device: exit %d\n%s\nwant %q", code, errs, want)
	}
}
