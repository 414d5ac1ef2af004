package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Canonical returns the canonical JSON encoding of a typed config value: a
// config struct, a pointer to one, or any value of a supported field type.
// Equal values give equal bytes, whatever YAML they were decoded from, which
// is what lets the runner hash a stage's config section into its cache key.
// The rules are in the package documentation.
func Canonical(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return []byte("null"), nil
	}
	if err := checkType(rv.Type()); err != nil {
		return nil, fmt.Errorf("config: canonical: %w", err)
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, rv, ""); err != nil {
		return nil, fmt.Errorf("config: canonical: %w", err)
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v reflect.Value, path string) error {
	t := v.Type()
	if t == durationType {
		writeString(buf, time.Duration(v.Int()).String())
		return nil
	}
	if isText(t) {
		// MarshalText may have a pointer receiver; call it on a copy.
		p := reflect.New(t)
		p.Elem().Set(v)
		text, err := p.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		writeString(buf, string(text))
		return nil
	}
	if isShorthand(t) {
		p := reflect.New(t)
		p.Elem().Set(v)
		if short, ok := p.Interface().(Shorthand).ShortForm(); ok {
			writeString(buf, short)
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return writeCanonical(buf, v.Elem(), path)
	case reflect.Struct:
		type member struct {
			name string
			v    reflect.Value
		}
		var ms []member
		for _, f := range fieldsOf(t) {
			fv := v.Field(f.index)
			// An unset optional field is left out, so that "absent" and
			// "null" in the file hash the same and adding a new optional
			// field to the struct does not change every existing key.
			if fv.Kind() == reflect.Pointer && fv.IsNil() {
				continue
			}
			ms = append(ms, member{f.name, fv})
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		buf.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, m.name)
			buf.WriteByte(':')
			if err := writeCanonical(buf, m.v, joinKey(path, m.name)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case reflect.Map:
		// A nil map and an empty one mean the same config.
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			e := v.MapIndex(reflect.ValueOf(k).Convert(t.Key()))
			if err := writeCanonical(buf, e, joinKey(path, k)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case reflect.Slice:
		// As with maps, nil and empty are the same list.
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case reflect.Bool:
		buf.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: %w: %v has no JSON form", path, ErrInvalidValue, f)
		}
		if f == 0 {
			f = 0 // -0 and 0 are the same setting
		}
		// encoding/json writes the shortest form that round-trips at the
		// field's own width, so a float32 0.1 is 0.1, not 0.10000000149011612.
		var b []byte
		if t.Kind() == reflect.Float32 {
			b, _ = json.Marshal(float32(f))
		} else {
			b, _ = json.Marshal(f)
		}
		buf.Write(b)
	case reflect.String:
		writeString(buf, v.String())
	default:
		return fmt.Errorf("%s: %w %s", path, ErrUnsupportedType, t)
	}
	return nil
}

// writeString writes s as a JSON string without encoding/json's HTML
// escaping, so that "<" in a value reads as itself in a diff.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}

// Flatten turns a canonical JSON document into leaf key paths and the JSON
// text of each leaf: {"generate":{"eval":{"jobs":1000}}} gives
// "generate.eval.jobs" → "1000". Lists are leaves (a list is replaced as a
// whole, so it is compared as a whole), and so is an empty object, so that
// emptying a map shows up. A document that is not an object flattens to the
// single key "". Two paths that collide, as a map key "a.b" would with a
// section a holding b, are an error rather than a silent overwrite.
func Flatten(canonical []byte) (map[string]string, error) {
	out := map[string]string{}
	if err := flattenInto(out, "", json.RawMessage(canonical)); err != nil {
		return nil, fmt.Errorf("config: flatten: %w", err)
	}
	return out, nil
}

func flattenInto(out map[string]string, prefix string, raw json.RawMessage) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return err
		}
		if len(obj) > 0 || prefix == "" {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := flattenInto(out, joinKey(prefix, k), obj[k]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, trimmed); err != nil {
		return err
	}
	if _, dup := out[prefix]; dup {
		return fmt.Errorf("key %q appears twice", prefix)
	}
	out[prefix] = compact.String()
	return nil
}

// ChangeKind says whether a key was added, removed or changed.
type ChangeKind int

// The kinds of Change.
const (
	// Changed is a key present on both sides with different values.
	Changed ChangeKind = iota
	// Added is a key present only in the new config.
	Added
	// Removed is a key present only in the old config.
	Removed
)

// String returns "changed", "added" or "removed".
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	}
	return "changed"
}

// Change is one leaf that differs between two canonical configs, as Flatten
// names it.
type Change struct {
	// Key is the leaf's path, "" for a document that is not an object.
	Key string
	// Kind says which of Old and New exist.
	Kind ChangeKind
	// Old and New are the JSON text of the leaf before and after; the side
	// that does not exist (see Kind) is "".
	Old, New string
}

// String returns the change as "key: old → new", with "(none)" for the side
// that does not exist, for example
//
//	generate.eval.jobs: 1000 → 2000
//	generate.tags.fast: (none) → true
func (c Change) String() string {
	old, new := c.Old, c.New
	switch c.Kind {
	case Added:
		old = "(none)"
	case Removed:
		new = "(none)"
	}
	key := c.Key
	if key == "" {
		key = "(root)"
	}
	return key + ": " + old + " → " + new
}

// Diff returns the leaves that differ between two canonical configs, sorted
// by key, to explain why a stage's cache key changed. An empty document on
// either side counts as an empty config, so a stage seen for the first time
// shows every key as added. Diff has no error to return: if either side is
// not valid canonical JSON it falls back to one change of the whole document
// (key "") when the bytes differ.
func Diff(old, new []byte) []Change {
	fo, errOld := flattenOrEmpty(old)
	fn, errNew := flattenOrEmpty(new)
	if errOld != nil || errNew != nil {
		if bytes.Equal(old, new) {
			return nil
		}
		return []Change{{Key: "", Kind: Changed, Old: string(old), New: string(new)}}
	}
	keys := make([]string, 0, len(fo)+len(fn))
	for k := range fo {
		keys = append(keys, k)
	}
	for k := range fn {
		if _, ok := fo[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var changes []Change
	for _, k := range keys {
		o, inOld := fo[k]
		n, inNew := fn[k]
		switch {
		case !inOld:
			changes = append(changes, Change{Key: k, Kind: Added, New: n})
		case !inNew:
			changes = append(changes, Change{Key: k, Kind: Removed, Old: o})
		case o != n:
			changes = append(changes, Change{Key: k, Kind: Changed, Old: o, New: n})
		}
	}
	return changes
}

func flattenOrEmpty(doc []byte) (map[string]string, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return map[string]string{}, nil
	}
	return Flatten(doc)
}

// Lines returns a canonical document flattened into sorted "key = value"
// lines, each key preceded by prefix: how people read a configuration.
func Lines(prefix string, canonical []byte) ([]string, error) {
	flat, err := Flatten(canonical)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(flat))
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		lines = append(lines, prefix+k+" = "+flat[k])
	}
	return lines, nil
}
