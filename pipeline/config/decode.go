package config

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// decoder applies one input (the file, one environment variable or one --set
// argument) to a working copy of the config value and records what is wrong
// with it.
//
// It never mutates what the working copy shares with the caller's defaults:
// maps and pointed-to structs are copied before they are written (copy on
// write) and lists are always rebuilt, so a failed Load leaves dst as it was
// and a package-level default map is never edited behind the app's back.
type decoder struct {
	src  string       // Error.Source for everything this input gets wrong
	root reflect.Type // the config struct type, for full-path suggestions
	errs *Errors
	// fold matches struct keys case-insensitively (environment variables).
	fold bool
	// spellKey turns a suggested key path into what the user should type, so
	// that an environment variable is corrected with a variable name.
	spellKey func(key string) string
	// origins, if not nil, records the keys this input sets.
	origins *Origins
	// retired are Options.Retired.
	retired map[string]string
}

// spell returns key as the user should type it in this input.
func (d *decoder) spell(key string) string {
	if d.spellKey == nil {
		return key
	}
	return d.spellKey(key)
}

func (d *decoder) fail(key string, cause error, format string, args ...any) {
	*d.errs = append(*d.errs, &Error{Source: d.src, Key: key, Msg: fmt.Sprintf(format, args...), Err: cause})
}

// invalid records a wrong value; extra, if not nil, is the underlying parse
// error, kept in the chain for errors.As.
func (d *decoder) invalid(key string, extra error, format string, args ...any) {
	cause := ErrInvalidValue
	if extra != nil {
		cause = fmt.Errorf("%w: %w", ErrInvalidValue, extra)
	}
	d.fail(key, cause, format, args...)
}

// unknown records an unknown key. prefix is the valid path above it, bad the
// segment that names no field of struct type t, rest whatever the user wrote
// below it; the suggestion prefers a sibling of bad (a typo) and falls back
// to a full path elsewhere in the tree (a key put at the wrong level).
func (d *decoder) unknown(t reflect.Type, prefix, bad string, rest []string) {
	key := joinKey(prefix, bad)
	if len(rest) > 0 {
		key += "." + strings.Join(rest, ".")
	}
	for k := key; k != ""; k = parentKey(k) {
		if why, ok := d.retired[k]; ok {
			d.fail(key, ErrUnknownKey, "%s was removed: %s", k, why)
			return
		}
	}
	var names []string
	for _, f := range fieldsOf(t) {
		names = append(names, f.name)
	}
	var hint string
	if s := Closest(bad, names); s != "" {
		hint = joinKey(prefix, s)
		if len(rest) > 0 {
			hint += "." + strings.Join(rest, ".")
		}
	} else {
		hint = suggestPath(key, Keys(reflect.Zero(d.root).Interface()))
	}
	if hint == "" {
		d.fail(key, ErrUnknownKey, "unknown key")
		return
	}
	hint = d.spell(hint)
	d.fail(key, ErrUnknownKey, "unknown key (did you mean %s?)", hint)
}

// decode stores the YAML value raw, as produced by the YAML parser, into the
// settable v. Mappings merge into structs, replace maps and lists; scalars are
// checked against the field's type without any silent conversion.
func (d *decoder) decode(v reflect.Value, raw any, path string) {
	t := v.Type()
	if !isSection(t) {
		d.origins.record(path, d.src)
	}
	if raw == nil {
		if t.Kind() == reflect.Pointer {
			v.SetZero()
			return
		}
		if strings.HasSuffix(path, "]") {
			d.invalid(path, nil, "want %s, got null", want(t)) // a list element has no default
			return
		}
		d.invalid(path, nil, "want %s, got null (delete the key to keep the default)", want(t))
		return
	}
	if t == durationType || isText(t) {
		switch r := raw.(type) {
		case string:
			d.parse(v, r, path, strconv.Quote(r))
		case time.Time:
			// An unquoted YAML timestamp; a time.Time field wants it back.
			d.parse(v, r.Format(time.RFC3339Nano), path, r.Format(time.RFC3339Nano))
		case int, int64, uint64, float64:
			if t == durationType {
				d.invalid(path, nil, "want a duration with a unit such as \"10ms\", got %s", describe(raw))
				return
			}
			d.invalid(path, nil, "want %s, got %s", want(t), describe(raw))
		default:
			d.invalid(path, nil, "want %s, got %s", want(t), describe(raw))
		}
		return
	}
	if str, ok := raw.(string); ok && isShorthand(t) {
		d.parse(v, str, path, strconv.Quote(str))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !v.IsNil() && isSection(t) {
			p.Elem().Set(v.Elem()) // merge into a copy of the default
		}
		d.decode(p.Elem(), raw, path)
		v.Set(p)
	case reflect.Struct:
		m, ok := d.mapping(raw, path, t)
		if !ok {
			return
		}
		for _, k := range sortedKeys(m) {
			f, ok := lookupField(t, k, false)
			if !ok {
				d.unknown(t, path, k, nil)
				continue
			}
			d.decode(v.Field(f.index), m[k], joinKey(path, k))
		}
	case reflect.Map:
		m, ok := d.mapping(raw, path, t)
		if !ok {
			return
		}
		// A map in the file replaces the default wholesale: that is the
		// only way a user can drop a default entry.
		out := reflect.MakeMapWithSize(t, len(m))
		for _, k := range sortedKeys(m) {
			e := reflect.New(t.Elem()).Elem()
			d.decode(e, m[k], joinKey(path, k))
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		v.Set(out)
	case reflect.Slice:
		list, ok := raw.([]any)
		if !ok {
			d.invalid(path, nil, "want %s, got %s", want(t), describe(raw))
			return
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			d.decode(out.Index(i), e, fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(out)
	default:
		d.scalar(v, raw, path, describe(raw))
	}
}

// mapping returns raw as a mapping with string keys. The YAML parser gives
// map[any]any for mappings below the top level whose keys are not all
// strings; integer keys are taken as their decimal text (a map keyed by GPU
// index is natural to write), anything else is an error.
func (d *decoder) mapping(raw any, path string, t reflect.Type) (map[string]any, bool) {
	switch m := raw.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		ok := true
		for k, e := range m {
			var s string
			switch k := k.(type) {
			case string:
				s = k
			case int:
				s = strconv.Itoa(k)
			case int64:
				s = strconv.FormatInt(k, 10)
			case uint64:
				s = strconv.FormatUint(k, 10)
			default:
				d.invalid(path, nil, "want string keys, got key %s", describe(k))
				ok = false
				continue
			}
			out[s] = e
		}
		return out, ok
	}
	d.invalid(path, nil, "want %s, got %s", want(t), describe(raw))
	return nil, false
}

// scalar stores a YAML scalar (bool, int, int64, uint64, float64 or string)
// into a scalar field. got is how the value is shown in errors: as the YAML
// value, or as the quoted string an environment variable or --set gave.
func (d *decoder) scalar(v reflect.Value, raw any, path, got string) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			d.invalid(path, nil, "want %s, got %s", want(t), got)
			return
		}
		v.SetBool(b)
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			// Stringifying 1.0 would give "1": the user must say what they mean.
			d.invalid(path, nil, "want %s, got %s (quote it to make it a string)", want(t), got)
			return
		}
		v.SetString(s)
	case reflect.Float32, reflect.Float64:
		var f float64
		switch r := raw.(type) {
		case int:
			f = float64(r)
		case int64:
			f = float64(r)
		case uint64:
			f = float64(r)
		case float64:
			f = r
		default:
			d.invalid(path, nil, "want %s, got %s", want(t), got)
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// JSON, and so the canonical form, has no NaN or infinity.
			d.invalid(path, nil, "want a finite number, got %s", got)
			return
		}
		if v.OverflowFloat(f) {
			d.invalid(path, nil, "want a number in %s range, got %s", t.Kind(), got)
			return
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i, ok := toInt64(raw); ok && !v.OverflowInt(i) {
			v.SetInt(i)
			return
		}
		d.badInt(t, raw, path, got)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u, ok := toUint64(raw); ok && !v.OverflowUint(u) {
			v.SetUint(u)
			return
		}
		d.badInt(t, raw, path, got)
	default:
		d.invalid(path, nil, "want %s, got %s", want(t), got)
	}
}

// Floats at or beyond ±2^63 cannot be trusted as integers: the YAML parser
// turns an integer literal too big for int64 into the nearest float, which
// may be exactly 2^63 and would otherwise slip through as a wrong value.
const two63 = 9223372036854775808.0

func toInt64(raw any) (int64, bool) {
	switch r := raw.(type) {
	case int:
		return int64(r), true
	case int64:
		return r, true
	case uint64:
		if r > math.MaxInt64 {
			return 0, false
		}
		return int64(r), true
	case float64:
		// 1e6 is an integer; 1.5 is not.
		if r != math.Trunc(r) || r <= -two63 || r >= two63 {
			return 0, false
		}
		return int64(r), true
	}
	return 0, false
}

func toUint64(raw any) (uint64, bool) {
	switch r := raw.(type) {
	case int:
		if r < 0 {
			return 0, false
		}
		return uint64(r), true
	case int64:
		if r < 0 {
			return 0, false
		}
		return uint64(r), true
	case uint64:
		return r, true
	case float64:
		if r != math.Trunc(r) || r < 0 || r >= 2*two63 {
			return 0, false
		}
		return uint64(r), true
	}
	return 0, false
}

// badInt reports raw, which does not fit the integer type t: an integral
// number is out of range, and the user needs the bounds; anything else is
// simply not an integer.
func (d *decoder) badInt(t reflect.Type, raw any, path, got string) {
	integral := false
	switch r := raw.(type) {
	case int, int64, uint64:
		integral = true
	case float64:
		integral = r == math.Trunc(r) && !math.IsInf(r, 0)
	}
	if !integral {
		d.invalid(path, nil, "want %s, got %s", want(t), got)
		return
	}
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		d.invalid(path, nil, "want an integer in [0, %d], got %s", uint64(math.MaxUint64)>>(64-t.Bits()), got)
		return
	}
	n := t.Bits() - 1
	d.invalid(path, nil, "want an integer in [%d, %d], got %s", int64(-1)<<n, int64(math.MaxInt64)>>(63-n), got)
}

// parse stores s, a string from an environment variable, a --set argument or
// a YAML string, into the settable leaf v, parsing it according to v's type.
// got is how the value is shown in errors.
func (d *decoder) parse(v reflect.Value, s, path, got string) {
	t := v.Type()
	if t == durationType {
		dur, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
				d.invalid(path, nil, "want a duration with a unit such as \"10ms\", got %s", got)
				return
			}
			d.invalid(path, err, "want %s, got %s", want(t), got)
			return
		}
		v.SetInt(int64(dur))
		return
	}
	if isText(t) {
		p := reflect.New(t)
		if err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.invalid(path, err, "cannot use %s: %v", got, err)
			return
		}
		v.Set(p.Elem())
		return
	}
	if isShorthand(t) {
		p := reflect.New(t)
		if err := p.Interface().(Shorthand).SetShortForm(strings.TrimSpace(s)); err != nil {
			d.invalid(path, err, "cannot use %s: %v", got, err)
			return
		}
		v.Set(p.Elem())
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		d.parse(p.Elem(), s, path, got)
		v.Set(p)
	case reflect.Bool:
		switch b := strings.TrimSpace(s); {
		case strings.EqualFold(b, "true"):
			v.SetBool(true)
		case strings.EqualFold(b, "false"):
			v.SetBool(false)
		default:
			d.invalid(path, nil, "want %s, got %s", want(t), got)
		}
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		n, ok := parseNumber(strings.TrimSpace(s))
		if !ok {
			d.invalid(path, nil, "want %s, got %s", want(t), got)
			return
		}
		d.scalar(v, n, path, got)
	case reflect.Slice:
		if !isLeaf(t.Elem()) && !isShorthand(t.Elem()) {
			d.invalid(path, nil, "want a list of %s, which cannot be written as a string; set it in the file", plural(t.Elem()))
			return
		}
		// Lists are comma-separated; an empty string is the empty list, so
		// that a default list can be cleared from the command line.
		var items []string
		if strings.TrimSpace(s) != "" {
			items = strings.Split(s, ",")
		}
		out := reflect.MakeSlice(t, len(items), len(items))
		for i, item := range items {
			item = strings.TrimSpace(item)
			d.parse(out.Index(i), item, fmt.Sprintf("%s[%d]", path, i), strconv.Quote(item))
		}
		v.Set(out)
	default:
		d.invalid(path, nil, "want %s, got %s", want(t), got)
	}
}

func plural(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		return "lists"
	}
	return "mappings"
}

// parseNumber reads a number the way the YAML file may spell it (1000, 1e3,
// 1_000, 0x3e8, 0o17, 0b101), so that an override accepts what the file
// does. Integers come back as int64 or uint64, everything else as float64;
// the field's type decides what is acceptable. Unlike YAML, a leading zero is
// not octal: "010" in an environment variable is ten.
func parseNumber(s string) (any, bool) {
	if s == "" {
		return nil, false
	}
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 10, 64); err == nil {
		return i, true
	}
	if u, err := strconv.ParseUint(strings.TrimPrefix(plain, "+"), 10, 64); err == nil {
		return u, true
	}
	body := strings.TrimLeft(strings.ToLower(s), "+-")
	if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0o") || strings.HasPrefix(body, "0b") {
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i, true
		}
		if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			return u, true
		}
		return nil, false
	}
	// ParseFloat also takes "inf" and "nan"; the range checks reject them
	// with a clearer message than "not a number" would be.
	if f, err := strconv.ParseFloat(plain, 64); err == nil {
		return f, true
	}
	return nil, false
}

// set applies one override, "segs = s", below the settable v. at is the
// index of the first segment not yet consumed. Unlike the file, an override
// edits a single entry of a map rather than replacing it.
func (d *decoder) set(v reflect.Value, segs []string, at int, s string) {
	key := strings.Join(segs, ".")
	here := strings.Join(segs[:at], ".")
	t := v.Type()
	switch {
	case isSection(t) && t.Kind() == reflect.Pointer:
		if at == len(segs) {
			d.sectionSet(t.Elem(), key)
			return
		}
		p := reflect.New(t.Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem())
		}
		d.set(p.Elem(), segs, at, s)
		v.Set(p)
	case isSection(t):
		if at == len(segs) {
			d.sectionSet(t, key)
			return
		}
		name, index, indexed := cutIndex(segs[at])
		f, ok := lookupField(t, name, d.fold)
		if !ok {
			d.unknown(t, here, segs[at], segs[at+1:])
			return
		}
		// Report the key as the struct spells it, not as the env var did.
		segs[at] = f.name
		if indexed {
			d.setElem(v.Field(f.index), segs, at, index, s)
			return
		}
		d.set(v.Field(f.index), segs, at+1, s)
	case t.Kind() == reflect.Map:
		if at == len(segs) {
			d.invalid(key, nil, "a map cannot be set as a whole here; set one entry, as in %s", d.spell(key+".<name>"))
			return
		}
		// A leaf-valued map takes the rest of the path as its key, so map
		// keys may contain dots; a map of sections takes one segment.
		name, next := strings.Join(segs[at:], "."), len(segs)
		if isSection(t.Elem()) {
			name, next = segs[at], at+1
		}
		k := reflect.ValueOf(name).Convert(t.Key())
		e := reflect.New(t.Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			e.Set(old)
		}
		d.set(e, segs, next, s)
		out := reflect.MakeMapWithSize(t, v.Len()+1)
		iter := v.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		out.SetMapIndex(k, e)
		v.Set(out)
	default:
		if at < len(segs) {
			d.fail(key, ErrUnknownKey, "unknown key (%s is %s, not a section)", here, want(t))
			return
		}
		d.origins.record(key, d.src)
		d.parse(v, s, key, strconv.Quote(s))
	}
}

// cutIndex splits a path segment "name[i]" into name and i. A segment
// without brackets, or with a malformed index, is returned whole.
func cutIndex(seg string) (string, int, bool) {
	name, rest, ok := strings.Cut(seg, "[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return seg, 0, false
	}
	i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil || i < 0 {
		return seg, 0, false
	}
	return name, i, true
}

// setElem sets a key inside element index of a list of sections, as in
// schedule.cluster[1].speed=4: the list is copied first, so the defaults it
// may share are never changed.
func (d *decoder) setElem(v reflect.Value, segs []string, at, index int, s string) {
	list := segs[at]
	segs[at] = fmt.Sprintf("%s[%d]", list, index)
	key := strings.Join(segs, ".")
	here := strings.Join(segs[:at], ".")
	if here != "" {
		list = here + "." + list
	}
	t := v.Type()
	if t.Kind() != reflect.Slice || !isSection(t.Elem()) {
		d.fail(key, ErrUnknownKey, "unknown key (%s is %s, not a list of sections)", list, want(t))
		return
	}
	if index >= v.Len() {
		d.invalid(key, nil, "%s has %d entries, so index %d is out of range; add entries in the file", list, v.Len(), index)
		return
	}
	out := reflect.MakeSlice(t, v.Len(), v.Len())
	reflect.Copy(out, v)
	d.set(out.Index(index), segs, at+1, s)
	v.Set(out)
}

// sectionSet reports an override that names a whole section, pointing at
// one of its keys as an example of what can be set.
func (d *decoder) sectionSet(t reflect.Type, key string) {
	var keys []string
	appendKeys(&keys, t, key, map[reflect.Type]bool{})
	if len(keys) == 0 {
		d.invalid(key, nil, "a section cannot be set; it has no keys")
		return
	}
	d.invalid(key, nil, "a section cannot be set; set one of its keys, such as %s", d.spell(keys[0]))
}

// describe shows a YAML value in an error message: strings quoted, numbers
// and booleans as YAML would print them, collections by kind only.
func describe(raw any) string {
	switch r := raw.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(r)
	case bool:
		return strconv.FormatBool(r)
	case int:
		return strconv.Itoa(r)
	case int64:
		return strconv.FormatInt(r, 10)
	case uint64:
		return strconv.FormatUint(r, 10)
	case float64:
		if r == math.Trunc(r) && math.Abs(r) < 1e21 {
			// An integral float is shown as the integer it stands for, not
			// in exponent form.
			return strconv.FormatFloat(r, 'f', 0, 64)
		}
		return strconv.FormatFloat(r, 'g', -1, 64)
	case time.Time:
		return r.Format(time.RFC3339Nano) + " (a timestamp)"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a mapping"
	}
	return fmt.Sprintf("a %T", raw)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
