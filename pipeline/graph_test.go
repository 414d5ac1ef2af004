package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRegistryAndGraphErrors(t *testing.T) {
	run := func(context.Context, *Env) error { return nil }
	tests := []struct {
		name   string
		stages []Stage
		want   string
	}{
		{"duplicate", []Stage{{Name: "a", Run: run}, {Name: "a", Run: run}}, "duplicate"},
		{"bad name", []Stage{{Name: "a/b", Run: run}}, "invalid name"},
		{"unknown dep", []Stage{{Name: "a", Deps: []string{"zz"}, Run: run}}, `unknown dependency "zz"`},
		{"cycle", []Stage{{Name: "a", Deps: []string{"b"}, Run: run}, {Name: "b", Deps: []string{"a"}, Run: run}}, "a -> b -> a"},
		{"reads a non-dependency", []Stage{{Name: "a", Run: run}, {Name: "b", Reads: map[string][]string{"a": {"x"}}, Run: run}}, `reads files of "a"`},
		{"reads nothing", []Stage{{Name: "a", Run: run}, {Name: "b", Deps: []string{"a"}, Reads: map[string][]string{"a": nil}, Run: run}}, "at least one file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			var err error
			for _, s := range tt.stages {
				if err = r.Register(s); err != nil {
					break
				}
			}
			if err == nil {
				_, err = r.Graph()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestClosureAndDownstream(t *testing.T) {
	a, b, c, d := diamond()
	p := newHarness(t, a, b, c, d).pipeline()
	got, err := p.Graph.Closure([]string{"b"})
	if err != nil || strings.Join(got, ",") != "a,b" {
		t.Errorf("Closure(b) = %v, %v; want a,b", got, err)
	}
	if got := p.Graph.Downstream("a"); strings.Join(got, ",") != "b,d" {
		t.Errorf("Downstream(a) = %v, want b,d", got)
	}
	if _, err := p.Graph.Closure([]string{"nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Closure(nope) err = %v", err)
	}
}
