package pipeline

import (
	"github.com/mlsched/mlsched/pipeline/config"

	"fmt"
	"maps"
	"slices"
	"strings"
)

// Registry collects stages by name, refusing duplicates. Its order of
// registration is the order used to break ties everywhere, so outputs never
// depend on map iteration.
type Registry struct {
	byName map[string]*Stage
	order  []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*Stage{}} }

// Register adds a stage. It fails on an invalid or duplicate name.
func (r *Registry) Register(s Stage) error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, `/\@. `):
		return fmt.Errorf("register stage %q: invalid name", s.Name)
	case r.byName[s.Name] != nil:
		return fmt.Errorf("register stage %q: duplicate name", s.Name)
	}
	st := s
	r.byName[s.Name] = &st
	r.order = append(r.order, s.Name)
	return nil
}

// SetRun gives a registered stage its code.
func (r *Registry) SetRun(name string, run RunFunc) error {
	s := r.byName[name]
	if s == nil {
		return fmt.Errorf("set the code of stage %q: %w", name, ErrNotFound)
	}
	s.Run = run
	return nil
}

// Graph is a validated DAG of stages.
type Graph struct {
	stages map[string]*Stage
	topo   []string // dependencies before dependents; ties by registration order
}

// Graph validates the registry (every dependency exists, no cycles) and
// returns the DAG.
func (r *Registry) Graph() (*Graph, error) {
	for _, name := range r.order {
		s := r.byName[name]
		for _, d := range s.Deps {
			if r.byName[d] == nil {
				return nil, fmt.Errorf("stage %s: unknown dependency %q: %w", name, d, ErrNotFound)
			}
		}
		for _, d := range slices.Sorted(maps.Keys(s.Reads)) {
			if !slices.Contains(s.Deps, d) || len(s.Reads[d]) == 0 {
				return nil, fmt.Errorf("stage %s: reads files of %q, which must be one of its dependencies (%v) and name at least one file", name, d, s.Deps)
			}
		}
	}
	g := &Graph{stages: r.byName}
	// Depth-first in registration order gives a deterministic order that
	// also keeps registration order among independent stages.
	const (
		unseen = iota
		visiting
		done
	)
	mark := map[string]int{}
	var path []string
	var visit func(string) error
	visit = func(n string) error {
		switch mark[n] {
		case done:
			return nil
		case visiting:
			i := slices.Index(path, n)
			return fmt.Errorf("%s: %w", strings.Join(append(path[i:], n), " -> "), ErrCycle)
		}
		mark[n] = visiting
		path = append(path, n)
		for _, d := range g.stages[n].Deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		mark[n] = done
		g.topo = append(g.topo, n)
		return nil
	}
	for _, n := range r.order {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Stage returns the named stage, or nil.
func (g *Graph) Stage(name string) *Stage { return g.stages[name] }

// Names returns every stage in topological order.
func (g *Graph) Names() []string { return slices.Clone(g.topo) }

// Closure returns the targets and all their upstream stages in topological
// order. No targets means every stage.
func (g *Graph) Closure(targets []string) ([]string, error) {
	if len(targets) == 0 {
		return g.Names(), nil
	}
	need := map[string]bool{}
	var add func(string)
	add = func(n string) {
		if need[n] {
			return
		}
		need[n] = true
		for _, d := range g.stages[n].Deps {
			add(d)
		}
	}
	for _, t := range targets {
		if g.stages[t] == nil {
			return nil, g.Unknown(t)
		}
		add(t)
	}
	var out []string
	for _, n := range g.topo {
		if need[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// Downstream returns the stages that depend on name, directly or not, in
// topological order.
func (g *Graph) Downstream(name string) []string {
	affected := map[string]bool{name: true}
	var out []string
	for _, n := range g.topo {
		for _, d := range g.stages[n].Deps {
			if affected[d] && !affected[n] {
				affected[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// Edges returns every dependency edge as (from, to) pairs in topological
// order of the dependent stage.
func (g *Graph) Edges() [][2]string {
	var out [][2]string
	for _, n := range g.topo {
		for _, d := range g.stages[n].Deps {
			out = append(out, [2]string{d, n})
		}
	}
	return out
}

// notFoundError is an ErrNotFound whose message says it all already.
type notFoundError string

func notFound(msg string) error { return notFoundError(msg) }

// Unknown is the error for a stage name the graph does not hold: it names
// the stage the user most likely meant, when one is a typo away, and the
// stages there are.
func (g *Graph) Unknown(name string) error {
	hint := ""
	if s := config.Closest(name, g.topo); s != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", s)
	}
	return notFound(fmt.Sprintf("unknown stage %q%s; the stages are %s", name, hint, strings.Join(g.topo, ", ")))
}

func (e notFoundError) Error() string        { return string(e) }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }
