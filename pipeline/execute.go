package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/digest"
)

// execute runs a stage into a staging directory and commits the result.
// The stored files the stage will be given are checked first
// (checkInputs): a stage never runs on bytes that are not the ones its
// key was made from.
func (p *Pipeline) execute(ctx context.Context, s *Stage, version string, key ID, in KeyInputs, ups []*Manifest, rep Reporter) (*Manifest, error) {
	inputs := map[string]Input{}
	var prov []string
	for _, u := range ups {
		dir, err := p.Store.Open(u.Stage, u.Version)
		if err != nil {
			return nil, fmt.Errorf("open input %s@%s: %w", u.Stage, u.Version, err)
		}
		files, err := readsOf(s, u)
		if err != nil {
			return nil, err
		}
		inputs[u.Stage] = Input{Stage: u.Stage, Version: u.Version, Dir: dir, Files: slices.Clone(files)}
		prov = append(prov, u.Stage+"@"+u.Version)
	}
	var refs map[string]Input
	for _, r := range in.Refs {
		m, err := p.Store.Manifest(r.Stage, r.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Key, err)
		}
		dir, err := p.Store.Open(r.Stage, r.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: open %s@%s: %w", r.Key, r.Stage, r.Version, err)
		}
		if refs == nil {
			refs = map[string]Input{}
		}
		refs[r.Key] = Input{Stage: r.Stage, Version: r.Version, Dir: dir, Files: m.Files}
	}
	if err := p.checkInputs(ctx, inputs, refs); err != nil {
		return nil, err
	}

	staging, err := p.Store.Begin(s.Name, version)
	if err != nil {
		return nil, fmt.Errorf("create staging directory: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staging)
		}
	}()
	slices.Sort(prov)
	env := &Env{
		Stage: s.Name, Version: version, Dir: staging, Seed: p.Seed,
		Inputs: inputs, Refs: refs,
		Metadata: map[string]string{digest.KeyStage: s.Name, digest.KeyVersion: version, digest.KeyUpstream: strings.Join(prov, ",")},
		Progress: func(done, total int64) {
			rep.Report(Event{Kind: EventProgress, Stage: s.Name, Version: version, Done: done, Total: total})
		},
		Notes: map[string]string{},
		Memo:  p.Store.Memo(s.Name, in),
	}

	start := time.Now()
	if err := p.executor().Execute(ctx, s, env); err != nil {
		if ctx.Err() == nil {
			err = p.diagnoseInputs(env, err)
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, err := collect(ctx, staging)
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Schema: manifestSchema, Stage: s.Name, Version: version, Key: key.String(),
		Inputs: in, Output: OutputDigest(files).String(), Files: files,
		Created: p.now().UTC().Truncate(time.Millisecond), Duration: time.Since(start).Seconds(), Tool: p.Tool,
		Measured: s.Measures,
	}
	noteRecomputed(env.Notes, env.Memo)
	if len(env.Notes) > 0 {
		m.Notes = env.Notes
	}
	m.Memo = env.Memo.Used()
	if err := writeManifest(staging, m); err != nil {
		return nil, fmt.Errorf("write manifest: %w", err)
	}
	if err := p.Store.Commit(staging, s.Name, version); err != nil {
		return nil, fmt.Errorf("commit version %s: %w", version, err)
	}
	committed = true
	return m, nil
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Collect lists the files below dir with their sizes and digests, as a
// version's manifest lists them (for an executor that ships a stage's
// output elsewhere).
func Collect(ctx context.Context, dir string) ([]File, error) { return collect(ctx, dir) }

// collect digests every file a stage wrote, makes it durable, and returns
// the files sorted by path.
func collect(ctx context.Context, dir string) ([]File, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch {
		case !d.Type().IsRegular():
			return fmt.Errorf("output %s is not a regular file", rel)
		case rel == ManifestName:
			return fmt.Errorf("output %s: the name is reserved for the runner", rel)
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("collect outputs: %w", err)
	}
	slices.Sort(paths)
	files := make([]File, len(paths))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range paths {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			path := filepath.Join(dir, filepath.FromSlash(rel))
			if err := syncPath(path); err != nil {
				return fmt.Errorf("sync output %s: %w", rel, err)
			}
			d, err := digestStored(path)
			if err != nil {
				return fmt.Errorf("digest output %s: %w", rel, err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				return err
			}
			files[i] = File{Path: rel, Size: d.Size, SHA256: d.SHA256, Content: d.Content, Rows: d.Rows, ModTime: fi.ModTime().UnixNano()}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return files, nil
}
