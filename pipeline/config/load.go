package config

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mlsched/mlsched/pipeline/userfile"
)

// Options says where Load finds the config and its overrides. Nothing is read
// from the process itself, so tests and the runner pass exactly what they
// mean.
type Options struct {
	// File is the YAML file's path. It is required; a missing file is an
	// error naming it. An empty file is a valid empty config.
	File string
	// Env is the environment as os.Environ returns it. Variables whose names
	// start with EnvPrefix override keys; all others are ignored.
	Env []string
	// EnvPrefix selects the variables in Env that are config, for example
	// "MLSCHED_", matched exactly. The rest of the name is the key path with "__" between
	// segments (keys themselves contain "_") and matched case-insensitively:
	// MLSCHED_GENERATE__EVAL__JOBS sets generate.eval.jobs. An empty prefix
	// turns environment overrides off rather than making every variable a key.
	EnvPrefix string
	// Sets are "key.path=value" arguments of repeatable --set flags, applied
	// in order. Lists are written comma-separated; a key below a map sets
	// that one entry; "list[i].key" sets a key of entry i of a list of
	// sections (the list must already have that entry).
	Sets []string
	// Origins, if not nil, is given, when Load succeeds, the input that set
	// each key, for Attribute to name in the app's own validation errors.
	Origins *Origins
	// Retired names keys the configuration once had, each with what to
	// do instead: an old config that sets one (or a key below it) gets
	// that, rather than a bare unknown key.
	Retired map[string]string
}

// Load decodes the config file into dst, then applies Options.Env, then
// Options.Sets, so that precedence is file < env < --set. dst must be a
// non-nil pointer to a struct holding the defaults; see the package
// documentation for the decoding rules.
//
// Every problem with the user's input is collected and returned together as
// Errors; dst is left untouched unless Load returns nil. A dst type this
// package cannot decode is reported alone, wrapping ErrUnsupportedType.
func Load(opts Options, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !isSection(rv.Type()) {
		return fmt.Errorf("config: load: want a non-nil pointer to a struct, got %T", dst)
	}
	t := rv.Type().Elem()
	if err := checkType(t); err != nil {
		return fmt.Errorf("config: load: %w", err)
	}
	// Decode into a shallow copy; the decoder copies on write below it, so
	// dst and the defaults it shares are untouched until everything is known
	// to be valid.
	work := reflect.New(t).Elem()
	work.Set(rv.Elem())

	var errs Errors
	origins := &Origins{}
	if raw, ok := readFile(opts.File, &errs); ok {
		d := &decoder{src: opts.File, root: t, errs: &errs, origins: origins, retired: opts.Retired}
		d.decode(work, raw, "")
	}
	for _, ov := range envOverrides(opts.Env, opts.EnvPrefix) {
		prefix := opts.EnvPrefix
		d := &decoder{src: "env " + ov.name, root: t, errs: &errs, fold: true, origins: origins, retired: opts.Retired, spellKey: func(key string) string {
			return prefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
		}}
		if segs, ok := envKey(ov.name[len(prefix):]); ok {
			d.set(work, segs, 0, ov.value)
		} else {
			d.fail("", ErrUsage, "want %sSECTION__KEY: empty key segment in the variable name", prefix)
		}
	}
	for _, arg := range opts.Sets {
		d := &decoder{src: "--set " + redactUserinfo(arg), root: t, errs: &errs, origins: origins, retired: opts.Retired}
		key, value, found := strings.Cut(arg, "=")
		key = strings.TrimSpace(key)
		switch {
		case !found:
			d.fail("", ErrUsage, "want key.path=value")
		case key == "":
			d.fail("", ErrUsage, "empty key; want key.path=value")
		default:
			segs := strings.Split(key, ".")
			if hasEmpty(segs) {
				d.fail(key, ErrUsage, "empty key segment; want key.path=value")
				continue
			}
			d.set(work, segs, 0, value)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	rv.Elem().Set(work)
	if opts.Origins != nil {
		*opts.Origins = *origins
	}
	return nil
}

// Decode overlays a document (YAML, or JSON such as Canonical writes) on
// the struct dst points to, with Load's rules; src names the document in
// errors. Decoding what Canonical wrote over the defaults gives back the
// value it was written from: it is how a configuration crosses to another
// process.
func Decode(src string, doc []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !isSection(rv.Type()) {
		return fmt.Errorf("config: decode: want a non-nil pointer to a struct, got %T", dst)
	}
	t := rv.Type().Elem()
	if err := checkType(t); err != nil {
		return fmt.Errorf("config: decode: %w", err)
	}
	raw, err := parseYAML(doc)
	if err != nil {
		return &Error{Source: src, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	work := reflect.New(t).Elem()
	work.Set(rv.Elem())
	var errs Errors
	d := &decoder{src: src, root: t, errs: &errs}
	d.decode(work, raw, "")
	if len(errs) > 0 {
		return errs
	}
	rv.Elem().Set(work)
	return nil
}

// MaxFileSize bounds the config file: a pipeline.yaml is a few kilobytes,
// and a bound lets a mistaken path (a log, a disk image) fail at once
// rather than fill the memory.
const MaxFileSize = 1 << 20

// readFile reads and parses the config file. It must be a regular file of
// at most MaxFileSize bytes: a named pipe, /dev/zero or /dev/null given as
// the config is refused before it is opened (package userfile). Layering
// is done on the typed value, not in a koanf.Koanf, whose key-path merging
// splits keys at the delimiter, which would break map keys that contain
// dots and lose which input a value came from.
func readFile(path string, errs *Errors) (map[string]any, bool) {
	if path == "" {
		*errs = append(*errs, &Error{Msg: "no config file given", Err: ErrUsage})
		return nil, false
	}
	b, err := userfile.ReadFile(path, MaxFileSize)
	if err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error() // the path is already the Source
		}
		*errs = append(*errs, &Error{Source: path, Msg: "read: " + msg, Err: err})
		return nil, false
	}
	raw, err := parseYAML(b)
	if err != nil {
		// A type error holds one message per bad node, each with its line.
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, m := range te.Errors {
				m = strings.ReplaceAll(m, "map[string]interface {}", "a mapping of keys")
				*errs = append(*errs, &Error{Source: path, Msg: m, Err: fmt.Errorf("%w: %w", ErrSyntax, err)})
			}
			return nil, false
		}
		*errs = append(*errs, &Error{Source: path, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Err: fmt.Errorf("%w: %w", ErrSyntax, err)})
		return nil, false
	}
	// An empty file (or one of only comments) parses to nil: no keys set.
	return raw, true
}

type envOverride struct{ name, value string }

// envOverrides picks the variables with the prefix, sorted by name so the
// result does not depend on the order of the environment; a name given twice
// keeps its last value, as the environment itself would.
func envOverrides(env []string, prefix string) []envOverride {
	if prefix == "" {
		return nil
	}
	last := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, prefix) {
			last[name] = value
		}
	}
	out := make([]envOverride, 0, len(last))
	for name, value := range last {
		out = append(out, envOverride{name, value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// envKey turns the part of a variable name after the prefix into key
// segments: "__" separates them, and they are lower-cased because keys are
// lower case by convention (struct keys also match case-insensitively).
func envKey(rest string) ([]string, bool) {
	segs := strings.Split(strings.ToLower(rest), "__")
	return segs, !hasEmpty(segs)
}

func hasEmpty(segs []string) bool {
	for _, s := range segs {
		if s == "" {
			return true
		}
	}
	return false
}

// userinfo matches the user and password of a URL (scheme://user:pass@).
var userinfo = regexp.MustCompile(`(://)[^/@\s]*@`)

// queryParam matches a URL query parameter, its name and "=" in group 1
// and its value in group 2.
var queryParam = regexp.MustCompile(`([?&]([^=&\s]*)=)([^&\s]*)`)

// credentialWords are what a parameter's name holds when its value is a
// credential (CredentialName).
var credentialWords = []string{"secret", "password", "passwd", "token", "credential", "accesskey", "session", "apikey"}

// CredentialName reports whether a parameter's name (of a URL's query,
// say) says that its value is a credential: secret_access_key,
// X-Amz-Security-Token, password and the like, case and separators
// aside.
func CredentialName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactUserinfo hides the credentials a URL in an argument carries (its
// userinfo, and the value of a query parameter whose name says it is a
// credential), so that a message naming the argument never shows them.
func redactUserinfo(arg string) string {
	arg = userinfo.ReplaceAllString(arg, "${1}…@")
	return queryParam.ReplaceAllStringFunc(arg, func(m string) string {
		g := queryParam.FindStringSubmatch(m)
		if CredentialName(g[2]) {
			return g[1] + "…"
		}
		return m
	})
}
