package config

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestLoadRejectsBadTypes(t *testing.T) {
	type withChan struct {
		C chan int `koanf:"c"`
	}
	type withIntKeys struct {
		M map[int]string `koanf:"m"`
	}
	type recursive struct {
		Next *recursive `koanf:"next"`
	}
	type unexported struct {
		x int `koanf:"x"`
	}
	type duplicate struct {
		A int `koanf:"a"`
		B int `koanf:"a"`
	}
	type deep struct {
		Inner struct {
			F func() `koanf:"f"`
		} `koanf:"inner"`
	}
	_ = unexported{}.x

	file := writeYAML(t, "")
	tests := []struct {
		name string
		dst  any
		want string // the error, exactly
		is   error
	}{
		{"nil", nil, "config: load: want a non-nil pointer to a struct, got <nil>", nil},
		{"not a pointer", testConfig{}, "config: load: want a non-nil pointer to a struct, got config.testConfig", nil},
		{"nil pointer", (*testConfig)(nil), "config: load: want a non-nil pointer to a struct, got *config.testConfig", nil},
		{"pointer to int", new(int), "config: load: want a non-nil pointer to a struct, got *int", nil},
		{"chan field", &withChan{}, "config: load: config.withChan.c: unsupported config field type chan int", ErrUnsupportedType},
		{"int map keys", &withIntKeys{}, "config: load: config.withIntKeys.m: unsupported config field type map[int]string: map keys must be strings", ErrUnsupportedType},
		{"recursive", &recursive{}, "config: load: config.recursive.next: unsupported config field type config.recursive: recursive type", ErrUnsupportedType},
		{"unexported", &unexported{}, "config: load: config.unexported.x: unsupported config field type: unexported field x has a koanf tag", ErrUnsupportedType},
		{"duplicate", &duplicate{}, "config: load: config.duplicate.a: unsupported config field type: two fields of config.duplicate have this key", ErrUnsupportedType},
		{"deep", &deep{}, "config: load: config.deep.inner.f: unsupported config field type func()", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Load(Options{File: file}, tt.dst)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Load() = %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Load() = %v, want it to wrap %v", err, tt.is)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	want := []string{
		"seed", "name", "verbose", "ratio", "small", "count", "max_jobs", "level", "limit",
		"extra.note", "extra.depth",
		"workers", "steps", "tags.<name>",
		"generate.eval.jobs", "generate.eval.timeout", "generate.models",
		"generate.weights.<name>", "generate.lanes.<name>.count", "generate.lanes.<name>.speed",
	}
	for _, v := range []any{testConfig{}, &testConfig{}} {
		if got := Keys(v); !slices.Equal(got, want) {
			t.Errorf("Keys(%T) =\n%q\nwant\n%q", v, got, want)
		}
	}
	for _, v := range []any{nil, 3, new(int), time.Time{}} {
		if got := Keys(v); got != nil {
			t.Errorf("Keys(%T) = %q, want nil", v, got)
		}
	}
}

func TestSuggestions(t *testing.T) {
	names := []string{"seed", "name", "verbose", "count", "generate"}
	tests := []struct{ bad, want string }{
		{"sed", "seed"},
		{"SEED", "seed"},
		{"cuont", "count"}, // transposition is one edit
		{"genrate", "generate"},
		{"verbos", "verbose"},
		{"x", ""}, // a single rune is never a typo of another
		{"workers", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.bad, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.bad, got, tt.want)
		}
	}
	keys := Keys(testConfig{})
	paths := []struct{ bad, want string }{
		{"generate.jobs", "generate.eval.jobs"},
		{"eval.timeout", "generate.eval.timeout"},
		{"zzz.qqq", ""},
		{"generate.model", "generate.models"},
		{"count", "count"}, // skips generate.lanes.<name>.count
	}
	for _, tt := range paths {
		if got := suggestPath(tt.bad, keys); got != tt.want {
			t.Errorf("suggestPath(%q) = %q, want %q", tt.bad, got, tt.want)
		}
	}
}
