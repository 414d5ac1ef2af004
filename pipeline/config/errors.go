package config

import (
	"errors"
	"strings"
)

// Sentinel errors. Every *Error wraps exactly one of them (or, for an
// unreadable file, the file system's error), so callers can tell a user's
// mistake apart from a missing file with errors.Is.
var (
	// ErrUnknownKey reports a key that names no field of the config struct.
	ErrUnknownKey = errors.New("unknown key")
	// ErrInvalidValue reports a value of the wrong type, out of range, or
	// null where the field is not optional.
	ErrInvalidValue = errors.New("invalid value")
	// ErrSyntax reports a config file that is not valid YAML or whose top
	// level is not a mapping.
	ErrSyntax = errors.New("invalid yaml")
	// ErrUsage reports a malformed --set argument, environment variable name
	// or missing file name: the input never got as far as naming a key.
	ErrUsage = errors.New("invalid usage")
	// ErrUnsupportedType reports a config struct with a field type this
	// package cannot decode. It is the program's fault, not the user's, so
	// Load returns it on its own rather than inside Errors.
	ErrUnsupportedType = errors.New("unsupported config field type")
)

// Error is one problem with one input: a key in the file, one environment
// variable or one --set argument. Its text is
//
//	<Source>: <Key>: <Msg>
//
// with empty parts left out, for example
//
//	pipeline.yaml: generate.eval.jobs: want an integer, got "abc"
type Error struct {
	// Source names the input at fault: the file path as given in
	// Options.File, "env NAME" or "--set ARG".
	Source string
	// Key is the full key path at fault ("generate.eval.jobs", with list
	// indices as "stages[2]"); empty when the input never named a key, as
	// with a YAML syntax error.
	Key string
	// Also are the other keys a problem of several rests on (a limit on
	// jobs/rate names the rate and the jobs): Attribute names whichever of
	// Key and Also the user set last, so that the message points at the
	// input they changed.
	Also []string
	// Msg says what is wrong, and for an unknown key which key was probably
	// meant.
	Msg string
	// Err is the cause: one of the sentinels, possibly joined with an
	// underlying error such as a *fs.PathError or a YAML parser error.
	Err error
}

// Error returns "source: key: msg", leaving out empty parts.
func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{e.Source, e.Key, e.Msg} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// Unwrap returns the cause, so errors.Is(err, ErrUnknownKey) works through an
// *Error.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem Load found, in input order: the file's (by key),
// then the environment's (by variable name), then the --set arguments' (as
// given). Load reports them all at once so that a user fixes a config in one
// round rather than one error per run.
type Errors []*Error

// Error returns one line per problem.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the individual errors, so errors.Is and errors.As look into
// each of them.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
