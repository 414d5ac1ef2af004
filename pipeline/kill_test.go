package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// killStages is the graph the child process runs: "slow" writes part of its
// output, announces it, and hangs until killed.
func killStages(dir string, hang bool) *harness {
	slow := &fake{name: "slow", cfg: fakeConfig{N: 1}}
	if hang {
		slow.run = func(ctx context.Context, env *Env) error {
			os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("partial"), 0o644)
			os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
			select {}
		}
	}
	h := &harness{dir: dir, fakes: []*fake{slow}, seed: 1}
	slow.code = "code-v1"
	return h
}

func TestKillMinus9LeavesNoPartialVersion(t *testing.T) {
	if dir := os.Getenv("MLSCHED_KILL_CHILD"); dir != "" {
		h := killStages(dir, true)
		h.t = t
		h.run(RunOptions{})
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillMinus9LeavesNoPartialVersion$")
	cmd.Env = append(os.Environ(), "MLSCHED_KILL_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child never started its stage")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no deferred cleanup runs
	cmd.Wait()

	h := killStages(dir, false)
	h.t = t
	p := h.pipeline()
	if vs, _ := p.Store.Versions("slow"); len(vs) != 0 {
		t.Fatalf("a killed run left %d visible version(s)", len(vs))
	}
	if st := mustStatus(t, p)["slow"]; st.State != Missing {
		t.Errorf("status after kill = %+v, want missing", st)
	}
	// The kernel released the dead process's lock; the leftovers are cleaned.
	wantOutcomes(t, h.mustRun(RunOptions{NoWait: true}), map[string]Outcome{"slow": Ran})
	if ents, _ := os.ReadDir(filepath.Join(p.Store.(*LocalStore).Root(), tmpDir)); len(ents) != 0 {
		t.Errorf(".tmp holds %d leftovers after the next run", len(ents))
	}
}
