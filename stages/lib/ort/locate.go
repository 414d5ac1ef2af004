package ort

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source says where a library path came from. Errors name it, so that a
// user can tell which setting to fix.
type Source string

// The places a library path can come from, highest precedence first.
const (
	// SourceFlag is the --ort-lib command-line flag.
	SourceFlag Source = "flag"
	// SourceEnv is the ONNXRUNTIME_LIB environment variable.
	SourceEnv Source = "env " + EnvVar
	// SourceConfig is the profile.ort_lib key of the pipeline configuration.
	SourceConfig Source = "config profile.ort_lib"
	// SourceSetup is the folder that make setup fills (SetupPath).
	SourceSetup Source = "make setup"
)

// EnvVar names the environment variable that overrides the configured
// library.
const EnvVar = "ONNXRUNTIME_LIB"

// SetupPath is where make setup installs the library, relative to the
// repository root (slash-separated).
const SetupPath = ".tools/onnxruntime/libonnxruntime.so.1"

// Locate returns the library to use and where its path came from: flag,
// then the ONNXRUNTIME_LIB entry of environ, then configured, then the first
// of <dir>/.tools/onnxruntime/libonnxruntime.so.1 for dir in searchDirs that
// exists. An empty flag, configured or variable counts as unset.
//
// An explicit choice is returned without looking at the file, even when it
// does not exist: falling back to another library would hide the mistake,
// and Init checks the file and names the source. configured is taken as the
// caller gives it; callers resolve a relative profile.ort_lib against the
// config file's directory first, as for every other path in the config. A
// path that is still relative is made absolute against the working
// directory, because dlopen searches the library path for a bare file name.
//
// Locate fails only when nothing is set and no search directory holds the
// make setup library; the error is an *Error that says to run make setup.
func Locate(flag, configured string, environ []string, searchDirs []string) (path string, src Source, err error) {
	switch {
	case flag != "":
		return absPath(flag), SourceFlag, nil
	case lookupEnv(environ, EnvVar) != "":
		return absPath(lookupEnv(environ, EnvVar)), SourceEnv, nil
	case configured != "":
		return absPath(configured), SourceConfig, nil
	}
	var tried []string
	for _, dir := range searchDirs {
		if dir == "" {
			continue
		}
		p := absPath(filepath.Join(dir, filepath.FromSlash(SetupPath)))
		// Anything but "does not exist" (a permission problem, a folder in
		// the way) is this candidate's problem for Init to report, not a
		// reason to move on to the next directory.
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return p, SourceSetup, nil
		}
		tried = append(tried, p)
	}
	unset := fmt.Sprintf("no --ort-lib flag, %s or profile.ort_lib set", EnvVar)
	if len(tried) == 0 {
		return "", SourceSetup, &Error{Source: SourceSetup,
			Err: notFound(fmt.Sprintf("no onnxruntime library: %s, and no directory to look for %s in", unset, SetupPath))}
	}
	also := ""
	if len(tried) > 1 {
		also = " (nor " + strings.Join(tried[1:], ", ") + ")"
	}
	return "", SourceSetup, &Error{Path: tried[0], Source: SourceSetup,
		Err: notFound(fmt.Sprintf("not installed%s, and %s", also, unset))}
}

// notFound is Locate's error when there is no library at all. It matches
// fs.ErrNotExist, so that a caller can tell "not installed" from "broken",
// without adding that error's text to a message that already says so.
type notFound string

func (e notFound) Error() string { return string(e) }

func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// lookupEnv returns the value of key in environ ("KEY=value" entries). The
// first entry wins, as it does for os.Getenv.
func lookupEnv(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// absPath makes p absolute and clean; if the working directory cannot be
// read, p is only cleaned, and Init's error will still name it.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Error is a library that could not be found or loaded. Its message names
// the path, where the path came from and what to do about it.
type Error struct {
	// Path is the library path; empty when there was none to try.
	Path string
	// Source is where Path came from.
	Source Source
	// Err is what went wrong.
	Err error
}

// Error formats as "ort: load PATH (from SOURCE): ERR: run make setup...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ort: ")
	if e.Path != "" {
		fmt.Fprintf(&b, "load %s (from %s): ", e.Path, e.Source)
	}
	fmt.Fprintf(&b, "%v: %s", e.Err, e.Source.hint())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// hint says what fixes a bad library from s. make setup always fixes it
// when nothing overrides the folder it fills; an override has to be fixed
// or dropped as well.
func (s Source) hint() string {
	switch s {
	case SourceFlag:
		return "run make setup and drop --ort-lib, or pass an onnxruntime " + SupportedVersion + " (or later 1.x) library"
	case SourceEnv:
		return "run make setup and unset " + EnvVar + ", or point it at an onnxruntime " + SupportedVersion + " (or later 1.x) library"
	case SourceConfig:
		return "run make setup and remove profile.ort_lib, or point it at an onnxruntime " + SupportedVersion + " (or later 1.x) library"
	default:
		return "run make setup"
	}
}
