package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	shorthandType       = reflect.TypeFor[Shorthand]()
)

// Shorthand is implemented, through a pointer, by a section type (a
// struct of keys) that a string may also stand for: an entry of a list
// whose common case is a name, such as a model, written "resnet18" for
// {name: resnet18}. The file, the environment and --set may give either
// form; Canonical writes the short one wherever it exists, so that a
// config written with names keeps its key when the type gains keys.
type Shorthand interface {
	// ShortForm returns the string the value can be written as, and
	// false where only its keys can say it.
	ShortForm() (string, bool)
	// SetShortForm sets the value from its string form, or says why the
	// string names nothing.
	SetShortForm(s string) error
}

// isShorthand reports whether t is a struct whose pointer implements
// Shorthand.
func isShorthand(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(shorthandType)
}

// field is one config field of a struct: a field with a koanf tag.
type field struct {
	name  string // the koanf tag name: the key segment
	index int    // reflect field index in its struct
}

// fieldsOf returns the config fields of struct type t in declaration order.
// A field is config only if it carries a non-empty koanf tag other than "-",
// so an app can keep runtime state next to its config without it becoming a
// key; options after a comma (",omitempty") are ignored.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		tag, ok := t.Field(i).Tag.Lookup("koanf")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		fs = append(fs, field{name: name, index: i})
	}
	return fs
}

// lookupField finds the config field named name. Environment variable names
// are case-insensitive, so the env layer matches with fold set; the file and
// --set are case-sensitive so that a key has exactly one spelling there.
func lookupField(t reflect.Type, name string, fold bool) (field, bool) {
	fs := fieldsOf(t)
	for _, f := range fs {
		if f.name == name {
			return f, true
		}
	}
	if fold {
		for _, f := range fs {
			if strings.EqualFold(f.name, name) {
				return f, true
			}
		}
	}
	return field{}, false
}

// isText reports whether t decodes from and encodes to a single string via
// encoding.TextUnmarshaler and encoding.TextMarshaler (net.IP, time.Time, an
// app's enum). Such types are leaves even if they are structs underneath.
func isText(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(textUnmarshalerType) && (t.Implements(textMarshalerType) || p.Implements(textMarshalerType))
}

// isSection reports whether t (or what it points to) is a struct of config
// fields, whose keys are addressed one level further down.
func isSection(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !isText(t)
}

// isLeaf reports whether a value of type t can be given as one string in an
// environment variable or --set argument.
func isLeaf(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType || isText(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// checkType rejects, before any input is looked at, struct types this package
// cannot decode or encode, so that an unsupported field is reported to the
// developer at once rather than to a user whose config happens to set it.
// It also rejects recursive types, which would make Keys and Canonical loop.
func checkType(t reflect.Type) error {
	return checkTypeAt(t, t.String(), map[reflect.Type]bool{})
}

func checkTypeAt(t reflect.Type, at string, open map[reflect.Type]bool) error {
	if t == durationType || isText(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return nil
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			return fmt.Errorf("%s: %w %s: pointer to pointer", at, ErrUnsupportedType, t)
		}
		return checkTypeAt(t.Elem(), at, open)
	case reflect.Slice:
		return checkTypeAt(t.Elem(), at+"[]", open)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("%s: %w %s: map keys must be strings", at, ErrUnsupportedType, t)
		}
		return checkTypeAt(t.Elem(), at+".<name>", open)
	case reflect.Struct:
		if open[t] {
			return fmt.Errorf("%s: %w %s: recursive type", at, ErrUnsupportedType, t)
		}
		open[t] = true
		defer delete(open, t)
		seen := map[string]bool{}
		for _, f := range fieldsOf(t) {
			sf := t.Field(f.index)
			if !sf.IsExported() {
				return fmt.Errorf("%s.%s: %w: unexported field %s has a koanf tag", at, f.name, ErrUnsupportedType, sf.Name)
			}
			if seen[f.name] {
				return fmt.Errorf("%s.%s: %w: two fields of %s have this key", at, f.name, ErrUnsupportedType, t)
			}
			seen[f.name] = true
			if err := checkTypeAt(sf.Type, at+"."+f.name, open); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: %w %s", at, ErrUnsupportedType, t)
}

// want describes what a value of type t must look like, for error messages.
func want(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return `a duration such as "10ms"`
	}
	if isText(t) {
		return "a string"
	}
	if isShorthand(t) {
		return "a string or a mapping"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

// Keys returns every key path that v's type accepts, in declaration order:
// leaves only, since sections are never set as a whole. A map-typed field
// appears as "path.<name>" (or "path.<name>.field" for a map of sections),
// a list as its own path. v is a struct or a pointer to one; for anything
// else Keys returns nil. Unsupported field types are listed like any other
// leaf; Load and Canonical are where they are reported.
func Keys(v any) []string {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !isSection(t) {
		return nil
	}
	var keys []string
	appendKeys(&keys, t, "", map[reflect.Type]bool{})
	return keys
}

func appendKeys(keys *[]string, t reflect.Type, prefix string, open map[reflect.Type]bool) {
	if open[t] {
		return // recursive types are rejected by checkType; just stop here
	}
	open[t] = true
	defer delete(open, t)
	for _, f := range fieldsOf(t) {
		path := joinKey(prefix, f.name)
		ft := t.Field(f.index).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case isSection(ft):
			appendKeys(keys, ft, path, open)
		case ft.Kind() == reflect.Map && isSection(ft.Elem()):
			et := ft.Elem()
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			appendKeys(keys, et, path+".<name>", open)
		case ft.Kind() == reflect.Map:
			*keys = append(*keys, path+".<name>")
		default:
			*keys = append(*keys, path)
		}
	}
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// maxSuggestRunes bounds the names the suggester compares: edit distance is
// quadratic, and no real key is this long.
const maxSuggestRunes = 64

// Closest returns the name in names nearest to bad by case-insensitive edit
// distance, or "" when none is near enough to be a plausible typo: at most a
// third of bad's length (at least 1, at most 3) edits away, and fewer edits
// than bad has runes, so that "x" does not suggest "y".
func Closest(bad string, names []string) string {
	n := utf8.RuneCountInString(bad)
	if n > maxSuggestRunes {
		return ""
	}
	limit := min(max(1, n/3), 3, n-1)
	best, bestD := "", limit+1
	for _, name := range names {
		if utf8.RuneCountInString(name) > maxSuggestRunes {
			continue
		}
		if d := editDistance(strings.ToLower(bad), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// suggestPath finds a valid key for a misplaced one, such as "generate.jobs"
// for "generate.eval.jobs": keys with the same last segment win, nearest
// full path first; failing that, a full path within typo distance. Keys
// under a map ("<name>") are skipped, since their placeholder never matches
// what the user wrote.
func suggestPath(bad string, keys []string) string {
	if utf8.RuneCountInString(bad) > 4*maxSuggestRunes {
		return ""
	}
	last := bad[strings.LastIndexByte(bad, '.')+1:]
	best, bestD := "", -1
	for _, k := range keys {
		if strings.Contains(k, "<") || !strings.EqualFold(k[strings.LastIndexByte(k, '.')+1:], last) {
			continue
		}
		if d := editDistance(bad, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best
	}
	var plain []string
	for _, k := range keys {
		if !strings.Contains(k, "<") {
			plain = append(plain, k)
		}
	}
	n := utf8.RuneCountInString(bad)
	limit := min(max(1, n/3), 3)
	for _, k := range plain {
		if d := editDistance(strings.ToLower(bad), strings.ToLower(k)); d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b in
// runes: Levenshtein plus adjacent transpositions, so that "cuont" is one
// edit from "count", as a typist would judge it.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
