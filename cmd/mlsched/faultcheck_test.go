package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

// reference is what a clean run of tiny.yaml leaves.
type reference struct {
	lock      []byte
	versions  map[string]string        // stage → version, from pipeline.lock
	published map[string]string        // path under the project → sha256
	durations map[string]time.Duration // stage → how long it ran
}

var (
	referenceMu   sync.Mutex
	cleanRunCache *reference
)

// cleanReference runs tiny.yaml once, in a project of its own, and keeps
// what it left for every fault test of this process.
func cleanReference(t *testing.T) *reference {
	t.Helper()
	referenceMu.Lock()
	defer referenceMu.Unlock()
	if cleanRunCache != nil {
		return cleanRunCache
	}
	p := newProject(t, "tiny.yaml")
	out := p.mustFault(runLimit, "run")
	ref := &reference{durations: map[string]time.Duration{}, published: published(t, p.dir)}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != "ran" {
			t.Fatalf("clean run: %q", line)
		}
		d, err := time.ParseDuration(f[3])
		if err != nil {
			t.Fatalf("clean run: %q: %v", line, err)
		}
		ref.durations[f[0]] = d
	}
	var err error
	if ref.lock, err = os.ReadFile(filepath.Join(p.dir, "pipeline.lock")); err != nil {
		t.Fatal(err)
	}
	ref.versions = lockVersions(t, ref.lock)
	cleanRunCache = ref
	return ref
}

// lockVersions returns each stage's version in a pipeline.lock.
func lockVersions(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var lf pipeline.LockFile
	if err := json.Unmarshal(b, &lf); err != nil {
		t.Fatalf("pipeline.lock: %v", err)
	}
	vs := map[string]string{}
	for st, e := range lf.Stages {
		vs[st] = e.Version
	}
	return vs
}

// published returns every file under the project's models/ and reports/,
// temporary files included, with its sha256.
func published(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sub := range []string{"models", "reports"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if d.Name() == pipeline.ProvenanceName {
				// It names the store by its path, which is this project's.
				b = bytes.ReplaceAll(b, []byte(dir), []byte("<project>"))
			}
			sum := sha256.Sum256(b)
			out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			t.Fatalf("published files: %v", err)
		}
	}
	return out
}

// checkIntact is what must hold after every fault: verify finds every
// stored file intact, and status, for the config of sets, names each stage
// once with a known state, says nothing of damage, and finds in the store
// every version it calls up to date (for the base config, the clean run's).
func (p *project) checkIntact(ref *reference, sets []string, after string) {
	p.t.Helper()
	out, errs, code := p.faultRun(quickLimit, "verify")
	if code != 0 || !strings.Contains(out, "all intact") {
		p.t.Fatalf("%s: verify: exit %d\n%s%s", after, code, out, errs)
	}
	out, errs, code = p.faultRun(quickLimit, append([]string{"status", "--json"}, sets...)...)
	if code != 0 {
		p.t.Fatalf("%s: status: exit %d\n%s%s", after, code, out, errs)
	}
	var sts []pipeline.StageStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		p.t.Fatalf("%s: status --json: %v\n%s", after, err, out)
	}
	var names []string
	for _, st := range sts {
		names = append(names, st.Stage)
		switch st.State {
		case pipeline.UpToDate:
			if _, err := os.Stat(filepath.Join(p.dir, "data", st.Stage, st.Version, pipeline.ManifestName)); err != nil {
				p.t.Errorf("%s: status calls %s@%s up to date, but the store lacks it: %v", after, st.Stage, st.Version, err)
			}
			if want := ref.versions[st.Stage]; len(sets) == 0 && st.Version != want {
				p.t.Errorf("%s: status calls %s@%s up to date; the clean run made %s", after, st.Stage, st.Version, want)
			}
		case pipeline.Stale, pipeline.Missing:
		case pipeline.Suspect:
			if !p.touched {
				p.t.Errorf("%s: status: stage %s is %q, and no stored file's mtime was changed", after, st.Stage, st.State)
			}
		default:
			p.t.Errorf("%s: status: stage %s is %q", after, st.Stage, st.State)
		}
		for _, r := range st.Reasons {
			if strings.Contains(r, "is missing") || strings.Contains(r, "manifest says") || strings.Contains(r, "changed since it was written") {
				p.t.Errorf("%s: status finds %s damaged: %s", after, st.Stage, r)
			}
		}
	}
	if slices.Sort(names); !slices.Equal(names, slices.Sorted(slices.Values(faultStages))) {
		p.t.Errorf("%s: status names stages %v", after, names)
	}
}

// checkLikeClean runs a plain run and checks that the project now holds
// what a clean run left: the same pipeline.lock (every stage's version,
// output digest and file digests), the same published files and nothing
// else beside them, a store that verifies intact, no staging folder left,
// and no file in the project a clean run would not leave.
func (p *project) checkLikeClean(ref *reference, after string) {
	p.t.Helper()
	p.mustFault(runLimit, "run")
	lock, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		p.t.Fatal(err)
	}
	if !bytes.Equal(lock, ref.lock) {
		p.t.Errorf("%s: a plain run's pipeline.lock differs from a clean run's:\n%s\nclean:\n%s", after, lock, ref.lock)
	}
	got := published(p.t, p.dir)
	for _, path := range slices.Sorted(mapKeys(got, ref.published)) {
		if g, w := got[path], ref.published[path]; g != w {
			p.t.Errorf("%s: published %s: sha256 %.12s, a clean run's %.12s (empty: absent)", after, path, g, w)
		}
	}
	p.checkIntact(ref, nil, after)
	if ents, _ := os.ReadDir(filepath.Join(p.dir, "data", ".tmp")); len(ents) > 0 {
		p.t.Errorf("%s: a completed run left %d entries in the store's .tmp, the first %s", after, len(ents), ents[0].Name())
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, e := range ents {
		switch e.Name() {
		case "pipeline.yaml", "imported-profile.csv", "pipeline.lock", "data", "models", "reports":
		default:
			if slices.Contains(p.extra, e.Name()) {
				continue
			}
			p.t.Errorf("%s: the project holds %s, which a clean run does not leave", after, e.Name())
		}
	}
}

func mapKeys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// checkPublishedWhole checks that every file in the project's dir (but
// temporary files, whose names start with a dot) is byte for byte a file
// of a stored version of stage.
func (p *project) checkPublishedWhole(stage, dir, after string) {
	p.t.Helper()
	stored := map[string]bool{} // base name + " " + sha256
	ms, _ := filepath.Glob(filepath.Join(p.dir, "data", stage, "*", pipeline.ManifestName))
	for _, path := range ms {
		b, err := os.ReadFile(path)
		if err != nil {
			p.t.Fatal(err)
		}
		var m pipeline.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			p.t.Fatalf("%s: %v", path, err)
		}
		for _, f := range m.Files {
			stored[filepath.Base(f.Path)+" "+f.SHA256] = true
		}
	}
	for path, sum := range published(p.t, p.dir) {
		base := filepath.Base(path)
		if !strings.HasPrefix(path, dir+"/") || strings.HasPrefix(base, ".") {
			continue
		}
		if base == pipeline.ProvenanceName {
			// Not a stored file: whole when it decodes, each entry naming
			// a stored file.
			b, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(path)))
			var pv pipeline.Provenance
			if err == nil {
				err = json.Unmarshal(b, &pv)
			}
			if err != nil {
				p.t.Errorf("%s: published %s does not decode: half-written? %v", after, path, err)
				continue
			}
			for name, src := range pv.Files {
				if src.Stage == stage && !stored[name+" "+src.SHA256] {
					p.t.Errorf("%s: %s names %s@%s's %s (sha256 %.12s), which no stored version holds", after, path, src.Stage, src.Version, name, src.SHA256)
				}
			}
			continue
		}
		if !stored[base+" "+sum] {
			p.t.Errorf("%s: published %s (sha256 %.12s) is no stored %s version's %s: half-written?", after, path, sum, stage, base)
		}
	}
}
