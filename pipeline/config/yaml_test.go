package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// FuzzParseYAML checks parseYAML against yaml.v3's own decoding into
// map[string]any, which it replaces for speed: where yaml.v3 decodes a
// document, parseYAML gives the same value, and where yaml.v3 refuses one,
// parseYAML refuses it too.
func FuzzParseYAML(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"", "~", "# only a comment\n", "- 1", "5", "a: 1\na: 2", "a: {b: 1, b: 2}",
		"a: &x {b: 1}\nc: *x", "a: &a [*a]", "<<: {seed: 3}\nseed: 4",
		"base: &b {x: 1, y: 2}\nd: {<<: *b, y: 3}", "d: {<<: [{x: 1}, {x: 2, z: 3}]}",
		"d: {<<: 1}", "d: {<<: [1]}", "{1: a, 2.5: b, null: c, true: d}", "m: {1: a, 2.5: b, ~: c, true: d}",
		"m: {[1]: a}", "m: {{a: 1}: b}", "? [1]\n: x", "x: !!binary aGk=", "x: 2001-01-01", "x: '2001-01-01'",
		"x: 0x10\ny: 0o17\nz: 1_000\nw: .inf\nv: .nan\nu: 18446744073709551616", "x: !!str 12", "x: !!int '12'",
		"x: !!float abc", "'<<': {a: 1}", "a: *nope", "!!map {a: 1}", "--- a: 1\n--- b: 2", "a:\n  - b: 1\n    b: 2",
		"a: &a 1\nb: *a\nc: [*a, *a]", "x: !custom 5", "a: {b: &c {d: 1}, e: *c}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var want map[string]any
		wantErr := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			return yaml.Unmarshal([]byte(doc), &want)
		}()
		got, err := parseYAML([]byte(doc))
		if wantErr != nil {
			if err == nil {
				t.Fatalf("parseYAML(%q) = %v, nil; yaml.v3 refuses it: %v", doc, got, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("parseYAML(%q) = %v; yaml.v3 decodes it as %#v", doc, err, want)
		}
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("parseYAML(%q) = %#v, yaml.v3 gives %#v", doc, got, want)
		}
	})
}

// normalize makes values comparable with DeepEqual: NaN is not equal to
// itself.
func normalize(v any) any {
	switch v := v.(type) {
	case float64:
		if v != v {
			return "NaN"
		}
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		out := map[any]any{}
		for k, e := range v {
			out[normalize(k)] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// TestParseYAMLIsLinear loads a mapping of many keys, which yaml.v3's
// pairwise duplicate check takes quadratic time over.
func TestParseYAMLIsLinear(t *testing.T) {
	doc := func(n int) []byte {
		var b strings.Builder
		b.WriteString("generate:\n  models:\n")
		for i := range n {
			fmt.Fprintf(&b, "    m%d: 1\n", i)
		}
		return []byte(b.String())
	}
	small, large := doc(8_000), doc(64_000)
	timeIt := func(b []byte) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			raw, err := parseYAML(b)
			if err != nil || len(raw["generate"].(map[string]any)["models"].(map[string]any)) == 0 {
				t.Fatalf("parseYAML: %v", err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	ts, tl := timeIt(small), timeIt(large)
	// Linear is 8×; quadratic would be 64×. Allow for noise.
	if tl > 25*ts+50*time.Millisecond {
		t.Errorf("8k keys took %v, 64k keys %v: loading is not linear", ts, tl)
	}
	if testing.Short() {
		return
	}
	if tl > 5*time.Second {
		t.Errorf("64k keys took %v", tl)
	}
}
