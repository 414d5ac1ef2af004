package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testConfig has a field of every kind the package supports, the way an app
// would lay out its config.
type testConfig struct {
	Seed     int64             `koanf:"seed"`
	Name     string            `koanf:"name"`
	Verbose  bool              `koanf:"verbose"`
	Ratio    float64           `koanf:"ratio"`
	Small    int8              `koanf:"small"`
	Count    uint16            `koanf:"count"`
	MaxJobs  int               `koanf:"max_jobs"`
	Level    level             `koanf:"level"`
	Limit    *int              `koanf:"limit"`
	Extra    *extraConfig      `koanf:"extra"`
	Workers  []int             `koanf:"workers"`
	Steps    []extraConfig     `koanf:"steps"`
	Tags     map[string]string `koanf:"tags"`
	Generate generateConfig    `koanf:"generate"`

	// Not config: no tag, or tagged "-".
	Runtime string
	Skipped int `koanf:"-"`
}

type extraConfig struct {
	Note  string `koanf:"note"`
	Depth int    `koanf:"depth"`
}

type generateConfig struct {
	Eval    evalConfig            `koanf:"eval"`
	Models  []string              `koanf:"models"`
	Weights map[string]float64    `koanf:"weights"`
	Lanes   map[string]laneConfig `koanf:"lanes"`
}

type evalConfig struct {
	Jobs    int           `koanf:"jobs"`
	Timeout time.Duration `koanf:"timeout"`
}

type laneConfig struct {
	Count int     `koanf:"count"`
	Speed float64 `koanf:"speed"`
}

// level is an app-defined enum decoded through encoding.TextUnmarshaler.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 0
	case "high":
		*l = 1
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

func (l level) MarshalText() ([]byte, error) {
	if l == 1 {
		return []byte("high"), nil
	}
	return []byte("low"), nil
}

// defaults returns fresh defaults; each test gets its own maps.
func defaults() testConfig {
	return testConfig{
		Seed:    1,
		Name:    "base",
		Ratio:   0.5,
		MaxJobs: 10,
		Workers: []int{1},
		Tags:    map[string]string{"owner": "ml"},
		Generate: generateConfig{
			Eval:   evalConfig{Jobs: 1000, Timeout: 10 * time.Second},
			Models: []string{"m1"},
			Lanes:  map[string]laneConfig{"cpu": {Count: 8, Speed: 1}},
		},
		Runtime: "kept",
		Skipped: 3,
	}
}

// writeYAML writes body to pipeline.yaml in a fresh directory and makes that
// the working directory, so that messages name the file exactly as a user
// running in their project would see it.
func writeYAML(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return "pipeline.yaml"
}

func intPtr(i int) *int { return &i }
