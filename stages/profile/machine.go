package profile

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes the machine a profile was measured on. It goes into the
// Parquet footers and the manifest, so numbers are never separated from the
// hardware that produced them.
type Machine struct {
	CPU         string
	Cores       int
	MemoryBytes int64
	OS, Arch    string
	Kernel      string
	GoVersion   string
	ORTVersion  string
	Providers   []string
	// GPU describes the GPU a CUDA profile ran on (nvidia-smi's name,
	// memory, driver and compute capability); empty for a CPU profile.
	GPU string
}

// describeGPU asks nvidia-smi about GPU ordinal gpu. The driver is what
// knows the card; onnxruntime's C API does not say. A machine without
// nvidia-smi, or where it fails, gets "unknown", never a guess.
func describeGPU(ctx context.Context, gpu int) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nvidia-smi", "-i", strconv.Itoa(gpu),
		"--query-gpu=name,memory.total,driver_version,compute_cap", "--format=csv,noheader").Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	f := strings.Split(line, ",")
	if len(f) != 4 {
		return "unknown"
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return fmt.Sprintf("%s, %s, driver %s, compute capability %s", f[0], f[1], f[2], f[3])
}

// describeMachine reads what Linux says about this machine; a fact that
// cannot be read is "unknown", never guessed.
func describeMachine(ortVersion string, providers []string) Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Kernel: "unknown", GoVersion: runtime.Version(), ORTVersion: ortVersion, Providers: providers}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.MemoryBytes = kb << 10
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Metadata returns the description as key-value pairs under "mlsched.machine.".
func (m Machine) Metadata() map[string]string {
	md := map[string]string{
		"mlsched.machine.cpu":         m.CPU,
		"mlsched.machine.cores":       strconv.Itoa(m.Cores),
		"mlsched.machine.memory":      fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30)),
		"mlsched.machine.os":          m.OS + "/" + m.Arch + " " + m.Kernel,
		"mlsched.machine.go":          m.GoVersion,
		"mlsched.machine.onnxruntime": m.ORTVersion,
		"mlsched.machine.providers":   strings.Join(m.Providers, ","),
	}
	if m.GPU != "" {
		md["mlsched.machine.gpu"] = m.GPU
	}
	return md
}
