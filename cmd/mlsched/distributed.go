//go:build !lean

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
	"github.com/mlsched/mlsched/pipeline/temporalexec"
	"github.com/mlsched/mlsched/stages"
)

// dial connects to Temporal, logging only its warnings, on stderr.
func (t *temporalFlags) dial(ctx context.Context, stderr io.Writer) (client.Client, error) {
	host, _ := os.Hostname()
	c, err := client.DialContext(ctx, client.Options{
		HostPort: t.address, Namespace: t.namespace,
		Identity: fmt.Sprintf("mlsched@%s:%d", host, os.Getpid()),
		Logger:   tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", t.address, t.namespace, err)
	}
	return c, nil
}

// buildQueue is the task queue of this build: --task-queue and the
// fingerprint of the stages' code (temporalexec.BuildQueue).
func (t *temporalFlags) buildQueue() string {
	return temporalexec.BuildQueue(t.taskQueue, stages.CodeVersions())
}

// lazyTemporal is the run's Updater: it connects to Temporal when the
// first stage must run, so that a run with everything cached needs no
// Temporal at all.
type lazyTemporal struct {
	flags  temporalFlags
	stderr io.Writer
	// note prints a line for the user while the run goes on.
	note func(string)
	c    *temporalexec.Client
}

func (l *lazyTemporal) Start(ctx context.Context) error {
	c, err := l.flags.dial(ctx, l.stderr)
	if err != nil {
		return err
	}
	queue := l.flags.buildQueue()
	say := func(s string) { fmt.Fprint(l.stderr, escapeControl("mlsched: "+s)+"\n") }
	if err := temporalexec.WaitForWorker(ctx, c, queue, l.flags.waitWorker, say); err != nil {
		c.Close()
		return err
	}
	l.c = &temporalexec.Client{Client: c, TaskQueue: queue,
		WorkflowID: temporalexec.WorkflowID(func() int64 { return time.Now().UnixNano() }),
		Log:        func(format string, args ...any) { l.note(fmt.Sprintf(format, args...)) }}
	return l.c.Start(ctx)
}

func (l *lazyTemporal) Stage(ctx context.Context, req temporalexec.Request) (temporalexec.Reply, error) {
	return l.c.Stage(ctx, req)
}

func (l *lazyTemporal) Finish(ctx context.Context, cancelled bool) error {
	if l.c == nil {
		return nil
	}
	defer l.c.Client.Close()
	return l.c.Finish(ctx, cancelled)
}

// temporalExecutor makes the pipeline of l run its stages on Temporal
// workers, its inputs and outputs moving through the config's remote;
// note is told of each retried activity.
func (a *app) temporalExecutor(ctx context.Context, l *loaded, flags temporalFlags, note func(string)) (pipeline.Executor, error) {
	if l.remote == nil {
		return nil, usageError{fmt.Errorf("--executor temporal: the workers exchange artifacts through a shared remote, and %s names none (remote: s3://bucket/prefix?endpoint=…)", a.configPath)}
	}
	r, err := l.remote.open(ctx)
	if err != nil {
		return nil, err
	}
	// The workers get the config alone: nothing of this machine (its
	// environment holds credentials) goes with a stage, and the files it
	// imports go under paths of their own, wherever they are here.
	cfg, extern := stages.ShipImports(l.cfg, stages.Runtime{ConfigDir: filepath.Dir(a.configPath)})
	payload, err := stages.EncodePayload(cfg, stages.Runtime{})
	if err != nil {
		return nil, err
	}
	return &temporalexec.Dispatcher{Updater: &lazyTemporal{flags: flags, stderr: a.stderr, note: note}, Remote: sharedRemote{r, l.remote}, Store: l.p.Store,
		Payload: payload, Extern: extern, Where: l.remote.moved}, nil
}

func (a *app) workerCmd() *cobra.Command {
	var flags temporalFlags
	var remoteURL, cacheDir string
	var concurrency int
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Serve runs' stages from Temporal on this machine (mlsched run --executor temporal)",
		Long: `Worker polls a Temporal task queue for the stages of runs started with
'mlsched run --executor temporal' on any machine, and runs them here: it
pulls each stage's inputs from the shared remote into its cache store
(checking every digest), runs the stage's code in mlsched-worker, and
uploads the output for the run to download. Start as many workers, on as
many machines, as reach Temporal and the remote; each runs at most
--concurrency stages at once (default: its cores), and a stage that
measures the machine alone. A worker killed mid-stage costs only that
stage's retry on another worker, after ` + temporalexec.HeartbeatTimeout.String() + ` without a heartbeat.

The remote is --remote, or else the config's remote: the credentials come
from the standard AWS environment, as for run.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if concurrency < 1 {
				return usageError{fmt.Errorf("--concurrency %d: want at least 1", concurrency)}
			}
			if remoteURL == "" {
				l, err := a.load()
				if err != nil {
					return fmt.Errorf("no --remote, and the config cannot say: %w", err)
				}
				if remoteURL = l.cfg.Remote; remoteURL == "" {
					return usageError{fmt.Errorf("no remote: give --remote URL, or name one in %s", a.configPath)}
				}
			}
			if _, err := remoteurl.Parse(remoteURL); err != nil {
				return usageError{fmt.Errorf("--remote: %w", err)}
			}
			ctx := cmd.Context()
			r, err := remote.Open(ctx, remoteURL)
			if err != nil {
				return err
			}
			defer r.Close()
			// A worker that cannot read the remote would fail every
			// stage it takes, after retries; it refuses to serve instead.
			if err := r.Check(ctx); err != nil {
				return fmt.Errorf("mlsched worker will not serve: %w", err)
			}
			if cacheDir == "" {
				dir, err := os.UserCacheDir()
				if err != nil {
					return usageError{fmt.Errorf("no --cache, and no user cache directory: %w", err)}
				}
				cacheDir = filepath.Join(dir, "mlsched", "worker")
			}
			cache, err := pipeline.OpenStore(cacheDir)
			if err != nil {
				return usageError{fmt.Errorf("--cache: %w", err)}
			}
			exe, err := workerPath(a.environ)
			if err != nil {
				return err
			}
			c, err := flags.dial(ctx, a.stderr)
			if err != nil {
				return err
			}
			defer c.Close()
			host, _ := os.Hostname()
			name := fmt.Sprintf("%s:%d", host, os.Getpid())
			wk := &temporalexec.Worker{
				Remote: r, Cache: cache, Name: name, Codes: stages.CodeVersions(),
				Exec: func(payload json.RawMessage) pipeline.Executor {
					return &pipeline.Process{Command: []string{exe, "stage"}, Payload: payload, Stderr: a.stderr}
				},
				Prepare: a.preparePayload,
				Log: func(format string, args ...any) {
					fmt.Fprint(a.stderr, escapeControl(fmt.Sprintf("mlsched worker %s: %s\n", name, fmt.Sprintf(format, args...))))
				},
			}
			queue := flags.buildQueue()
			w := worker.New(c, queue, worker.Options{
				MaxConcurrentActivityExecutionSize: concurrency,
				Identity:                           "mlsched-worker@" + name,
			})
			wk.Register(w)
			if a.interrupts != nil {
				a.interrupts.catch()
			}
			if err := w.Start(); err != nil {
				return fmt.Errorf("start worker on task queue %s: %w", queue, err)
			}
			fmt.Fprint(a.stderr, escapeControl(fmt.Sprintf("mlsched worker %s: serving task queue %s at %s (namespace %s), %d stage(s) at once, cache %s, remote %s\n",
				name, queue, flags.address, flags.namespace, concurrency, cacheDir, r.Location())))
			<-ctx.Done()
			w.Stop()
			return ctx.Err()
		}),
	}
	f := cmd.Flags()
	flags.add(f)
	f.StringVar(&remoteURL, "remote", "", "shared remote `URL` (default: the config's remote)")
	f.StringVar(&cacheDir, "cache", "", "this worker's cache store `dir` (default: the user cache directory's mlsched/worker)")
	f.IntVar(&concurrency, "concurrency", runtime.NumCPU(), "run at most `N` stages at once")
	return cmd
}

// preparePayload gives a task's configuration this machine's runtime: its
// environment (for ONNXRUNTIME_LIB), the onnxruntime library beside this
// program, and configDir, where the worker put the files outside the
// store that the config names.
func (a *app) preparePayload(payload json.RawMessage, configDir string) (json.RawMessage, error) {
	cfg, _, err := stages.DecodePayload(payload)
	if err != nil {
		return nil, err
	}
	rt := stages.Runtime{ORTLib: a.ortLib, Environ: a.environ, ConfigDir: configDir}
	if exe, err := os.Executable(); err == nil {
		rt.SearchDirs = []string{filepath.Dir(filepath.Dir(exe))}
	}
	return stages.EncodePayload(cfg, rt)
}
