package config

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestCanonicalIgnoresSpelling is the cache-key property: YAML that differs
// only in formatting, key order, number spelling or stating a default must
// give the same bytes.
func TestCanonicalIgnoresSpelling(t *testing.T) {
	load := func(file string, sets ...string) []byte {
		t.Helper()
		cfg := defaults()
		if err := Load(Options{File: file, Sets: sets}, &cfg); err != nil {
			t.Fatalf("Load(%s) = %v", file, err)
		}
		b, err := Canonical(cfg)
		if err != nil {
			t.Fatalf("Canonical(%s) = %v", file, err)
		}
		return b
	}
	a := load("testdata/canon_a.yaml")
	b := load("testdata/canon_b.yaml")
	if !bytes.Equal(a, b) {
		t.Errorf("canonical forms differ:\ncanon_a: %s\ncanon_b: %s", a, b)
	}
	// The same value reached through overrides instead of the file.
	c := load("testdata/empty.yaml",
		"seed=1_000", "generate.eval.jobs=1e3", "generate.models=m1,m2",
		"generate.lanes.gpu.count=4", "generate.lanes.gpu.speed=1.5", "tags.team=sched")
	// The defaults hold a cpu lane the file replaced away; drop it by
	// comparing the documents without it.
	if diff := Diff(a, c); len(diff) != 2 || diff[0].Key != "generate.lanes.cpu.count" || diff[1].Key != "generate.lanes.cpu.speed" {
		t.Errorf("Diff(file, overrides) = %v, want only the default cpu lane removed", diff)
	}

	const golden = "testdata/canon.golden"
	if *update {
		if err := os.WriteFile(golden, append(a, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(append(a, '\n'), want) {
		t.Errorf("Canonical(canon_a.yaml) =\n%s\nwant (%s)\n%s", a, golden, want)
	}
}

func TestCanonical(t *testing.T) {
	type inner struct {
		B int `koanf:"b"`
		A int `koanf:"a"`
	}
	type outer struct {
		Z     string            `koanf:"z"`
		F64   float64           `koanf:"f64"`
		F32   float32           `koanf:"f32"`
		Dur   time.Duration     `koanf:"dur"`
		Ptr   *int              `koanf:"ptr"`
		Sec   *inner            `koanf:"sec"`
		List  []string          `koanf:"list"`
		Map   map[string]int    `koanf:"map"`
		PMap  map[string]*inner `koanf:"pmap"`
		Lvl   level             `koanf:"lvl"`
		U8    uint8             `koanf:"u8"`
		Inner inner             `koanf:"inner"`
		Skip  int
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{
			name: "zero value",
			v:    outer{},
			want: `{"dur":"0s","f32":0,"f64":0,"inner":{"a":0,"b":0},"list":[],"lvl":"low","map":{},"pmap":{},"u8":0,"z":""}`,
		},
		{
			name: "values",
			v: &outer{
				Z: "a<b", F64: 0.1, F32: 0.1, Dur: 90 * time.Second, Ptr: intPtr(3),
				Sec: &inner{B: 2}, List: []string{"x"}, Map: map[string]int{"b": 1, "a": 2},
				PMap: map[string]*inner{"n": nil}, Lvl: 1, U8: 255, Inner: inner{A: 1}, Skip: 9,
			},
			want: `{"dur":"1m30s","f32":0.1,"f64":0.1,"inner":{"a":1,"b":0},"list":["x"],"lvl":"high","map":{"a":2,"b":1},"pmap":{"n":null},"ptr":3,"sec":{"a":0,"b":2},"u8":255,"z":"a<b"}`,
		},
		{name: "large float", v: 1e21, want: `1e+21`},
		{name: "integral float", v: 1000.0, want: `1000`},
		{name: "negative zero", v: math.Copysign(0, -1), want: `0`},
		{name: "int", v: int64(-7), want: `-7`},
		{name: "nil", v: nil, want: `null`},
		{name: "nil pointer", v: (*inner)(nil), want: `null`},
		{name: "string escapes", v: "tab\t\"q\"", want: `"tab\t\"q\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.v)
			if err != nil {
				t.Fatalf("Canonical() = %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	type withNaN struct {
		F float64 `koanf:"f"`
	}
	type withFunc struct {
		F func() `koanf:"f"`
	}
	tests := []struct {
		name string
		v    any
		want string
		is   error
	}{
		{"nan", withNaN{F: math.NaN()}, "config: canonical: f: invalid value: NaN has no JSON form", ErrInvalidValue},
		{"inf in map", map[string]float64{"k": math.Inf(1)}, "config: canonical: k: invalid value: +Inf has no JSON form", ErrInvalidValue},
		{"unsupported", withFunc{}, "config: canonical: config.withFunc.f: unsupported config field type func()", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Canonical(tt.v)
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Errorf("Canonical() = %v, want %q wrapping %v", err, tt.want, tt.is)
			}
		})
	}
}

func TestFlatten(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"nested", `{"a":{"b":{"c":1}},"d":"x"}`, map[string]string{"a.b.c": "1", "d": `"x"`}},
		{"list is a leaf", `{"a":[1, {"b":2}]}`, map[string]string{"a": `[1,{"b":2}]`}},
		{"empty object is a leaf", `{"a":{},"b":1}`, map[string]string{"a": "{}", "b": "1"}},
		{"empty document", `{}`, map[string]string{}},
		{"number text kept", `{"a":1.50}`, map[string]string{"a": "1.50"}},
		{"null leaf", `{"a":null}`, map[string]string{"a": "null"}},
		{"not an object", `[1,2]`, map[string]string{"": "[1,2]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Flatten([]byte(tt.in))
			if err != nil {
				t.Fatalf("Flatten(%s) = %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Flatten(%s) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	for _, in := range []string{`{"a":`, `{"a.b":1,"a":{"b":2}}`, ``, `{"a":1} x`} {
		if got, err := Flatten([]byte(in)); err == nil {
			t.Errorf("Flatten(%q) = %v, want an error", in, got)
		}
	}
}

func TestDiff(t *testing.T) {
	old := `{"generate":{"eval":{"jobs":1000,"timeout":"10s"},"models":["a"]},"tags":{"owner":"ml"},"seed":1}`
	tests := []struct {
		name     string
		old, new string
		want     []Change
		text     []string
	}{
		{name: "identical", old: old, new: old},
		{
			name: "changed, added and removed, sorted by key",
			old:  old,
			new:  `{"generate":{"eval":{"jobs":2000,"timeout":"10s"},"models":["a","b"]},"tags":{"team":"x"},"seed":1,"limit":3}`,
			want: []Change{
				{Key: "generate.eval.jobs", Kind: Changed, Old: "1000", New: "2000"},
				{Key: "generate.models", Kind: Changed, Old: `["a"]`, New: `["a","b"]`},
				{Key: "limit", Kind: Added, New: "3"},
				{Key: "tags.owner", Kind: Removed, Old: `"ml"`},
				{Key: "tags.team", Kind: Added, New: `"x"`},
			},
			text: []string{
				`generate.eval.jobs: 1000 → 2000`,
				`generate.models: ["a"] → ["a","b"]`,
				`limit: (none) → 3`,
				`tags.owner: "ml" → (none)`,
				`tags.team: (none) → "x"`,
			},
		},
		{
			name: "map emptied",
			old:  `{"tags":{"owner":"ml"}}`,
			new:  `{"tags":{}}`,
			want: []Change{
				{Key: "tags", Kind: Added, New: "{}"},
				{Key: "tags.owner", Kind: Removed, Old: `"ml"`},
			},
		},
		{
			name: "first run: everything added",
			old:  ``,
			new:  `{"seed":1}`,
			want: []Change{{Key: "seed", Kind: Added, New: "1"}},
			text: []string{"seed: (none) → 1"},
		},
		{
			name: "not canonical JSON: one change of the whole",
			old:  `{"seed":1}`,
			new:  `{"seed":`,
			want: []Change{{Key: "", Kind: Changed, Old: `{"seed":1}`, New: `{"seed":`}},
			text: []string{`(root): {"seed":1} → {"seed":`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff([]byte(tt.old), []byte(tt.new))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Diff() =\n%#v\nwant\n%#v", got, tt.want)
			}
			for i, s := range tt.text {
				if got[i].String() != s {
					t.Errorf("Diff()[%d].String() = %q, want %q", i, got[i].String(), s)
				}
			}
		})
	}
}

func TestChangeKindString(t *testing.T) {
	for k, want := range map[ChangeKind]string{Changed: "changed", Added: "added", Removed: "removed"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(k), got, want)
		}
	}
}

// FuzzDiff checks that Flatten and Diff never panic and that a document never
// differs from itself.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1}}`), []byte(`{"a":{"b":2},"c":[1]}`))
	f.Add([]byte(`{"a.b":1,"a":{"b":2}}`), []byte(``))
	f.Add([]byte(`[`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		Diff(a, b)
		if _, err := Flatten(a); err == nil {
			if d := Diff(a, a); len(d) != 0 {
				t.Errorf("Diff(a, a) = %v, want nothing", d)
			}
		}
	})
}

// TestDecodeCanonical: what Canonical writes, Decode reads back over the
// defaults into the same value, whatever it holds (pointers, lists of
// sections, maps of sections, durations, text types, empty maps), so a
// configuration crosses to another process whole. A document that does
// not fit is an error naming its source.
func TestDecodeCanonical(t *testing.T) {
	limit := 7
	full := defaults()
	full.Seed, full.Name, full.Verbose, full.Ratio, full.Small, full.Count, full.Level = -3, "x \"quoted\"", true, 1e-9, -8, 65535, 1
	full.Limit, full.Extra = &limit, &extraConfig{Note: "n", Depth: 2}
	full.Workers, full.Steps = []int{}, []extraConfig{{Note: "a"}, {Depth: 9}}
	full.Tags = map[string]string{"a.b": "dotted", "": "empty key"}
	full.Generate.Eval.Timeout = 1500 * time.Microsecond
	full.Generate.Weights = map[string]float64{"m": 0.25}
	full.Generate.Lanes = map[string]laneConfig{}
	for _, want := range []testConfig{defaults(), full} {
		b, err := Canonical(want)
		if err != nil {
			t.Fatal(err)
		}
		got := defaults()
		got.Runtime, got.Skipped = want.Runtime, want.Skipped
		if err := Decode("payload", b, &got); err != nil {
			t.Fatalf("Decode(%s) = %v", b, err)
		}
		again, err := Canonical(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(b) {
			t.Errorf("round trip:\n got %s\nwant %s", again, b)
		}
	}
	var c testConfig
	if err := Decode("payload", []byte(`{"seed": "one"}`), &c); err == nil || !strings.Contains(err.Error(), "payload") || !strings.Contains(err.Error(), "seed") {
		t.Errorf("Decode of a bad document = %v, want an error naming payload and seed", err)
	}
	if err := Decode("payload", []byte(`{`), &c); err == nil || !errors.Is(err, ErrSyntax) {
		t.Errorf("Decode of broken JSON = %v, want ErrSyntax", err)
	}
}
