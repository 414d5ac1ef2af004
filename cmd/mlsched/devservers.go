//go:build !lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline/devservers"
)

// devBucket and devPrefix place the dev servers' remote: the bucket is a
// folder under the state folder, the prefix a folder in it.
const devBucket, devPrefix = "mlsched", "dev"

func (a *app) devServersCmd() *cobra.Command {
	var c devservers.Config
	var toolsDir string
	cmd := &cobra.Command{
		Use:   "dev-servers",
		Short: "Start a Temporal dev server and an S3 server on 127.0.0.1, to try distributed runs",
		Long: `Dev-servers starts, for trying out distributed runs on one machine, the
Temporal dev server and versitygw (an S3 server over a folder), both on
127.0.0.1 only, waits until both answer, and prints their addresses, the S3
credentials as export lines, the remote: line for pipeline.yaml and the
commands that start two workers and a distributed run. It stays in the
foreground: Ctrl-C stops both (exit 0); if it is killed, the kernel stops
them with it.

The credentials are those of the environment (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY) where both are set, and then never printed;
otherwise new random ones, printed. They go into no file. Start it again
from a shell with the printed exports, and the workers' shells keep
working. The servers' state (Temporal's SQLite file,
the bucket's folder) and their logs stay in --dir between starts.

The servers are built by 'make distributed-tools' into .tools/bin ('make
servers' builds what is missing and runs this). They are no deployment: a
team's is an S3 bucket and a Temporal cluster (docs/deployment.md).`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var err error
			if c.Temporal, c.Versitygw, err = serverPrograms(toolsDir); err != nil {
				return usageError{err}
			}
			if c.Dir == "" {
				dir, err := os.UserCacheDir()
				if err != nil {
					return usageError{fmt.Errorf("no --dir, and no user cache directory: %w", err)}
				}
				c.Dir = filepath.Join(dir, "mlsched", "dev-servers")
			}
			if c.Dir, err = filepath.Abs(c.Dir); err != nil {
				return usageError{fmt.Errorf("--dir: %w", err)}
			}
			given := envValue(a.environ, "AWS_ACCESS_KEY_ID") != "" && envValue(a.environ, "AWS_SECRET_ACCESS_KEY") != ""
			if given {
				c.AccessKey, c.SecretKey = envValue(a.environ, "AWS_ACCESS_KEY_ID"), envValue(a.environ, "AWS_SECRET_ACCESS_KEY")
			} else {
				c.AccessKey, c.SecretKey = devservers.NewCredentials()
			}
			c.Bucket, c.UI = devBucket, true

			ctx := cmd.Context()
			if a.interrupts != nil {
				// Ctrl-C is how this command ends: it stops the servers
				// and exits 0. A second one ends it at once (the
				// servers die with it).
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				context.AfterFunc(ctx, stop)
			}
			fmt.Fprintf(a.stderr, "mlsched dev-servers: starting Temporal (%s) and versitygw (%s), state in %s\n",
				escapeControl(c.Temporal), escapeControl(c.Versitygw), escapeControl(c.Dir))
			s, err := devservers.Start(ctx, c)
			if errors.Is(err, devservers.ErrPortInUse) {
				return usageError{fmt.Errorf("%w: is another mlsched dev-servers running? Give other ports, or 0 for free ones (--temporal-port, --ui-port, --s3-port)", err)}
			}
			if err != nil && ctx.Err() != nil {
				return errors.New("dev-servers: interrupted before both servers answered; neither runs now")
			}
			if err != nil {
				return fmt.Errorf("dev-servers: %w", err)
			}
			printDevServers(a.stdout, s, c.Dir, given)
			ended := s.Wait(ctx)
			if ended == nil {
				fmt.Fprintln(a.stderr, "\nmlsched dev-servers: stopping Temporal and versitygw")
			}
			if err := errors.Join(ended, s.Stop()); err != nil {
				return fmt.Errorf("dev-servers: %w", err)
			}
			fmt.Fprintf(a.stderr, "mlsched dev-servers: both stopped; their state stays in %s for the next start\n", escapeControl(c.Dir))
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&c.Dir, "dir", "", "the servers' state and logs `dir` (default: the user cache directory's mlsched/dev-servers)")
	f.StringVar(&toolsDir, "tools", "", "`dir` holding temporal and versitygw (default: the checkout's .tools/bin, then PATH)")
	f.IntVar(&c.TemporalPort, "temporal-port", 7233, "Temporal's frontend `port` (0: a free one)")
	f.IntVar(&c.UIPort, "ui-port", 8233, "Temporal's web UI `port` (0: a free one)")
	f.IntVar(&c.S3Port, "s3-port", 7070, "the S3 server's `port` (0: a free one)")
	return cmd
}

// serverPrograms finds temporal and versitygw in dir, or, without one, in
// the checkout's .tools/bin (bin/mlsched's checkout, where make
// distributed-tools builds them), then on PATH.
func serverPrograms(dir string) (temporal, versitygw string, err error) {
	find := func(name string) (string, error) {
		if dir != "" {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("--tools %s: no %s there: build it with 'make distributed-tools' (minutes, once; 'make servers' builds what is missing and starts both): %w", dir, name, err)
			}
			return p, nil
		}
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(filepath.Dir(exe)), ".tools", "bin", name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("no %s in the checkout's .tools/bin nor on PATH: build both servers with 'make distributed-tools' (minutes, once), or run 'make servers', which builds what is missing and starts them", name)
	}
	if temporal, err = find("temporal"); err != nil {
		return "", "", err
	}
	versitygw, err = find("versitygw")
	return temporal, versitygw, err
}

// envValue is the value of the variable name in environ; the last one
// set wins, as in exec.
func envValue(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}

// printDevServers prints what a newcomer needs to use the servers: their
// addresses, the credentials, the remote: line and the commands that start
// two workers and a distributed run, each ready to paste.
func printDevServers(w io.Writer, s *devservers.Servers, dir string, given bool) {
	remote := s.RemoteURL(devPrefix)
	self := selfName()
	fmt.Fprintf(w, "Temporal  %s  (namespace default, task queues %s.<build>: one per build of mlsched; web UI %s)\n", s.Temporal, defaultTaskQueue, s.UI)
	fmt.Fprintf(w, "S3        %s  (versitygw; bucket %s, the folder %s)\n", s.S3Endpoint, s.Bucket, filepath.Join(dir, "s3", s.Bucket))
	fmt.Fprintf(w, "Logs      %s, %s\n", s.TemporalLog, s.S3Log)
	fmt.Fprintln(w)
	if given {
		fmt.Fprintf(w, "# The S3 server takes this shell's AWS_ACCESS_KEY_ID (%s) and AWS_SECRET_ACCESS_KEY:\n# export the same in every shell that runs mlsched.\n", s.AccessKey)
	} else {
		fmt.Fprintln(w, "# In every shell that runs mlsched (credentials live in the environment, never in a config file):")
		for _, kv := range s.Env() {
			fmt.Fprintf(w, "export %s\n", kv)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "# In pipeline.yaml (or export MLSCHED_REMOTE with the URL):")
	fmt.Fprintf(w, "remote: %s\n", remote)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "# Two workers, each in a shell of its own:")
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(w, "%s worker --temporal %s --remote %s --cache %s\n",
			shellQuote(self), s.Temporal, shellQuote(remote), shellQuote(filepath.Join(dir, fmt.Sprintf("worker%d", i))))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "# A distributed run, in the project's folder:")
	fmt.Fprintf(w, "%s run --executor temporal --temporal %s\n", shellQuote(self), s.Temporal)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "# Ctrl-C here stops both servers.")
}

// selfName is how the printed commands name mlsched: the lean build beside
// this one where there is one (make build's bin/mlsched), relative to the
// working folder where it lies below it.
func selfName() string {
	exe, err := os.Executable()
	if err != nil {
		return "mlsched"
	}
	if lean := filepath.Join(filepath.Dir(exe), "mlsched"); lean != exe {
		if _, err := os.Stat(lean); err == nil {
			exe = lean
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, exe); err == nil && !strings.HasPrefix(rel, "..") {
			if !strings.ContainsRune(rel, filepath.Separator) {
				rel = "." + string(filepath.Separator) + rel // not looked up on PATH
			}
			return rel
		}
	}
	return exe
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
