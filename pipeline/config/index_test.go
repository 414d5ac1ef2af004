package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type indexDevice struct {
	Name  string  `koanf:"name"`
	Speed float64 `koanf:"speed"`
}

type indexConfig struct {
	Cluster []indexDevice `koanf:"cluster"`
	Sizes   []int         `koanf:"sizes"`
}

// TestSetIndexesListsOfSections: --set reaches into one entry of a list of
// sections by the path validation errors print (cluster[1].speed).
func TestSetIndexesListsOfSections(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte("cluster:\n  - {name: a, speed: 1}\n  - {name: b, speed: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := indexConfig{Cluster: []indexDevice{{Name: "default", Speed: 9}}}
	tests := []struct {
		name, set string
		want      string // "" = success
		check     func(indexConfig) bool
	}{
		{"second entry", "cluster[1].speed=4", "", func(c indexConfig) bool {
			return len(c.Cluster) == 2 && c.Cluster[1].Speed == 4 && c.Cluster[0].Speed == 1 && c.Cluster[1].Name == "b"
		}},
		{"first entry", "cluster[0].name=x", "", func(c indexConfig) bool { return c.Cluster[0].Name == "x" }},
		{"out of range", "cluster[2].speed=4", "cluster[2].speed: cluster has 2 entries, so index 2 is out of range", nil},
		{"unknown key inside", "cluster[0].sped=4", "cluster[0].sped: unknown key (did you mean", nil},
		{"wrong type inside", "cluster[1].speed=fast", "cluster[1].speed: want a number", nil},
		{"not a list of sections", "sizes[0]=3", "not a list of sections", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaults
			err := Load(Options{File: file, Sets: []string{tt.set}}, &cfg)
			if tt.want == "" {
				if err != nil || !tt.check(cfg) {
					t.Errorf("Load(--set %s) = %+v, %v", tt.set, cfg, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(--set %s) err = %v, want it to contain %q", tt.set, err, tt.want)
			}
			if defaults.Cluster[0].Name != "default" || defaults.Cluster[0].Speed != 9 {
				t.Fatalf("the defaults changed: %+v", defaults.Cluster)
			}
		})
	}
}

func TestSetIndexCopiesTheDefaults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "empty.yaml")
	os.WriteFile(file, nil, 0o644)
	defaults := indexConfig{Cluster: []indexDevice{{Name: "default", Speed: 9}}}
	cfg := defaults
	if err := Load(Options{File: file, Sets: []string{"cluster[0].speed=3"}}, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Cluster[0].Speed != 3 || defaults.Cluster[0].Speed != 9 {
		t.Errorf("loaded %+v, defaults now %+v; want 3 and an unchanged 9", cfg.Cluster, defaults.Cluster)
	}
}
