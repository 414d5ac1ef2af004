// Command mlsched runs and inspects the mlsched pipeline: profile this
// machine, generate workloads, train predictors, simulate scheduling
// policies and report on them, rerunning only what changed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages"
)

// version is mlsched's release, recorded in every manifest.
const version = "0.1.0"

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // a stage failed, or verify found damage
	exitUsage  = 2 // bad usage or bad config
	// An interrupted command exits 128 plus the signal's number, as a
	// shell reports a process a signal ended: 130 for SIGINT (Ctrl-C), 143
	// for SIGTERM.
	exitSignal = 128
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ(), &interrupts{cancel: cancel, stderr: os.Stderr})
	cancel()
	os.Exit(code)
}

// interrupts turns SIGINT and SIGTERM into a cancelled context, once catch
// is called, so that stages still running stop cleanly and every stored
// version stays intact; a second signal then ends the process at once,
// with its workers (they die with it, see pipeline.Process). run calls
// catch when the first stage starts (before its staging directory
// exists): until then a signal ends the process as it is, at once, since
// every write to the store is atomic, and a run that only finds everything
// cached is spared starting the signal watcher's thread.
type interrupts struct {
	cancel context.CancelFunc
	stderr io.Writer

	once sync.Once
	got  atomic.Value // the first signal caught, a syscall.Signal
}

func (in *interrupts) catch() {
	in.once.Do(func() {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := (<-ch).(syscall.Signal)
			in.got.Store(sig)
			fmt.Fprintf(in.stderr, "\nmlsched: %s: stopping the running stages; every stored version stays intact (interrupt again to exit at once)\n", signalName(sig))
			in.cancel()
			sig = (<-ch).(syscall.Signal)
			fmt.Fprintf(in.stderr, "mlsched: %s again: exiting at once\n", signalName(sig))
			os.Exit(exitSignal + int(sig))
		}()
	})
}

// caught returns the signal that interrupted the command, if one did.
func (in *interrupts) caught() (syscall.Signal, bool) {
	if in == nil {
		return 0, false
	}
	sig, ok := in.got.Load().(syscall.Signal)
	return sig, ok
}

// signalName is how a user knows the signal: Ctrl-C for SIGINT.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return sig.String()
}

// usageError marks an error as the user's (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// app holds the global flags and what they load.
type app struct {
	stdout, stderr io.Writer
	environ        []string
	configPath     string
	sets           []string
	store          string
	ortLib         string
	// inRunE is set once a command's own code runs: errors before that are
	// cobra's (unknown command, bad flag, wrong arguments), so usage errors.
	inRunE bool
	// interrupts makes signals cancel the command's context rather than
	// end the process, once a stage runs; nil leaves them alone (a test's
	// in-process call).
	interrupts *interrupts
}

// execute runs the command line and returns the process exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string, in *interrupts) int {
	// What anyone may have chosen (a path, a value) reaches the terminal
	// with its control characters escaped (see escapeControl).
	out := &controlEscaper{w: stdout}
	defer out.Flush()
	a := &app{stdout: out, stderr: stderr, environ: environ, interrupts: in}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "mlsched: %s\n", escapeControl(err.Error()))
	if sig, ok := in.caught(); ok {
		return exitSignal + int(sig)
	}
	var ue usageError
	if errors.As(err, &ue) || !a.inRunE {
		if !a.inRunE {
			fmt.Fprintln(stderr, "Run 'mlsched --help' for usage.")
		}
		return exitUsage
	}
	return exitFailed
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mlsched",
		Short: "Profile, generate, train, schedule and evaluate ML workloads, reproducibly",
		Long: `mlsched is a batch pipeline for ML-systems engineers: it profiles this machine's
inference performance, generates workloads, trains predictors, simulates
scheduling policies and reports on them. Stages write versioned Parquet
artifacts to a store; a content-hashing runner reruns only what changed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "pipeline.yaml", "pipeline configuration `file`")
	pf.StringArrayVar(&a.sets, "set", nil, "override a config value, `key.path=value` (repeatable; lists comma-separated)")
	pf.StringVar(&a.store, "store", "", "artifact store `dir` (overrides the config's store)")
	pf.StringVar(&a.ortLib, "ort-lib", "", "onnxruntime shared library `path` (default: ONNXRUNTIME_LIB, profile.ort_lib, then the one make setup installs)")
	root.AddCommand(a.runCmd(), a.statusCmd(), a.dagCmd(), a.pinCmd(), a.unpinCmd(),
		a.lsCmd(), a.showCmd(), a.predictCmd(), a.diffCmd(), a.verifyCmd(), a.gcCmd(), a.pushCmd(), a.pullCmd(), a.workerCmd(), a.devServersCmd(), a.configCmd(), a.versionCmd())
	return root
}

// runE wraps a command body so errors before it are told apart from its own.
func (a *app) runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.inRunE = true
		return f(cmd, args)
	}
}

// loaded is the configuration and the pipeline it describes.
type loaded struct {
	cfg    stages.Config
	p      *pipeline.Pipeline
	remote *lazyRemote // nil without a remote
}

// load reads and validates the configuration and builds the pipeline. Every
// failure here is the user's: exit code 2.
func (a *app) load() (*loaded, error) {
	cfg := stages.DefaultConfig()
	var origins config.Origins
	err := config.Load(config.Options{File: a.configPath, Env: configEnviron(a.environ), EnvPrefix: envPrefix, Sets: a.sets, Origins: &origins, Retired: stages.Retired}, &cfg)
	if err != nil {
		return nil, usageError{err}
	}
	// Validation sees the merged values: each error names the input that
	// set its key (a --set argument, a variable, the file).
	if err := cfg.Validate(); err != nil {
		return nil, usageError{config.Attribute(err, &origins, a.configPath)}
	}
	if warnings, ok := config.Attribute(cfg.Warnings(), &origins, a.configPath).(config.Errors); ok {
		for _, w := range warnings {
			fmt.Fprintf(a.stderr, "mlsched: warning: %s\n", escapeControl(fmt.Sprint(w)))
		}
	}
	base := filepath.Dir(a.configPath)
	rt := stages.Runtime{ORTLib: a.ortLib, Environ: a.environ, ConfigDir: base, SearchDirs: []string{base}}
	if exe, err := os.Executable(); err == nil {
		// bin/mlsched in a checkout: the checkout holds .tools/onnxruntime.
		rt.SearchDirs = append(rt.SearchDirs, filepath.Dir(filepath.Dir(exe)))
	}
	reg, err := stages.Registry(cfg, rt)
	if err != nil {
		// An error naming a key names the input that set it.
		return nil, usageError{config.Attribute(err, &origins, a.configPath)}
	}
	g, err := reg.Graph()
	if err != nil {
		return nil, err
	}
	configStore := cfg.Store
	if !filepath.IsAbs(configStore) {
		configStore = filepath.Join(base, configStore)
	}
	root, rootSrc := a.store, "--store "+a.store
	if root == "" {
		root, rootSrc = configStore, origins.Source("store")
		if rootSrc == "" {
			rootSrc = a.configPath
		}
		rootSrc += ": store"
	}
	// The store and what it holds must be a directory: never a file, a
	// device or a path below one.
	if err := userfile.CheckDir(root); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", rootSrc, err)}
	}
	st, err := pipeline.OpenStore(root)
	if err != nil {
		return nil, usageError{err}
	}
	if cfg.Remote != "" {
		if err := remoteApart(cfg.Remote, st.Root()); err != nil {
			src := origins.Source("remote")
			if src == "" {
				src = a.configPath
			}
			return nil, usageError{fmt.Errorf("%s: remote: %w", src, err)}
		}
	}
	p := &pipeline.Pipeline{
		Graph: g, Store: st, Seed: cfg.Seed, Root: base,
		PublishIndex: filepath.Join(st.Root(), pipeline.PublishIndexName),
		// The config's lock file (pipeline.lock for pipeline.yaml,
		// other.lock for other.yaml) records its own store; another
		// (--store) keeps its record inside itself.
		LockPath: pipeline.LockPathFor(pipeline.LockPathOf(a.configPath), configStore, root),
		Tool:     fmt.Sprintf("mlsched %s (%s %s/%s)", version, runtime.Version(), runtime.GOOS, runtime.GOARCH),
		Executor: &workers{cfg: cfg, rt: rt, environ: a.environ, stderr: a.stderr},
	}
	p.Waiting = a.waiting(st.Location())
	var rem *lazyRemote
	if cfg.Remote != "" {
		// The lean build hands the command to the full one here.
		if rem, err = a.openRemote(cfg.Remote); err != nil {
			return nil, err
		}
		p.Remote = rem
	}
	// A reference to a stored version the store lacks is the user's
	// error, told before anything runs.
	if err := p.CheckRefs(nil); err != nil {
		return nil, usageError{err}
	}
	return &loaded{cfg: cfg, p: p, remote: rem}, nil
}

// waiting returns what a command that waits for the store at loc says,
// once, on standard error.
func (a *app) waiting(loc string) func(holder string) {
	return func(holder string) {
		fmt.Fprintf(a.stderr, "mlsched: waiting for the store %s, in use by %s\n", escapeControl(loc), escapeControl(holder))
	}
}

// envPrefix starts the environment variables that override config keys.
const envPrefix = "MLSCHED_"

// debugPrefix starts the variables that switch on debugging output
// (MLSCHED_DEBUG_KEY, MLSCHED_DEBUG_CODEVERSION); they are not config keys.
const debugPrefix = envPrefix + "DEBUG_"

// fullEnv names the full build, mlsched-dist, when it is not beside
// mlsched (the lean build hands commands to it; lean.go).
const fullEnv = envPrefix + "DIST"

// configEnviron drops the debugging switches, MLSCHED_WORKER and
// MLSCHED_DIST from the environment given to the config loader, which
// would otherwise reject them as unknown keys.
func configEnviron(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, debugPrefix) && !strings.HasPrefix(kv, workerEnv+"=") && !strings.HasPrefix(kv, fullEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// loadFor loads the pipeline for a command whose arguments name stages; a
// name that is not a stage is a usage error.
func (a *app) loadFor(stageNames []string) (*loaded, error) {
	l, err := a.load()
	if err != nil {
		return nil, err
	}
	if _, err := l.p.Graph.Closure(stageNames); err != nil {
		return nil, usageError{err}
	}
	return l, nil
}

// remoteApart refuses a file remote that is the store's folder or a
// folder inside it (through symbolic links too): the remote's own layout
// (cas/, versions/, memo/) would be written among the store's stages,
// where it is no version, and a push would read and write the same files.
// A remote elsewhere, another kind of remote, or a URL that does not
// parse (the remote refuses it when it is opened) is no concern here.
func remoteApart(rawURL, store string) error {
	u, err := remoteurl.Parse(rawURL)
	if err != nil || u.Scheme != "file" {
		return nil
	}
	dir, root := realPath(u.Path), realPath(store)
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	where := "the store " + store + " itself"
	if rel != "." {
		where = "inside the store " + store
	}
	return fmt.Errorf("file://%s is %s: a remote is another folder (its layout is not a store's, and a push would write into the store); name one outside it", u.Path, where)
}

// realPath is path with its symbolic links resolved, as far as it exists.
func realPath(path string) string {
	path = filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(realPath(parent), filepath.Base(path))
}
