//go:build !lean

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
)

// lazyRemote is the config's remote, opened on first use: a run that finds
// everything cached never touches it.
type lazyRemote struct {
	url string

	once sync.Once
	r    *remote.Remote
	err  error
}

var _ pipeline.Remote = (*lazyRemote)(nil)

func (l *lazyRemote) open(ctx context.Context) (*remote.Remote, error) {
	l.once.Do(func() { l.r, l.err = remote.Open(ctx, l.url) })
	return l.r, l.err
}

// Location implements pipeline.Remote.
func (l *lazyRemote) Location() string {
	if u, err := remoteurl.Parse(l.url); err == nil {
		return u.Redacted()
	}
	return "(remote)"
}

// Fetch implements pipeline.Remote. A remote that cannot be read fails
// the fetch with a *remoteError, which run explains.
func (l *lazyRemote) Fetch(ctx context.Context, st pipeline.StoreWriter, stage, version, key string) (*pipeline.Manifest, error) {
	r, err := l.open(ctx)
	if err != nil {
		return nil, &remoteError{op: "fetch", err: err}
	}
	m, err := r.Fetch(ctx, st, stage, version, key)
	if err != nil {
		return nil, &remoteError{op: "fetch", err: err}
	}
	return m, nil
}

// Push implements pipeline.Remote.
func (l *lazyRemote) Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error {
	r, err := l.open(ctx)
	if err != nil {
		return &remoteError{op: "push", err: err}
	}
	if err := r.Push(ctx, st, m); err != nil {
		return &remoteError{op: "push", err: err}
	}
	return nil
}

// openRemote returns the config's remote, opened on first use.
func (a *app) openRemote(url string) (*lazyRemote, error) { return &lazyRemote{url: url}, nil }

// remoteFor returns the loaded config's remote, or a usage error when it
// names none.
func (a *app) remoteFor(ctx context.Context, l *loaded) (*remote.Remote, error) {
	if l.remote == nil {
		return nil, usageError{fmt.Errorf("no remote: name one in %s (remote: s3://bucket/prefix?endpoint=…) or with --set remote=URL", a.configPath)}
	}
	return l.remote.open(ctx)
}

// versionArgs turns STAGE[@VERSION] arguments into manifests of this
// store: a stage alone means its current version (pipeline.lock's, or
// the newest); no argument means every stage's current version.
func (a *app) versionArgs(l *loaded, args []string) ([]*pipeline.Manifest, error) {
	if len(args) == 0 {
		var out []*pipeline.Manifest
		for _, n := range l.p.Graph.Names() {
			m, err := l.p.Current(n)
			if errors.Is(err, pipeline.ErrNotFound) {
				continue // never run here
			}
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	var out []*pipeline.Manifest
	for _, arg := range args {
		stage, ver, _ := strings.Cut(arg, "@")
		if l.p.Graph.Stage(stage) == nil {
			return nil, usageError{fmt.Errorf("%s: no stage %q (stages: %s)", arg, stage, strings.Join(l.p.Graph.Names(), ", "))}
		}
		m, err := a.resolve(l.p, stage, ver)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (a *app) pushCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "push [STAGE[@VERSION]...]",
		Short: "Upload stored versions (default: every stage's current one) to the config's remote",
		Long: `Push copies versions of this store, with the memo entries their runs used, to
the remote the config names (remote: s3://bucket/prefix?…). It uploads only
the files the remote lacks, and the version's manifest last, so that the
remote never names a file it does not hold. A version the remote already
has is left as it is, even when its output differs (a measurement taken on
another machine): the first writer's stays, and push says so.`,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.load()
			if err != nil {
				return err
			}
			ms, err := a.versionArgs(l, args)
			if err != nil {
				return err
			}
			r, err := a.remoteFor(cmd.Context(), l)
			if err != nil {
				return err
			}
			for _, m := range ms {
				st, err := r.PushVersion(cmd.Context(), l.p.Store, m)
				if err != nil {
					return err
				}
				name := m.Stage + "@" + m.Version
				switch {
				case st.Other != "":
					fmt.Fprintf(a.stdout, "kept    %s  the remote holds this version with other output (%.16s; here %.16s), a measurement taken elsewhere\n", name, st.Other, m.Output)
				case st.Existed && st.Blobs == 0:
					fmt.Fprintf(a.stdout, "present %s\n", name)
				default:
					fmt.Fprintf(a.stdout, "pushed  %s  %d file(s), %s (%d already there)\n", name, st.Blobs, formatBytes(st.Bytes), st.Present)
				}
			}
			return nil
		}),
	}
}

func (a *app) pullCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pull [STAGE[@VERSION]...]",
		Short: "Download versions (default: those the config makes, in order) from the config's remote",
		Long: `Pull copies versions from the remote the config names into this store, with
the memo entries their runs used. Every file is checked against its
manifest's size and sha256 on the way in: a damaged or partial object is
refused, and nothing of that version is stored.

A stage alone means the version its current config makes, as 'mlsched
status' shows it, which needs its upstreams here; no argument pulls every
stage's, upstreams first, and stops at the first the remote lacks.`,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			l, err := a.load()
			if err != nil {
				return err
			}
			all := len(args) == 0
			if all {
				args = l.p.Graph.Names()
			}
			for _, arg := range args {
				stage, _, _ := strings.Cut(arg, "@")
				if l.p.Graph.Stage(stage) == nil {
					return usageError{fmt.Errorf("%s: no stage %q (stages: %s)", arg, stage, strings.Join(l.p.Graph.Names(), ", "))}
				}
			}
			r, err := a.remoteFor(cmd.Context(), l)
			if err != nil {
				return err
			}
			unlock, err := l.p.Store.Lock(cmd.Context(), "mlsched pull", true, l.p.Waiting)
			if err != nil {
				return err
			}
			defer unlock()
			for _, arg := range args {
				stage, ver, _ := strings.Cut(arg, "@")
				if ver == "" {
					// Known only once the upstreams pulled before it are here.
					if ver, err = l.p.Planned(stage); err != nil {
						return err
					}
				}
				name := stage + "@" + ver
				_, st, err := r.Pull(cmd.Context(), l.p.Store, stage, ver)
				if all && errors.Is(err, pipeline.ErrNotFound) {
					fmt.Fprintf(a.stdout, "absent  %s  (the remote lacks it: 'mlsched run' computes it and what follows)\n", name)
					return nil
				}
				if err != nil {
					return err
				}
				if st.Present {
					fmt.Fprintf(a.stdout, "present %s\n", name)
					continue
				}
				fmt.Fprintf(a.stdout, "pulled  %s  %d file(s), %s\n", name, st.Files, formatBytes(st.Bytes))
			}
			return nil
		}),
	}
}
