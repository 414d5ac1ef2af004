//go:build lean

package main

// The lean build (make build's bin/mlsched, -tags lean) links neither the
// S3 client nor Temporal's SDK: together they multiply the time the program
// takes to start (docs/benchmarks.md), which every
// cached run pays. A command that needs them (push, pull, worker, a run
// with a remote or on Temporal) is handed, arguments and environment
// unchanged, to the full build beside it, bin/mlsched-dist, as git hands a
// remote to its git-remote-* helpers.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
)

// fullName is the full build's program, beside this one.
const fullName = "mlsched-dist"

// handOver replaces this process with the full build, run with the same
// arguments and environment; it returns only on failure.
func (a *app) handOver(why string) error {
	path := ""
	for _, kv := range a.environ {
		if v, ok := strings.CutPrefix(kv, fullEnv+"="); ok && v != "" {
			path = v
		}
	}
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("%s needs %s: %w", why, fullName, err)
		}
		path = filepath.Join(filepath.Dir(exe), fullName)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s needs %s, which is not at %s (build both with 'make build', or set %s to its path)", why, fullName, path, fullEnv)
	}
	err := syscall.Exec(path, append([]string{path}, os.Args[1:]...), a.environ)
	return fmt.Errorf("%s: start %s: %w", why, path, err)
}

// lazyRemote is never made in the lean build (openRemote hands over).
type lazyRemote struct{ moved func(stage, line string) }

func (*lazyRemote) Location() string { return "" }
func (*lazyRemote) Fetch(context.Context, pipeline.StoreWriter, string, string, string) (*pipeline.Manifest, error) {
	return nil, errors.New("the lean build has no remote")
}
func (*lazyRemote) Push(context.Context, pipeline.VersionSource, *pipeline.Manifest) error {
	return errors.New("the lean build has no remote")
}

func (a *app) openRemote(string) (*lazyRemote, error) {
	return nil, a.handOver("a config with a remote")
}

func (a *app) compareRemote(context.Context, *loaded) error {
	return a.handOver("verify --remote")
}

func (a *app) temporalExecutor(context.Context, *loaded, temporalFlags, func(string)) (pipeline.Executor, error) {
	return nil, a.handOver("--executor temporal")
}

// diff reads metrics.parquet, which the lean build cannot (see diffCmd).
func (a *app) diff([]string, bool) error {
	return a.handOver("mlsched diff")
}

// predict links the predictors (see predictCmd).
func (a *app) predict(string, predictFlags) error {
	return a.handOver("mlsched predict")
}

// handedOver is a command of the full build: this one hands it over whole.
func (a *app) handedOver(use, short string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, DisableFlagParsing: true,
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			return a.handOver("mlsched " + strings.Fields(use)[0])
		}),
	}
}

func (a *app) pushCmd() *cobra.Command {
	return a.handedOver("push [STAGE[@VERSION]...]", "Upload stored versions (default: every stage's current one) to the config's remote")
}

func (a *app) pullCmd() *cobra.Command {
	return a.handedOver("pull [STAGE[@VERSION]...]", "Download versions (default: those the config makes, in order) from the config's remote")
}

func (a *app) workerCmd() *cobra.Command {
	return a.handedOver("worker", "Serve runs' stages from Temporal on this machine (mlsched run --executor temporal)")
}

func (a *app) devServersCmd() *cobra.Command {
	return a.handedOver("dev-servers", "Start a Temporal dev server and an S3 server on 127.0.0.1, to try distributed runs")
}
