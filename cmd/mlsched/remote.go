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

// Fetch implements pipeline.Remote.
func (l *lazyRemote) Fetch(ctx context.Context, st pipeline.StoreWriter, stage, version, key string) (*pipeline.Manifest, error) {
	r, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return r.Fetch(ctx, st, stage, version, key)
}

// Push implements pipeline.Remote.
func (l *lazyRemote) Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error {
	r, err := l.open(ctx)
	if err != nil {
		return err
	}
	return r.Push(ctx, st, m)
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
			return nil, usageError{fmt.Errorf("%s: %w", arg, l.p.Graph.Unknown(stage))}
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
	var replace bool
	cmd := &cobra.Command{
		Use:   "push [STAGE[@VERSION]...]",
		Short: "Upload stored versions (default: every stage's current one) to the config's remote",
		Long: `Push copies versions of this store, with the memo entries their runs used, to
the remote the config names (remote: s3://bucket/prefix?…). It uploads only
the files the remote lacks, and the version's manifest last, so that the
remote never names a file it does not hold. A version the remote already
has is left as it is. Where its output differs from this store's, a stage
that measures the machine (the profile, real runs) keeps the first
machine's measurement, and push says so; for any other stage the two
outputs are a conflict: push names both, pushes the other versions, and
fails. Once a trusted build has shown that this store's copy is the right
one, --replace puts it in place of the remote's.`,
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
			push := r.PushVersion
			if replace {
				push = r.ReplaceVersion
			}
			var conflicts []error
			for _, m := range ms {
				st, err := push(cmd.Context(), l.p.Store, m)
				if c := (*pipeline.ConflictError)(nil); errors.As(err, &c) {
					fmt.Fprintf(a.stdout, "CONFLICT %s@%s  the remote's output %.16s, here %.16s\n", m.Stage, m.Version, c.Remote, c.Local)
					conflicts = append(conflicts, err)
					continue
				}
				if err != nil {
					return err
				}
				name := m.Stage + "@" + m.Version
				switch {
				case replace && st.Other != "":
					fmt.Fprintf(a.stdout, "replaced %s  the remote's output %.16s with this store's %.16s\n", name, st.Other, m.Output)
				case st.Other != "":
					fmt.Fprintf(a.stdout, "kept    %s  the remote holds another machine's measurement of this version (%.16s; here %.16s): %s measures the machine\n", name, st.Other, m.Output, m.Stage)
				case st.Existed && st.Blobs == 0:
					fmt.Fprintf(a.stdout, "present %s\n", name)
				default:
					fmt.Fprintf(a.stdout, "pushed  %s  %d file(s), %s (%d already there)\n", name, st.Blobs, formatBytes(st.Bytes), st.Present)
				}
			}
			return errors.Join(conflicts...)
		}),
	}
	cmd.Flags().BoolVar(&replace, "replace", false, "where the remote holds a version with other output, replace the remote's copy with this store's")
	return cmd
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
					return usageError{fmt.Errorf("%s: %w", arg, l.p.Graph.Unknown(stage))}
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

// compareRemote compares every version of the store with the remote's
// copy (verify --remote): it fails naming each conflict, and names each
// measurement taken elsewhere without failing.
func (a *app) compareRemote(ctx context.Context, l *loaded) error {
	r, err := a.remoteFor(ctx, l)
	if err != nil {
		return err
	}
	var ms []*pipeline.Manifest
	for _, stage := range l.p.Graph.Names() {
		vs, err := l.p.Store.Versions(stage)
		if err != nil {
			return err
		}
		ms = append(ms, vs...)
	}
	diffs, held, err := r.Compare(ctx, ms)
	if err != nil {
		return err
	}
	conflicts := 0
	for _, d := range diffs {
		name := d.Stage + "@" + d.Version
		if d.Measured {
			fmt.Fprintf(a.stdout, "MEASURED %s  the remote's output %.16s, here %.16s: %s measures the machine, and another machine measured this version\n", name, d.Remote, d.Local, d.Stage)
			continue
		}
		conflicts++
		fmt.Fprintf(a.stdout, "CONFLICT %s  the remote's output %.16s, here %.16s: one was made by other code than the key names\n", name, d.Remote, d.Local)
	}
	if conflicts > 0 {
		return fmt.Errorf("verify --remote: %d of the %d version(s) the remote %s also holds conflict with this store's; rebuild each from a trusted build (mlsched run --force STAGE) to see which copy is right", conflicts, held, r.Location())
	}
	fmt.Fprintf(a.stdout, "compared %d version(s) with the remote %s, which holds %d of them: no conflict\n", len(ms), r.Location(), held)
	return nil
}
