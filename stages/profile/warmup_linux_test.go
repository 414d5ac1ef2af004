//go:build linux

package profile

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// threadFaults is the calling OS thread's minor page faults so far.
func threadFaults(t *testing.T) int64 {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &u); err != nil {
		t.Fatal(err)
	}
	return u.Minflt
}

// warmupChild is set in the process TestSmallerSizesReuseMemory runs its
// check in. In the test binary's own process the tests before it leave
// memory freed that the allocator hands back without a page fault, so
// that a cold shape's first run can fault none in (it did once in CI).
const warmupChild = "MLSCHED_TEST_WARMUP_CHILD"

// TestSmallerSizesReuseMemory holds warmupsOf's premise to onnxruntime: in
// one session on one intra-op thread (which runs on the caller's thread,
// whose page faults getrusage counts), a size's first run faults its
// memory in, thousands of pages; once the largest size has run its
// warm-ups, a smaller size's first run faults in at most a page per sample
// and its second, the first a profile times, none worth a warm-up. It
// runs in a process of its own (warmupChild).
func TestSmallerSizesReuseMemory(t *testing.T) {
	lib := library(t)
	if os.Getenv(warmupChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSmallerSizesReuseMemory$", "-test.v", "-test.count", "1")
		cmd.Env = append(os.Environ(), warmupChild+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("its own process:\n%s", out)
		if err != nil {
			t.Fatalf("its own process: %v", err)
		}
		return
	}
	if _, err := ort.Init(lib.Path, lib.Source); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const name, small, large = "resnet18", 2, 8
	model, err := zoo.Build(name, zoo.Options{Seed: 1, Precision: FP32})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := catalog.Zoo().Lookup(name)
	tm := timing{warmup: 2}
	s, err := newModelSession(targetOf(DefaultConfig()), model, m, small, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bind := func(b int) *ort.Binding {
		x, err := s.Bind(m.InputDims(b), m.OutputDims(b))
		if err != nil {
			t.Fatal(err)
		}
		fill(x.Input(), uint64(b))
		return x
	}
	faults := func(x *ort.Binding) int64 {
		before := threadFaults(t)
		if err := x.Run(); err != nil {
			t.Fatal(err)
		}
		return threadFaults(t) - before
	}
	big, little := bind(large), bind(small)
	var warm []int64
	for range tm.warmupsOf(large, large, true) {
		warm = append(warm, faults(big))
	}
	first, second := faults(little), faults(little)
	t.Logf("batch %d's warm-ups faulted %v pages in; then batch %d's first run %d and its second %d", large, warm, small, first, second)
	if warm[0] < 1000 {
		t.Errorf("batch %d's first run faulted %d pages in; a cold shape faults thousands (is getrusage counting?)", large, warm[0])
	}
	if n := tm.warmupsOf(small, large, true); n != 1 {
		t.Fatalf("warmupsOf(%d, %d) = %d, want 1", small, large, n)
	}
	if first > small {
		t.Errorf("batch %d's first run after batch %d's warm-ups faulted %d pages in, more than one a sample", small, large, first)
	}
	if second > 0 {
		t.Errorf("batch %d's second run, the first a profile times, faulted %d pages in", small, second)
	}
}
