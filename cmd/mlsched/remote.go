//go:build !lean

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
)

// lazyRemote is the config's remote, opened on first use: a run that finds
// everything cached never touches it.
type lazyRemote struct {
	url string
	// moved, when set, is told what each fetch and push moved, as a line
	// of the run's output under the stage's own (runReporter.moved).
	moved func(stage, line string)

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

func (l *lazyRemote) tell(stage, line string) {
	if l.moved != nil {
		l.moved(stage, line)
	}
}

// Fetch implements pipeline.Remote. A remote that cannot be read fails
// the fetch with a *remoteError, which run explains.
func (l *lazyRemote) Fetch(ctx context.Context, st pipeline.StoreWriter, stage, version, key string) (*pipeline.Manifest, error) {
	r, err := l.open(ctx)
	if err != nil {
		return nil, &remoteError{op: "fetch", err: err}
	}
	start := time.Now()
	m, err := r.Fetch(ctx, st, stage, version, key)
	if err != nil {
		return nil, &remoteError{op: "fetch", err: err}
	}
	if m != nil {
		var size int64
		for _, f := range m.Files {
			size += f.Size
		}
		l.tell(stage, fmt.Sprintf("fetched %s@%s  %d file(s), %s in %s", stage, version, len(m.Files), formatBytes(size), formatDuration(time.Since(start))))
	}
	return m, nil
}

// Push implements pipeline.Remote.
func (l *lazyRemote) Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error {
	return l.push(ctx, st, m, false)
}

// push uploads a version and says what it moved; quiet says nothing of a
// version the remote held already (an input a distributed run pushes
// for each stage that reads it).
func (l *lazyRemote) push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest, quiet bool) error {
	r, err := l.open(ctx)
	if err != nil {
		return &remoteError{op: "push", err: err}
	}
	start := time.Now()
	stats, err := r.PushVersion(ctx, st, m)
	if err != nil {
		return &remoteError{op: "push", err: err}
	}
	if line := pushLine(m, stats, time.Since(start)); !quiet || !stats.Existed || stats.Blobs > 0 {
		l.tell(m.Stage, line)
	}
	return nil
}

// pushLine says what a push of m moved, as push and a run print it.
func pushLine(m *pipeline.Manifest, st remote.PushStats, took time.Duration) string {
	name := m.Stage + "@" + m.Version
	switch {
	case st.Other != "":
		return fmt.Sprintf("kept    %s  the remote holds another machine's measurement of this version (%.16s; here %.16s): %s measures the machine", name, st.Other, m.Output, m.Stage)
	case st.Existed && st.Blobs == 0:
		return fmt.Sprintf("present %s", name)
	}
	return fmt.Sprintf("pushed  %s  %d file(s), %s in %s (%d already there)", name, st.Blobs, formatBytes(st.Bytes), formatDuration(took), st.Present)
}

// sharedRemote is the opened remote that a distributed run's Dispatcher
// pushes each stage's inputs to, through lazyRemote, so that an input
// uploaded for a worker is reported like a version the run computed.
type sharedRemote struct {
	*remote.Remote
	l *lazyRemote
}

// Push implements temporalexec.DispatcherRemote.
func (s sharedRemote) Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error {
	return s.l.push(ctx, st, m, true)
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
				start := time.Now()
				st, err := push(cmd.Context(), l.p.Store, m)
				if c := (*pipeline.ConflictError)(nil); errors.As(err, &c) {
					fmt.Fprintf(a.stdout, "CONFLICT %s@%s  the remote's output %.16s, here %.16s\n", m.Stage, m.Version, c.Remote, c.Local)
					conflicts = append(conflicts, err)
					continue
				}
				if err != nil {
					return err
				}
				if replace && st.Other != "" {
					fmt.Fprintf(a.stdout, "replaced %s@%s  the remote's output %.16s with this store's %.16s\n", m.Stage, m.Version, st.Other, m.Output)
					continue
				}
				fmt.Fprintln(a.stdout, pushLine(m, st, time.Since(start)))
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
