package pipeline

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// seedFiles adds every file matching glob to the corpus, through add.
func seedFiles(f *testing.F, glob string, add func(b []byte)) {
	f.Helper()
	names, err := filepath.Glob(glob)
	if err != nil || len(names) == 0 {
		f.Fatalf("seed files %s: %v %v", glob, names, err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// FuzzParseManifest feeds the manifest reader random bytes, from real
// manifests (testdata/manifests) mutated. Under plain go test it runs the
// seeds; with -fuzz it searches for inputs that panic or break these
// properties:
//
//   - a manifest that is accepted names only files inside its version, in
//     order, with digests, and its files make its output digest;
//   - encoding an accepted manifest and reading it back gives the same
//     manifest.
func FuzzParseManifest(f *testing.F) {
	seedFiles(f, "testdata/manifests/*.json", func(b []byte) {
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			f.Fatal(err)
		}
		f.Add(b, m.Stage, m.Version)
	})
	for _, s := range []string{"", "{}", "null", `{"schema": 1}`, `{"schema": 1, "files": [{"path": "../x"}]}`,
		`{"schema": 1, "stage": "a", "version": "0123456789abcdef", "files": null}`} {
		f.Add([]byte(s), "a", "0123456789abcdef")
	}
	f.Fuzz(func(t *testing.T, b []byte, stage, version string) {
		m, err := parseManifest(b, "manifest.json", stage, version)
		if err != nil {
			if m != nil {
				t.Fatalf("error %v with a manifest", err)
			}
			return
		}
		if m.Stage != stage || m.Version != version || !strings.HasPrefix(m.Key, version) {
			t.Fatalf("accepted %s@%s (key %s) for %s@%s", m.Stage, m.Version, m.Key, stage, version)
		}
		for i, file := range m.Files {
			if !fs.ValidPath(file.Path) || (i > 0 && file.Path <= m.Files[i-1].Path) || file.Size < 0 || !isHex(file.SHA256, 64) {
				t.Fatalf("accepted files[%d] %+v", i, file)
			}
		}
		if OutputDigest(m.Files).String() != m.Output {
			t.Fatal("accepted a manifest whose files do not make its output digest")
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseManifest(again, "manifest.json", stage, version)
		if err != nil {
			t.Fatalf("re-encoded manifest rejected: %v", err)
		}
		if !reflect.DeepEqual(normalized(m), normalized(m2)) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, m2)
		}
	})
}

// normalized re-encodes a manifest's raw config, whose spacing a round
// trip may change.
func normalized(m *Manifest) Manifest {
	c := *m
	var v any
	if json.Unmarshal(c.Inputs.Config, &v) == nil {
		c.Inputs.Config, _ = json.Marshal(v)
	}
	return c
}

// FuzzParseLockFile feeds the lock file reader random bytes, from a real
// pipeline.lock (testdata/locks) mutated. It searches for inputs that
// panic, or that are accepted though a stage name, version, digest or
// file path is malformed, or that do not survive a round trip.
func FuzzParseLockFile(f *testing.F) {
	seedFiles(f, "testdata/locks/*.lock", func(b []byte) { f.Add(b) })
	for _, s := range []string{"", "{}", "[]", `{"schema": 1}`, `{"schema": 1, "stages": {"a": {"version": "x"}}}`,
		`{"schema": 1, "store": "../data", "stages": {"../a": {"version": "0123456789abcdef"}}}`, `{"schema": 2, "stages": {}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lf, err := parseLockFile(b, "pipeline.lock")
		if err != nil {
			if lf != nil {
				t.Fatalf("error %v with a lock file", err)
			}
			return
		}
		if lf.Stages == nil {
			t.Fatal("accepted a lock file with nil stages")
		}
		for name, e := range lf.Stages {
			if name == "" || strings.ContainsAny(name, "/@") || !isHex(e.Version, versionLen) || !isHex(e.Output, 64) {
				t.Fatalf("accepted stage %q %+v", name, e)
			}
			for _, file := range e.Files {
				if !fs.ValidPath(file.Path) || file.Size < 0 || !isHex(file.SHA256, 64) {
					t.Fatalf("accepted stage %s file %+v", name, file)
				}
			}
		}
		again, err := json.Marshal(lf)
		if err != nil {
			t.Fatal(err)
		}
		lf2, err := parseLockFile(again, "pipeline.lock")
		if err != nil {
			t.Fatalf("re-encoded lock file rejected: %v", err)
		}
		if !reflect.DeepEqual(lf, lf2) {
			t.Fatalf("round trip changed the lock file:\n%+v\n%+v", lf, lf2)
		}
	})
}

// FuzzParseMemoManifest feeds a memo entry's manifest reader random
// bytes, from an entry's real manifest mutated; an accepted one lists only
// files inside the entry, in order, with digests.
func FuzzParseMemoManifest(f *testing.F) {
	dir := f.TempDir()
	m := NewMemo(dir, "sweep", KeyInputs{})
	entry, err := m.Get("point", nil, [][2]string{{"point", "1"}}, func(d string) error {
		os.WriteFile(filepath.Join(d, "a.txt"), []byte("a"), 0o644)
		return os.WriteFile(filepath.Join(d, "b.txt"), []byte("b"), 0o644)
	})
	if err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(entry, ManifestName))
	if err != nil {
		f.Fatal(err)
	}
	key := filepath.Base(entry)
	f.Add(b, "sweep", key)
	f.Add([]byte(`{"schema": 1, "stage": "sweep", "key": "k", "files": [{"path": "/etc/passwd"}]}`), "sweep", "k")
	f.Fuzz(func(t *testing.T, b []byte, stage, key string) {
		mm, err := parseMemoManifest(b, "manifest.json", stage, key)
		if err != nil {
			var syntax *json.SyntaxError
			if mm != nil || errors.As(err, &syntax) && !strings.Contains(err.Error(), "damaged manifest") {
				t.Fatalf("error %v with %v", err, mm)
			}
			return
		}
		if mm.Stage != stage || mm.Key != key {
			t.Fatalf("accepted %s/%s for %s/%s", mm.Stage, mm.Key, stage, key)
		}
		for i, file := range mm.Files {
			if !fs.ValidPath(file.Path) || (i > 0 && file.Path <= mm.Files[i-1].Path) || file.Size < 0 || !isHex(file.SHA256, 64) {
				t.Fatalf("accepted files[%d] %+v", i, file)
			}
		}
	})
}
