package ort

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setupLib creates an (empty) make setup library below dir and returns its
// path. Locate only looks for the file, so its contents do not matter here.
func setupLib(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(SetupPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLocateOrder(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty") // no .tools below
	second := filepath.Join(tmp, "second")
	third := filepath.Join(tmp, "third")
	secondLib := setupLib(t, second)
	setupLib(t, third)
	dirs := []string{empty, second, third}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := func(v string) []string { return []string{"HOME=/root", EnvVar + "=" + v} }

	tests := []struct {
		name           string
		flag, config   string
		environ        []string
		dirs           []string
		wantPath       string
		wantSrc        Source
		wantErr        bool
		wantErrContain []string
	}{
		{name: "flag beats all", flag: "/f/lib.so", config: "/c/lib.so", environ: env("/e/lib.so"), dirs: dirs,
			wantPath: "/f/lib.so", wantSrc: SourceFlag},
		{name: "env beats config", config: "/c/lib.so", environ: env("/e/lib.so"), dirs: dirs,
			wantPath: "/e/lib.so", wantSrc: SourceEnv},
		{name: "config beats setup folder", config: "/c/lib.so", dirs: dirs,
			wantPath: "/c/lib.so", wantSrc: SourceConfig},
		{name: "first search dir that has it", dirs: dirs,
			wantPath: secondLib, wantSrc: SourceSetup},
		{name: "empty env value is unset", config: "/c/lib.so", environ: env(""), dirs: dirs,
			wantPath: "/c/lib.so", wantSrc: SourceConfig},
		{name: "first env entry wins", environ: []string{EnvVar + "=/first.so", EnvVar + "=/second.so"},
			wantPath: "/first.so", wantSrc: SourceEnv},
		{name: "variable with a longer name is not it", environ: []string{EnvVar + "_X=/x.so"}, dirs: dirs,
			wantPath: secondLib, wantSrc: SourceSetup},
		{name: "explicit path that does not exist is kept", flag: "/does/not/exist.so", dirs: dirs,
			wantPath: "/does/not/exist.so", wantSrc: SourceFlag},
		{name: "relative path made absolute", flag: "lib/libonnxruntime.so.1",
			wantPath: filepath.Join(cwd, "lib", "libonnxruntime.so.1"), wantSrc: SourceFlag},
		{name: "nothing found", dirs: []string{empty, filepath.Join(tmp, "other")}, wantErr: true, wantSrc: SourceSetup,
			wantErrContain: []string{filepath.Join(empty, SetupPath), filepath.Join(tmp, "other", SetupPath), "(from make setup)", "not installed", "--ort-lib", EnvVar, "profile.ort_lib", "run make setup"}},
		{name: "nowhere to look", wantErr: true, wantSrc: SourceSetup,
			wantErrContain: []string{"no onnxruntime library", SetupPath, "run make setup"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, src, err := Locate(tc.flag, tc.config, tc.environ, tc.dirs)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Locate = %q, %q, nil; want an error", path, src)
				}
				var oe *Error
				if !errors.As(err, &oe) || !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Locate error %v (%T): want an *Error wrapping fs.ErrNotExist", err, err)
				}
				for _, s := range tc.wantErrContain {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Locate error %q does not contain %q", err, s)
					}
				}
				if src != tc.wantSrc {
					t.Errorf("Locate source = %q, want %q", src, tc.wantSrc)
				}
				return
			}
			if err != nil || path != tc.wantPath || src != tc.wantSrc {
				t.Errorf("Locate = %q, %q, %v; want %q, %q, nil", path, src, err, tc.wantPath, tc.wantSrc)
			}
		})
	}
}

// TestErrorHint checks that every source's error says to run make setup and
// names the setting that overrides the setup folder.
func TestErrorHint(t *testing.T) {
	for src, setting := range map[Source]string{
		SourceFlag: "--ort-lib", SourceEnv: EnvVar, SourceConfig: "profile.ort_lib", SourceSetup: "make setup",
	} {
		err := &Error{Path: "/x/libonnxruntime.so.1", Source: src, Err: fs.ErrNotExist}
		msg := err.Error()
		for _, want := range []string{"ort: load /x/libonnxruntime.so.1 (from " + string(src) + "): ", "file does not exist", "run make setup", setting} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q does not contain %q", src, msg, want)
			}
		}
	}
}
