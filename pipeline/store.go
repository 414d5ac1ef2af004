package pipeline

import (
	"context"
	"fmt"
	"strings"
)

// Store is where versions live: everything the runner, status, pin, verify
// and gc ask of it, and nothing more. Stage code never sees it: a running
// stage reads its inputs from local directories (Input.Dir) and writes into
// one (Env.Dir).
//
// Store is the composition of four small interfaces, one per kind of
// caller, and whatever needs less asks for less: StoreReader for what lists
// and reads versions (Resolve, inspect), StoreWriter for what commits a new
// one (a remote's Fetch), MemoStore for what moves memo entries, and
// StoreMaintainer for what locks, repairs and collects the store. The
// runner (Pipeline) needs all four.
//
// LocalStore keeps versions in a directory of this machine. A shared store
// (an object store, say) is meant to be a second implementation that keeps a
// LocalStore as its cache: Open brings a version's files into the cache and
// returns its directory there, and Commit uploads what the cache committed.
// Go's build cache is split the same way (its Cache interface has a disk and
// an external-program implementation).
type Store interface {
	StoreReader
	StoreWriter
	MemoStore
	StoreMaintainer
}

// StoreReader reads stored versions: it lists them, returns their
// manifests and directories, and says whether their files still match
// their manifests. Resolve, status and inspect need no more.
type StoreReader interface {
	// Location says where the store is, for messages.
	Location() string
	// Stages returns the names of the stages that have stored versions,
	// sorted.
	Stages() ([]string, error)
	// Versions returns the readable versions of a stage, oldest first.
	Versions(stage string) ([]*Manifest, error)
	// Unreadable returns a Problem for each directory of a stage that is
	// not a readable version (its manifest missing or damaged), so that
	// what lists versions can name those it leaves out.
	Unreadable(stage string) ([]Problem, error)
	// Manifest returns the manifest of stage@version, or an error wrapping
	// ErrNotFound when the store lacks it.
	Manifest(stage, version string) (*Manifest, error)
	// Open returns the directory, on this machine, that holds the files
	// of stage@version, ready to read.
	Open(stage, version string) (string, error)
	// Check compares a version's files with its manifest by size and
	// modification time, without reading them, and returns what is
	// certainly wrong. Files whose mtime alone changed (a copied store) are
	// re-hashed when rehash is set, and accepted from then on if their
	// bytes are the recorded ones; otherwise they are only counted in
	// touched.
	Check(m *Manifest, rehash bool) (damaged []string, touched int, err error)
}

// StoreWriter adds versions to a store: a new version is staged in a
// directory of its own and then committed whole. The runner writes what a
// stage made this way, and a remote's Fetch what it downloaded.
type StoreWriter interface {
	// Begin creates an empty staging directory for a new version of stage,
	// to be filled by the stage and then committed.
	Begin(stage, version string) (staging string, err error)
	// Commit makes a complete staging directory, manifest included, the
	// stored version stage@version, replacing any version of that name
	// without a moment where it is absent. A crash at any moment leaves
	// either the old state or the complete new version.
	Commit(staging, stage, version string) error
}

// MemoStore keeps each stage's memo: the intermediate results a stage
// keeps across runs. A running stage reads and writes its memo through the
// Memo it is given; a remote moves memo entries through it.
type MemoStore interface {
	// Memo returns the memo of a stage. Its entries are keyed with base,
	// the stage's key lines (see Memo.Get).
	Memo(stage string, base KeyInputs) *Memo
}

// StoreMaintainer is what keeps a store sound: its writer lock, the
// marking of damaged files, garbage collection and full verification.
type StoreMaintainer interface {
	// Lock takes the store's writer lock, waiting while another process
	// holds it (or failing at once with ErrStoreBusy when wait is false),
	// and then removes what interrupted writers left behind. waiting is
	// told once, with the holder's description, if the lock is busy. Run,
	// pin, unpin and gc write under it.
	Lock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error)
	// ReadLock takes the store's lock shared, for a reader that must not
	// see a writer's work half done, on a store it may not write (Lock
	// failed with ErrReadOnly): it waits, as Lock does, while a writer
	// holds the lock, and removes nothing.
	ReadLock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error)
	// Suspect records that files of a version were found damaged (by a
	// reader), so that the next Check with rehash re-hashes them and
	// reports them, and the runner rebuilds the version.
	Suspect(m *Manifest, paths []string) error
	// Prune removes every version and memo entry that keep does not hold
	// (with dryRun it only reports them), and returns what it removed.
	Prune(keep Keep, dryRun bool) ([]Removed, error)
	// Verify re-hashes every stored file, of versions and of memo entries,
	// and reports each damaged, missing or unexpected file and each
	// directory that is not a complete version or entry. It returns the
	// number of files checked.
	Verify(ctx context.Context) ([]Problem, int, error)
}

// VersionSource is a store that versions are copied out of: their files,
// checked against their manifests first, and the memo entries they list. A
// remote's Push reads one.
type VersionSource interface {
	StoreReader
	MemoStore
}

// VersionSink is a store that a pull copies versions into: it says
// whether it holds a version intact already, commits the versions it lacks
// and keeps their memo entries.
type VersionSink interface {
	StoreReader
	StoreWriter
	MemoStore
}

// Remote is a store shared between machines (package remote keeps one in
// an object store). The runner asks it for a version before running a
// stage, and gives it each version a run made; `mlsched push` and `pull`
// move versions by hand. Its blobs are verified by digest on the way in,
// so a damaged or partial object never reaches the local store.
type Remote interface {
	// Location says where the remote is, for messages.
	Location() string
	// Fetch brings stage@version, whose full key is key, from the remote
	// into st (whose lock the caller holds) and returns its manifest, or
	// nil and no error when the remote lacks it.
	Fetch(ctx context.Context, st StoreWriter, stage, version, key string) (*Manifest, error)
	// Push copies a stored version, with the memo entries it lists, to the
	// remote, unless the remote holds it already.
	Push(ctx context.Context, st VersionSource, m *Manifest) error
}

// SpaceReporter is a Store that can tell how much room it has left: the
// runner then refuses a stage whose Estimate does not fit.
type SpaceReporter interface {
	// Free returns the bytes a writer may still use in the store.
	Free() (int64, error)
}

// Keep is what gc keeps: versions by stage and version, and memo entries by
// stage and key.
type Keep struct {
	Versions map[VersionRef]bool
	Memo     map[MemoRef]bool
}

// VersionRef names a stored version.
type VersionRef struct{ Stage, Version string }

func (r VersionRef) String() string { return r.Stage + "@" + r.Version }

// MemoRef names a memo entry.
type MemoRef struct{ Stage, Key string }

// Removed describes a version or memo entry deleted by gc.
type Removed struct {
	Stage, Version string
	Bytes          int64
	// Memo is true for a memo entry (Version is then its key).
	Memo bool
}

// Problem is one damaged file, version or memo entry found by Verify.
type Problem struct {
	Stage, Version, Path string
	What                 string
	// Memo is true for a memo entry (Version is then its key).
	Memo bool
}

func (p Problem) String() string {
	if p.Stage == "" {
		return fmt.Sprintf("%s: %s", p.Path, p.What) // a file of no version
	}
	where := p.Stage + "@" + p.Version
	switch {
	case p.Version == "":
		where = "stage " + p.Stage
	case p.Memo:
		where = fmt.Sprintf("%s memo entry %s", p.Stage, p.Version)
	}
	if p.Path == "" {
		return fmt.Sprintf("%s: %s", where, p.What)
	}
	return fmt.Sprintf("%s: %s: %s", where, p.Path, p.What)
}

// Resolve finds the version of stage named by a unique prefix.
func Resolve(st StoreReader, stage, prefix string) (*Manifest, error) {
	vs, err := st.Versions(stage)
	if err != nil {
		return nil, err
	}
	var found []*Manifest
	for _, m := range vs {
		if strings.HasPrefix(m.Version, prefix) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		if bad, err := st.Unreadable(stage); err == nil {
			for _, p := range bad {
				if p.Version == "" {
					return nil, fmt.Errorf("%s@%s: the stage's folder is not readable: %s", stage, prefix, p.What)
				}
				if strings.HasPrefix(p.Version, prefix) {
					return nil, fmt.Errorf("%s@%s: version %s is not readable: %s ('mlsched verify' lists every damaged version)", stage, prefix, p.Version, p.What)
				}
			}
		}
		return nil, notFound(fmt.Sprintf("%s@%s: no such version in %s (see 'mlsched ls %s')", stage, prefix, st.Location(), stage))
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%s@%s: ambiguous version prefix (%d versions match)", stage, prefix, len(found))
}

// ConflictError is a push refused because the remote holds the version
// with another output, and the stage does not measure the machine: its
// output is a function of its key, so one of the two copies was made by
// other code than the key names (a build from another commit), or by a
// bug that makes the stage nondeterministic.
type ConflictError struct {
	Stage, Version string
	// Remote and Local are the two outputs' digests.
	Remote, Local string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("push %s@%s: conflict: the remote holds this version with output %.16s, and this store with output %.16s; "+
		"%s does not measure the machine, so its output is a function of its key, and one copy was made by other code than the key names "+
		"(a worker or machine built from another commit) or by a nondeterministic stage. Nothing was pushed. "+
		"Rebuild it with a trusted build (mlsched run --force %s): if the remote's copy is the wrong one, replace it (mlsched push --replace %s@%s). "+
		"mlsched verify --remote lists every conflict",
		e.Stage, e.Version, e.Remote, e.Local, e.Stage, e.Stage, e.Stage, e.Version)
}
