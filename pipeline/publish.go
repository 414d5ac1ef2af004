package pipeline

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"
)

// publish copies the files of m that s publishes into their project
// folders. A copy keeps the stored file's mtime, so a cached run sees by
// size and mtime alone that the copy is current and copies nothing.
//
// These folders are outside the store, and verify does not see them: a
// copy is written to a temporary file beside its destination, synced and
// renamed into place (replaceFile), so that a published file is never
// half-written. A process killed mid-copy leaves its temporary file behind,
// named with its pid; publish removes those of processes that are gone
// from every folder it publishes to, whether it copies anything there or
// not.
func (p *Pipeline) publish(s *Stage, m *Manifest) error {
	if p.Root == "" {
		return nil
	}
	if len(s.Publish) == 0 {
		return nil
	}
	dir, err := p.Store.Open(m.Stage, m.Version)
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, pub := range s.Publish {
		for _, f := range m.Files {
			ok, err := path.Match(pub.Glob, f.Path)
			if err != nil {
				return fmt.Errorf("publish %q: %w", pub.Glob, err)
			}
			if !ok {
				continue
			}
			src := filepath.Join(dir, filepath.FromSlash(f.Path))
			dst := filepath.Join(p.Root, pub.Dir, path.Base(f.Path))
			dirs[filepath.Dir(dst)] = true
			if fi, err := os.Stat(dst); err == nil && fi.Size() == f.Size && fi.ModTime().UnixNano() == f.ModTime {
				continue
			}
			if err := copyFile(src, dst, f.ModTime); err != nil {
				return fmt.Errorf("publish %s to %s: %w", f.Path, pub.Dir, err)
			}
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := removeDeadTemps(d, ""); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	return nil
}

// copyFile copies src to dst atomically and gives dst the mtime mtimeNS.
func copyFile(src, dst string, mtimeNS int64) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return replaceFile(dst, time.Unix(0, mtimeNS), func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
