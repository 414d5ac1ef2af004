package config

import (
	"sort"
	"strings"
)

// Origins records which input gave each key its value: the file's path as
// given in Options.File, "env NAME" or "--set ARG", as in Error.Source. A
// key set by several inputs keeps the last, which is the one that won.
//
// The app's own validation runs on the merged value and knows keys, not
// inputs; Attribute uses Origins to name the input at fault, so that a
// range error for --set schedule.load=0 names the --set argument rather
// than the file.
type Origins struct {
	set map[string]origin
	seq int
	// sorted holds the keys in order, built on the first lookup, so that
	// the keys below one are found by binary search.
	sorted []string
}

type origin struct {
	src string
	seq int // later inputs have larger numbers
}

// record notes that src set key.
func (o *Origins) record(key, src string) {
	if o == nil || key == "" {
		return
	}
	if o.set == nil {
		o.set = map[string]origin{}
	}
	o.seq++
	o.set[key] = origin{src: src, seq: o.seq}
	o.sorted = nil
}

// Source returns the input that decided key's value: of the inputs that
// set key itself, a key above it (a list or map given whole) or a key below
// it (one entry of a map), the one applied last. It returns "" when no
// input set any of those: key has its default.
func (o *Origins) Source(key string) string { return o.sourceOf(key).src }

// sourceOf is Source's input with its place in the order of inputs.
func (o *Origins) sourceOf(key string) origin {
	if o == nil || len(o.set) == 0 {
		return origin{}
	}
	best := origin{}
	consider := func(k string) {
		if g, ok := o.set[k]; ok && g.seq > best.seq {
			best = g
		}
	}
	// key itself and every key above it.
	for k := key; k != ""; k = parentKey(k) {
		consider(k)
	}
	// The keys below it, which sort right after key+"." and key+"[".
	if o.sorted == nil {
		o.sorted = make([]string, 0, len(o.set))
		for k := range o.set {
			o.sorted = append(o.sorted, k)
		}
		sort.Strings(o.sorted)
	}
	for _, sep := range []string{".", "["} {
		prefix := key + sep
		for i := sort.SearchStrings(o.sorted, prefix); i < len(o.sorted) && strings.HasPrefix(o.sorted[i], prefix); i++ {
			consider(o.sorted[i])
		}
	}
	return best
}

// latest is, of keys, the one whose value the last input decided, and
// that input; the first key and "" when none was set.
func (o *Origins) latest(keys []string) (key, src string) {
	key = keys[0]
	best := 0
	for _, k := range keys {
		if g := o.sourceOf(k); g.seq > best {
			key, src, best = k, g.src, g.seq
		}
	}
	return key, src
}

// parentKey is the key above k: "a.b" for "a.b.c" and for "a.b[2]"; "" at
// the top.
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// Attribute names the input at fault in each error of err that names a
// key but no input: an *Error with an empty Source, as an app's validation
// returns them, gets the Source of its Key in o, or fallback when no input
// set the key (its default is at fault only together with another key's
// value). Other errors are kept, with fallback as their source. The result
// is Errors, one per error that errors.Join or Errors held, in order.
func Attribute(err error, o *Origins, fallback string) error {
	if err == nil {
		return nil
	}
	var out Errors
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *Error:
			c := *e
			if c.Source == "" {
				c.Key, c.Source = o.latest(append([]string{c.Key}, c.Also...))
				if c.Source == "" {
					c.Source = fallback
				}
			}
			out = append(out, &c)
		default:
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, x := range j.Unwrap() {
					if x != nil {
						walk(x)
					}
				}
				return
			}
			out = append(out, &Error{Source: fallback, Msg: err.Error(), Err: err})
		}
	}
	walk(err)
	return out
}
