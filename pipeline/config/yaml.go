package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// parseYAML parses a config document into the values the decoder reads:
// map[string]any at the top level, then map[string]any (or map[any]any
// where keys are not all strings), []any and yaml.v3's scalars, as koanf's
// YAML parser gives them, in time linear in the document's size.
//
// koanf's parser decodes with yaml.v3 into interface values, and yaml.v3
// checks each mapping for duplicate keys by comparing every pair of keys:
// quadratic in a map's size (docs/benchmarks.md has the figures). So
// the document is parsed into yaml.Node trees here (linear), duplicates are
// found with a set, and each scalar is still resolved by yaml.v3 itself, so
// every scalar means what it did. Aliases, merge keys ("<<") and the limit
// on alias expansion (an alias bomb) follow yaml.v3's rules.
//
// The YAML library has panicked on malformed input in past releases; Load
// promises an error for any input, so a panic in it becomes a syntax error.
func parseYAML(b []byte) (raw map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			raw, err = nil, fmt.Errorf("yaml: parser failed: %v", p)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	if root.Kind == 0 {
		return nil, nil // an empty document
	}
	c := &converter{aliases: map[*yaml.Node]bool{}}
	top := c.resolveAlias(root)
	var out map[string]any
	switch {
	case top.Kind == yaml.MappingNode:
		out = map[string]any{}
		c.mapping(root, func(k *yaml.Node) (any, bool) {
			if k.ShortTag() == "!!null" {
				return nil, false // yaml.v3 drops a null key of a string map
			}
			var s string
			if err := k.Decode(&s); err != nil {
				c.errs = append(c.errs, fmt.Sprintf("line %d: cannot use key %s: %v", k.Line, shortValue(k), err))
				return nil, false
			}
			return s, true
		}, func(k, v any) { out[k.(string)] = v })
	case top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null":
		return nil, nil
	default:
		c.errs = append(c.errs, fmt.Sprintf("line %d: cannot unmarshal %s%s into a mapping of keys", top.Line, top.ShortTag(), shortValue(top)))
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	if len(c.errs) > 0 {
		return nil, &yaml.TypeError{Errors: c.errs}
	}
	return out, nil
}

// converter turns yaml.Node trees into plain values.
type converter struct {
	errs  []string // like yaml.v3's type errors: the document is wrong here
	fatal error    // like yaml.v3's failures: conversion stops
	// aliases are the alias nodes being expanded, to refuse an anchor that
	// contains itself; the counts bound alias expansion as yaml.v3 does.
	aliases                 map[*yaml.Node]bool
	count, aliased, inAlias int
}

// yaml.v3's bounds on alias expansion: up to 99% of a small document's
// decoded nodes may come from aliases, down to 10% of a very large one's.
const (
	aliasRatioLow  = 400_000
	aliasRatioHigh = 4_000_000
)

func allowedAliasRatio(count int) float64 {
	switch {
	case count <= aliasRatioLow:
		return 0.99
	case count >= aliasRatioHigh:
		return 0.10
	}
	return 0.99 - 0.89*float64(count-aliasRatioLow)/float64(aliasRatioHigh-aliasRatioLow)
}

// visit counts one node converted and stops an alias bomb.
func (c *converter) visit() bool {
	if c.fatal != nil {
		return false
	}
	c.count++
	if c.inAlias > 0 {
		c.aliased++
	}
	if c.aliased > 100 && c.count > 1000 && float64(c.aliased)/float64(c.count) > allowedAliasRatio(c.count) {
		c.fatal = fmt.Errorf("yaml: document contains excessive aliasing")
		return false
	}
	return true
}

// resolveAlias follows aliases to the node they stand for, without
// counting.
func (c *converter) resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// value converts any node.
func (c *converter) value(n *yaml.Node) any {
	if !c.visit() {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		return c.alias(n, c.value)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			out = append(out, c.value(e))
		}
		return out
	case yaml.MappingNode:
		return c.newMapping(n)
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			if te, ok := err.(*yaml.TypeError); ok {
				c.errs = append(c.errs, te.Errors...)
			} else if c.fatal == nil {
				c.fatal = err
			}
			return nil
		}
		return v
	}
	if c.fatal == nil {
		c.fatal = fmt.Errorf("yaml: cannot decode node with unknown kind %d", n.Kind)
	}
	return nil
}

// alias expands an alias node with f, refusing an anchor whose value
// contains the alias itself.
func (c *converter) alias(n *yaml.Node, f func(*yaml.Node) any) any {
	if c.aliases[n] {
		if c.fatal == nil {
			c.fatal = fmt.Errorf("yaml: anchor '%s' value contains itself", n.Value)
		}
		return nil
	}
	if n.Alias == nil {
		if c.fatal == nil {
			c.fatal = fmt.Errorf("yaml: unknown anchor '%s' referenced", n.Value)
		}
		return nil
	}
	c.aliases[n] = true
	c.inAlias++
	v := f(n.Alias)
	c.inAlias--
	delete(c.aliases, n)
	return v
}

// newMapping converts a mapping below the top level: map[string]any when
// every key is a string (or a merge), as yaml.v3 decides, else map[any]any.
func (c *converter) newMapping(n *yaml.Node) any {
	strKeys := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		if t := n.Content[i].ShortTag(); t != "!!str" && t != "!!merge" {
			strKeys = false
			break
		}
	}
	if strKeys {
		out := map[string]any{}
		c.mapping(n, func(k *yaml.Node) (any, bool) {
			if k.ShortTag() == "!!null" {
				// Only a merge source brings a null key here, and yaml.v3
				// leaves it out of a map of strings.
				return nil, false
			}
			var s string
			if err := k.Decode(&s); err != nil {
				c.errs = append(c.errs, fmt.Sprintf("line %d: cannot use key %s: %v", k.Line, shortValue(k), err))
				return nil, false
			}
			return s, true
		}, func(k, v any) { out[k.(string)] = v })
		return out
	}
	out := map[any]any{}
	c.mapping(n, func(k *yaml.Node) (any, bool) {
		kv := c.value(k)
		switch kv.(type) {
		case map[string]any, map[any]any, []any:
			if c.fatal == nil {
				c.fatal = fmt.Errorf("yaml: invalid map key: %#v", kv)
			}
			return nil, false
		}
		return kv, true
	}, func(k, v any) { out[k] = v })
	return out
}

// mapping converts the entries of mapping node n (or of the mapping an
// alias stands for) with key for their keys, storing each with set: first
// its own keys, a key given twice being an error, then those of its merge
// sources ("<<") that it lacks, earlier sources first.
func (c *converter) mapping(n *yaml.Node, key func(*yaml.Node) (any, bool), set func(k, v any)) {
	if n.Kind == yaml.AliasNode {
		c.alias(n, func(m *yaml.Node) any {
			c.visit()
			c.mapping(m, key, set)
			return nil
		})
		return
	}
	type id struct {
		kind  yaml.Kind
		value string
	}
	first := make(map[id]int, len(n.Content)/2)
	dup := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if line, ok := first[id{k.Kind, k.Value}]; ok {
			c.errs = append(c.errs, fmt.Sprintf("line %d: mapping key %#v already defined at line %d", k.Line, k.Value, line))
			dup = true
			continue
		}
		first[id{k.Kind, k.Value}] = k.Line
	}
	if dup {
		return
	}
	seen := make(map[any]bool, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			merges = append(merges, v)
			continue
		}
		if !c.visit() {
			return
		}
		kv, ok := key(k)
		if !ok {
			continue
		}
		seen[kv] = true
		set(kv, c.value(v))
	}
	for _, m := range merges {
		c.merge(m, key, func(k, v any) {
			if !seen[k] {
				seen[k] = true
				set(k, v)
			}
		})
	}
}

// merge adds the entries of a merge key's value: a mapping, an alias of
// one, or a sequence of those.
func (c *converter) merge(m *yaml.Node, key func(*yaml.Node) (any, bool), set func(k, v any)) {
	isMap := func(n *yaml.Node) bool {
		return n.Kind == yaml.MappingNode || n.Kind == yaml.AliasNode && n.Alias != nil && n.Alias.Kind == yaml.MappingNode
	}
	var sources []*yaml.Node
	ok := true
	switch {
	case isMap(m):
		sources = []*yaml.Node{m}
	case m.Kind == yaml.SequenceNode:
		for _, e := range m.Content {
			ok = ok && isMap(e)
		}
		sources = m.Content
	default:
		ok = false
	}
	if !ok {
		if c.fatal == nil {
			c.fatal = fmt.Errorf("yaml: map merge requires map or sequence of maps as the value")
		}
		return
	}
	for _, s := range sources {
		if !c.visit() {
			return
		}
		c.mapping(s, key, set)
	}
}

// isMerge says whether a key is YAML's merge key, <<.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// shortValue shows a node in an error as yaml.v3 does: a scalar's first
// characters, nothing for a collection.
func shortValue(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	if len(n.Value) > 10 {
		return " `" + n.Value[:7] + "...`"
	}
	return " `" + n.Value + "`"
}
