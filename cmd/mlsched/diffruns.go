//go:build !lean

package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/pipeline/storefile"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages"
	"github.com/mlsched/mlsched/stages/evaluate/rundiff"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
)

// run is one of the two runs diff compares: an evaluate version and the
// store that holds it (a lock file or config may name another store than
// the config's).
type run struct {
	// name says how it was named or found, for the header.
	name  string
	store pipeline.StoreReader
	m     *pipeline.Manifest
}

// diff compares the runs args name (see diffCmd) and writes the result.
func (a *app) diff(args []string, markdown bool) error {
	c := &diffContext{a: a}
	runA, runB, err := c.runs(args)
	if err != nil {
		return err
	}
	ra, err := readRun(runA)
	if err != nil {
		return err
	}
	rb, err := readRun(runB)
	if err != nil {
		return err
	}
	d := rundiff.Compare(ra, rb, compareStages(runA, runB))
	if markdown {
		_, err = io.WriteString(a.stdout, d.Markdown())
		return err
	}
	return d.Text(a.stdout)
}

// diffContext loads the config only when an argument needs it: two lock
// files or configs compare without one.
type diffContext struct {
	a *app
	l *loaded
}

// loaded is the config, loaded at the first call.
func (c *diffContext) loaded() (*loaded, error) {
	if c.l == nil {
		l, err := c.a.load()
		if err != nil {
			return nil, err
		}
		c.l = l
	}
	return c.l, nil
}

// runs resolves the arguments, or their defaults, to two runs.
func (c *diffContext) runs(args []string) (run, run, error) {
	var runs []run
	for _, arg := range args {
		r, err := c.named(arg)
		if err != nil {
			return run{}, run{}, err
		}
		runs = append(runs, r)
	}
	switch len(runs) {
	case 2:
		return runs[0], runs[1], nil
	case 1:
		cur, err := c.current()
		return runs[0], cur, err
	}
	l, err := c.loaded()
	if err != nil {
		return run{}, run{}, err
	}
	vs, err := l.p.Store.Versions(stages.Evaluate)
	if err != nil {
		return run{}, run{}, err
	}
	where := displayPath(l.p.Store.Location())
	if len(vs) < 2 {
		held := "no evaluate version"
		if len(vs) == 1 {
			held = "one evaluate version"
		}
		return run{}, run{}, usageError{fmt.Errorf("the store %s holds %s, and diff without arguments compares the two newest: name the runs (mlsched diff A B), or run the pipeline again after a change", where, held)}
	}
	a := run{name: "the second newest evaluate version in " + where, store: l.p.Store, m: vs[len(vs)-2]}
	b := run{name: "the newest evaluate version in " + where, store: l.p.Store, m: vs[len(vs)-1]}
	return a, b, nil
}

// current is the config's current evaluate version (pipeline.Current).
func (c *diffContext) current() (run, error) {
	l, err := c.loaded()
	if err != nil {
		return run{}, err
	}
	m, err := l.p.Current(stages.Evaluate)
	if err != nil {
		return run{}, err
	}
	name := "the newest evaluate version in " + displayPath(l.p.Store.Location())
	if lock, err := l.p.ReadLock(); err == nil && lock.Stages[stages.Evaluate].Version == m.Version {
		name = "the current run, recorded in " + displayPath(l.p.LockPath)
	}
	return run{name: name, store: l.p.Store, m: m}, nil
}

// named resolves one argument: a version, a lock file or a config. An
// argument that names no run is a usage error.
func (c *diffContext) named(arg string) (run, error) {
	if stage, ver, ok := strings.Cut(arg, "@"); ok {
		if stage != stages.Evaluate {
			return run{}, usageError{fmt.Errorf("%s: diff compares runs by their evaluate version (evaluate@VERSION), not %s's", arg, stage)}
		}
		return c.version(ver)
	}
	if _, err := os.Lstat(arg); err == nil || looksLikeFile(arg) {
		return c.file(arg)
	}
	if isHexPrefix(arg) {
		return c.version(arg)
	}
	return run{}, usageError{fmt.Errorf("%s: no such file, nor an evaluate version (hex digits, as 'mlsched ls evaluate' lists them)", arg)}
}

// looksLikeFile says that arg can only mean a file: it has a folder or
// a config's or lock file's extension.
func looksLikeFile(arg string) bool {
	switch filepath.Ext(arg) {
	case ".lock", ".yaml", ".yml", ".json":
		return true
	}
	return strings.ContainsRune(arg, filepath.Separator)
}

// isHexPrefix says whether s can start a version.
func isHexPrefix(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	_, err := hex.DecodeString(s + strings.Repeat("0", len(s)%2))
	return err == nil && strings.ToLower(s) == s
}

// version is the evaluate version ver names in the config's store.
func (c *diffContext) version(ver string) (run, error) {
	if !isHexPrefix(ver) {
		return run{}, usageError{fmt.Errorf("evaluate@%s: a version is hex digits, as 'mlsched ls evaluate' lists them", ver)}
	}
	l, err := c.loaded()
	if err != nil {
		return run{}, err
	}
	m, err := c.a.resolve(l.p, stages.Evaluate, ver)
	if err != nil {
		return run{}, err
	}
	return run{name: "in the store " + displayPath(l.p.Store.Location()), store: l.p.Store, m: m}, nil
}

// file is the run a lock file records, or a config's last run: the one
// its lock file records.
func (c *diffContext) file(path string) (run, error) {
	fi, err := userfile.Check(path)
	if err != nil {
		return run{}, usageError{err}
	}
	if filepath.Ext(path) == ".lock" {
		lf, err := pipeline.ReadLockFile(path)
		if err != nil {
			return run{}, usageError{err}
		}
		return c.recorded(path, lf, "", "recorded in "+path)
	}
	cfg := stages.DefaultConfig()
	cfgErr := config.Load(config.Options{File: path, Retired: stages.Retired}, &cfg)
	if cfgErr != nil {
		// A lock file under another name (pipeline.lock.bak) is one still.
		if lf, err := pipeline.ReadLockFile(path); err == nil && len(lf.Stages) > 0 {
			return c.recorded(path, lf, "", "recorded in "+path)
		}
		return run{}, usageError{fmt.Errorf("%s (%d bytes) is neither a lock file nor a config: read as a config, %w", path, fi.Size(), cfgErr)}
	}
	store := cfg.Store
	if !filepath.IsAbs(store) {
		store = filepath.Join(filepath.Dir(path), store)
	}
	lockPath := pipeline.LockPathOf(path)
	lf, err := pipeline.ReadLockFile(lockPath)
	if err != nil {
		return run{}, usageError{err}
	}
	return c.recorded(lockPath, lf, store, fmt.Sprintf("the last run of %s, recorded in %s", path, lockPath))
}

// recorded is the evaluate version the lock file at path records, in the
// store it names (else in store, else in the config's).
func (c *diffContext) recorded(path string, lf *pipeline.LockFile, store, name string) (run, error) {
	e, ok := lf.Stages[stages.Evaluate]
	if !ok {
		return run{}, usageError{fmt.Errorf("%s records no evaluate version: the pipeline has not run to its end with it", path)}
	}
	if lf.Store != "" {
		store = filepath.FromSlash(lf.Store)
		if !filepath.IsAbs(store) {
			store = filepath.Join(filepath.Dir(path), store)
		}
	}
	var st pipeline.StoreReader
	if store == "" {
		l, err := c.loaded()
		if err != nil {
			return run{}, err
		}
		st = l.p.Store
	} else {
		local, err := pipeline.OpenStore(store)
		if err != nil {
			return run{}, usageError{fmt.Errorf("%s: %w", path, err)}
		}
		st = local
	}
	m, err := st.Manifest(stages.Evaluate, e.Version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return run{}, fmt.Errorf("%s records evaluate@%s, which the store %s does not hold (removed by gc, or never pulled)", path, e.Version, displayPath(st.Location()))
	}
	if err != nil {
		return run{}, err
	}
	return run{name: name, store: st, m: m}, nil
}

// readRun reads a run's metrics.parquet, its bytes checked against the
// version's manifest, and the confidence of its intervals.
func readRun(r run) (rundiff.Run, error) {
	m := r.m
	out := rundiff.Run{Name: r.name, Version: shortVersion(m.Version)}
	var cfg struct {
		Confidence float64 `json:"confidence"`
	}
	if err := json.Unmarshal(m.Inputs.Config, &cfg); err == nil {
		out.Confidence = cfg.Confidence
	}
	i := slices.IndexFunc(m.Files, func(f pipeline.File) bool { return f.Path == evaluatespec.MetricsFile })
	if i < 0 {
		return out, fmt.Errorf("evaluate@%s has no %s", m.Version, evaluatespec.MetricsFile)
	}
	dir, err := r.store.Open(m.Stage, m.Version)
	if err != nil {
		return out, err
	}
	path := filepath.Join(dir, evaluatespec.MetricsFile)
	sum, err := fileSHA256(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out, fmt.Errorf("evaluate@%s: %s is missing ('mlsched verify' lists every damaged version)", m.Version, displayPath(path))
	case err != nil:
		return out, fmt.Errorf("evaluate@%s: %w", m.Version, err)
	case sum != m.Files[i].SHA256:
		return out, fmt.Errorf("evaluate@%s: %s is damaged (sha256 %.16s on disk, %.16s in its manifest; 'mlsched verify' lists every damaged file)",
			m.Version, displayPath(path), sum, m.Files[i].SHA256)
	}
	if out.Rows, err = parquetio.ReadAll[section.MetricRow](path); err != nil {
		return out, fmt.Errorf("evaluate@%s: %w", m.Version, err)
	}
	return out, nil
}

// fileSHA256 is the hex SHA-256 of the regular file at path.
func fileSHA256(path string) (string, error) {
	f, _, err := storefile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compareStages walks both runs' upstream chains from evaluate and says,
// stage by stage, upstreams first, how B's version differs from A's.
func compareStages(a, b run) []rundiff.Stage {
	chainA, chainB := chain(a), chain(b)
	var names []string
	for _, ch := range []map[string]link{chainA, chainB} {
		for n := range ch {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	depth := func(n string) int { return max(chainA[n].depth, chainB[n].depth) }
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(depth(x), depth(y)), cmp.Compare(x, y)) })
	var out []rundiff.Stage
	for _, n := range names {
		la, lb := chainA[n], chainB[n]
		s := rundiff.Stage{Name: n, A: shortVersion(la.version), B: shortVersion(lb.version)}
		switch {
		case la.version == "":
			s.Changes = []string{"only in B"}
		case lb.version == "":
			s.Changes = []string{"only in A"}
		case la.version == lb.version:
		case la.m == nil || lb.m == nil:
			s.Changes = []string{"not in the store for both runs, so its inputs cannot be compared"}
		default:
			s.Changes = inputChanges(la.m, lb.m)
		}
		out = append(out, s)
	}
	return out
}

// link is a stage of a run's chain: the version the run used and its
// manifest (nil where the store no longer holds it), depth its place
// from the chain's start (evaluate's upstreams have none of their own).
type link struct {
	version string
	m       *pipeline.Manifest
	depth   int
}

// chain is the stages r's evaluate version was made from, upstreams
// reached through each manifest's inputs: a stage met twice is taken
// where it was met first.
func chain(r run) map[string]link {
	out := map[string]link{r.m.Stage: {version: r.m.Version, m: r.m}}
	queue := []*pipeline.Manifest{r.m}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		for _, u := range m.Inputs.Upstream {
			if _, seen := out[u.Stage]; seen {
				continue
			}
			um, err := r.store.Manifest(u.Stage, u.Version)
			if err != nil {
				um = nil
			}
			out[u.Stage] = link{version: u.Version, m: um}
			if um != nil {
				queue = append(queue, um)
			}
		}
	}
	// Depth: the longest path from a stage with no upstream, so that
	// upstreams list first.
	var depthOf func(stage string, seen map[string]bool) int
	depthOf = func(stage string, seen map[string]bool) int {
		l := out[stage]
		if l.m == nil || seen[stage] {
			return 0
		}
		seen[stage] = true
		d := 0
		for _, u := range l.m.Inputs.Upstream {
			d = max(d, depthOf(u.Stage, seen)+1)
		}
		delete(seen, stage)
		return d
	}
	for n, l := range out {
		l.depth = depthOf(n, map[string]bool{})
		out[n] = l
	}
	return out
}

// inputChanges says how b's inputs differ from a's, two versions of one
// stage: its own inputs as status words them, then which upstreams differ
// (the stage table shows their versions).
func inputChanges(a, b *pipeline.Manifest) []string {
	own := b.Inputs
	own.Upstream = nil
	changes := pipeline.InputChanges(b.Stage, &a.Inputs, &own)
	var ups []string
	for _, u := range b.Inputs.Upstream {
		i := slices.IndexFunc(a.Inputs.Upstream, func(o pipeline.Upstream) bool { return o.Stage == u.Stage })
		if i < 0 || a.Inputs.Upstream[i] != u {
			ups = append(ups, u.Stage)
		}
	}
	for _, u := range a.Inputs.Upstream {
		if !slices.ContainsFunc(b.Inputs.Upstream, func(o pipeline.Upstream) bool { return o.Stage == u.Stage }) {
			ups = append(ups, u.Stage)
		}
	}
	switch len(ups) {
	case 0:
	case 1:
		changes = append(changes, "upstream "+ups[0])
	default:
		changes = append(changes, "upstreams "+andList(ups))
	}
	if len(changes) == 0 {
		// The same inputs under another version: another key salt or
		// key layout, of another mlsched.
		changes = append(changes, "inputs the same, key made otherwise (another mlsched)")
	}
	return changes
}
