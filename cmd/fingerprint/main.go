// Command fingerprint writes the generated Go file that records the code
// version of every stage package, as computed by package codeversion.
//
// Usage:
//
//	go run ./cmd/fingerprint -root . -under stages -o stages/codeversion_gen.go -pkg stages
//
// The file is rewritten only when its content changes, so its modification
// time stays put for make, and atomically (a temporary file renamed over it),
// so a build never sees half a file. A test in the output package compares
// the committed file with a fresh computation and fails while it is stale.
//
// Set MLSCHED_DEBUG_CODEVERSION=1 to print every hashed line.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mlsched/mlsched/pipeline/codeversion"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is the command without the process around it; it returns the exit
// status: 0 on success, 1 when fingerprinting fails, 2 on bad usage.
func run(args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("fingerprint", flag.ContinueOnError)
	flags.SetOutput(stderr)
	root := flags.String("root", ".", "module root `dir`ectory (the one holding go.mod)")
	under := flags.String("under", "stages", "fingerprint every package at or below this module-relative `dir`ectory")
	out := flags.String("o", "", "generated Go `file` to write (required)")
	pkg := flags.String("pkg", "", "package `name` of the generated file (required)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: fingerprint [-root dir] [-under dir] -o file -pkg name")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "fingerprint: %s\n", msg)
		flags.Usage()
		return 2
	}
	switch {
	case flags.NArg() > 0:
		return usageErr(fmt.Sprintf("unexpected arguments %q", flags.Args()))
	case *out == "":
		return usageErr("-o is required")
	case *pkg == "":
		return usageErr("-pkg is required")
	}

	// -o is relative to the working directory, as a user typing it expects;
	// Generate would read a relative path as relative to -root.
	outFile, err := filepath.Abs(*out)
	if err != nil {
		fmt.Fprintf(stderr, "fingerprint: %v\n", err)
		return 1
	}
	src, err := codeversion.Generate(*root, *under, outFile, *pkg)
	if err != nil {
		fmt.Fprintf(stderr, "fingerprint: %v\n", err)
		return 1
	}
	if err := writeIfChanged(outFile, src); err != nil {
		fmt.Fprintf(stderr, "fingerprint: %v\n", err)
		return 1
	}
	return 0
}

// writeIfChanged replaces the file at name with data unless it already holds
// exactly that. The new content goes to a temporary file in the same
// directory first, which is then renamed over name; the temporary name starts
// with a dot so that the go command ignores it should the rename never happen.
func writeIfChanged(name string, data []byte) (err error) {
	old, err := os.ReadFile(name)
	switch {
	case err == nil && bytes.Equal(old, data):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", name, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}

	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// CreateTemp makes the file 0600; a generated source file is as readable
	// as any other.
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
