package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/mlsched/mlsched/pipeline/storefile"
	"golang.org/x/sync/errgroup"
)

// checkInputs re-hashes every stored file a stage is about to be given,
// its upstreams' files that it reads and the files of the versions its
// Refs name, and refuses to run it on any whose bytes differ from their
// manifest: a cached run trusts a file while its size and mtime match,
// and a byte changed in place with its mtime kept (a disk's fault, a
// careless tool) would otherwise flow into the stage's output, which then
// exits 0. The damaged files are marked (Store.Suspect), so
// that the next run rebuilds their versions first. The cost is one read
// of what the stage reads, on the cores this machine has, and the stage's
// own read then comes from the page cache; a run that finds every stage
// cached never gets here, and reads nothing.
func (p *Pipeline) checkInputs(ctx context.Context, inputs, refs map[string]Input) error {
	damaged, err := p.damagedInputs(ctx, inputs, refs)
	if err != nil {
		return fmt.Errorf("check inputs: %w", err)
	}
	if len(damaged) == 0 {
		return nil
	}
	return &InputDamagedError{Damaged: damaged}
}

// diagnoseInputs is called when a stage failed: an input damaged while
// the stage ran, after checkInputs passed it, fails the stage with a
// reader's error, such as a Parquet checksum, that names neither the
// version nor the remedy. It re-hashes every file the stage was given
// and, if one differs from its manifest, says so beside the stage's error.
func (p *Pipeline) diagnoseInputs(env *Env, runErr error) error {
	damaged, err := p.damagedInputs(context.Background(), env.Inputs, env.Refs)
	if err != nil || len(damaged) == 0 {
		return runErr
	}
	return &InputDamagedError{Err: runErr, Damaged: damaged}
}

// damagedInputs re-hashes the files of inputs and refs, several at once,
// and returns one line for each version with files whose bytes differ
// from its manifest: the files, both digests of each, the commands that
// confirm and repair it. It marks those files for the next run to rebuild
// (Store.Suspect). err is for a failure to look (a cancelled run), not for
// damage: a file that cannot be read is damaged.
func (p *Pipeline) damagedInputs(ctx context.Context, inputs, refs map[string]Input) ([]string, error) {
	type given struct {
		in   Input
		what string
		bad  []string // "path damaged (sha256 … on disk, … in its manifest)", in the order of in.Files
	}
	var all []*given
	for _, n := range slices.Sorted(maps.Keys(inputs)) {
		all = append(all, &given{in: inputs[n], what: "input"})
	}
	for _, k := range slices.Sorted(maps.Keys(refs)) {
		all = append(all, &given{in: refs[k], what: k + " reads"})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, gv := range all {
		bad := make([]string, len(gv.in.Files))
		gv.bad = bad
		for i, f := range gv.in.Files {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				sum, err := fileSHA256(gv.in.Path(f.Path))
				if err != nil {
					sum = "unreadable (" + err.Error() + ")"
				}
				if sum != f.SHA256 {
					bad[i] = fmt.Sprintf("%s damaged (sha256 %s on disk, %s in its manifest)", f.Path, sum, f.SHA256) // each goroutine its own element
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var damaged []string
	for _, gv := range all {
		var bad, paths []string
		for i, b := range gv.bad {
			if b != "" {
				bad, paths = append(bad, b), append(paths, gv.in.Files[i].Path)
			}
		}
		if len(bad) == 0 {
			continue
		}
		in := gv.in
		how := fmt.Sprintf("'mlsched run --force %s' rebuilds it", in.Stage)
		if m, err := p.Store.Manifest(in.Stage, in.Version); err == nil {
			if err := p.Store.Suspect(m, paths); err == nil {
				how = fmt.Sprintf("the next 'mlsched run' rebuilds it (or 'mlsched run --force %s')", in.Stage)
			}
		}
		damaged = append(damaged, fmt.Sprintf("%s %s@%s: %s; 'mlsched verify' confirms it; %s",
			gv.what, in.Stage, in.Version, strings.Join(bad, ", "), how))
	}
	return damaged, nil
}

// InputDamagedError is a stage that was refused, or that failed, on stored
// inputs found damaged: Damaged says which, and how to repair them. Err is
// the stage's own error when it ran and failed, nil when it was refused
// before it ran. It wraps ErrInputDamaged.
type InputDamagedError struct {
	Err     error
	Damaged []string
}

func (e *InputDamagedError) Error() string {
	what := "its stored inputs' bytes differ from their manifests; nothing was run"
	if e.Err != nil {
		what = e.Err.Error()
	}
	return fmt.Sprintf("%s\n  %s", what, strings.Join(e.Damaged, "\n  "))
}

// Unwrap returns the stage's own error, if it ran, and ErrInputDamaged.
func (e *InputDamagedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInputDamaged}
	}
	return []error{e.Err, ErrInputDamaged}
}

// ErrInputDamaged is wrapped by an InputDamagedError: a stored file a
// stage reads no longer has the bytes its manifest records.
var ErrInputDamaged = errors.New("stored input damaged")

// fileSHA256 returns the hex SHA-256 of the bytes of the file at path:
// what a stored file is checked against its manifest by. It decodes
// nothing, so that a file digest.File refuses (a Parquet file cut short)
// is still told apart from the one recorded, and a Parquet file costs one
// hash, not digest.File's two.
func fileSHA256(path string) (string, error) {
	// Never block on, or follow, what the runner cannot have written: a
	// named pipe in a version's place would hang the hash.
	if _, err := storefile.Check(path); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(buf)
	if _, err := io.CopyBuffer(h, f, *buf); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashBuffers holds fileSHA256's read buffers: a stage's inputs are often
// many small files, whose hashing a fresh buffer each would cost more than
// their reading.
var hashBuffers = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}
