// Package pipeline runs a DAG of stages that read and write versioned
// artifacts, rerunning only the stages whose inputs changed. It knows
// nothing about scheduling: stages are plain values (Stage) registered in a
// Registry, validated into a Graph and run by a Pipeline over a Store,
// their code executed by an Executor.
//
//	Registry ─> Graph ─> Pipeline.Run ─┬─> Store: Lock, Manifest, Check (cached? pinned?)
//	                                   ├─> Executor: Inline, or Process (a worker program)
//	                                   └─> Store: Begin, Commit; pipeline.lock
//
// # Cache keys
//
// A stage's cache key is a SHA-256 over one "name value" line per influence,
// started from a schema line ("mlsched stage key v1") and the stage's name:
//
//	schema mlsched stage key v1
//	name   stage <stage name>
//	code   <code version: fingerprint of the stage's Go package and the project packages it imports, comments and formatting ignored>
//	salt   <manual salt, usually empty>
//	config <the stage's config section as canonical JSON: keys sorted, numbers normalized, defaults filled in>
//	seed   <the global seed, only for stages that declare UsesSeed>
//	extern <file name> <sha256>   (one line per file outside the store the stage reads, sorted by name)
//	ref    <key> <stage>@<version>/<file> <content digest>   (one line per Ref, resolved)
//	input  <upstream stage> <upstream output digest>   (one line per upstream, sorted by stage)
//	input-version <upstream stage> <version>   (after each input line, for a stage that ShowsUpstreams)
//
// MLSCHED_DEBUG_KEY=1 prints every hashed line to stderr. The version of a
// stage's output is the first 16 hex digits of its key; the store keeps it in
// <store>/<stage>/<version>/.
//
// Upstream *output digests*, not upstream versions, enter the key. An output
// digest hashes the sorted list of a version's files with their content
// digests; for Parquet files the content digest leaves out the provenance
// entries of the footer (stage, version, upstream versions), so a stage that
// reran but produced the same data leaves its downstream cached (early
// cutoff). A stage whose output names its upstreams' versions (a report's
// provenance) sets ShowsUpstreams: their versions enter its key too, so a
// stored output never names a version other than those it was made from.
//
// A Ref is a stored version a stage reads besides its upstreams' current
// outputs (an earlier run to compare with): the runner resolves it in its
// own store, keys the stage on the file's content, gives it to the stage
// (Env.Ref), keeps it through gc while a version that read it is kept, and
// reports one the store lacks before anything runs (CheckRefs).
//
// # Units
//
// A stage may split its work into units (one simulation of a load sweep,
// say) and keep their results in its Memo. A unit's key is made the same
// way, from the stage's own lines with the part of the config the unit
// depends on in place of the stage's config, then the unit's own lines:
//
//	schema mlsched unit key v1
//	name   unit <stage>/<unit>
//	code, salt, seed, extern, ref, input   as above
//	config <the unit's part of the config, canonical JSON>
//	<name> <value>   (the unit's own lines)
//
// so that no input of the stage can be forgotten, a change of any of them
// reaches the unit, and a unit is named by its key wherever it runs.
//
// # Executors
//
// The runner does everything around a stage's code: the key, the staging
// directory, the inputs, the memo, the commit. Where the code runs is an
// Executor's business: Inline calls Stage.Run in this process; Process
// starts a worker program for each stage that must run, hands it the Env as
// a Task on its standard input, and reads its progress and outcome from its
// standard output (Serve is the worker's side). A program that only declares
// its stages (Stage.Run nil) and runs them in workers need not link their
// code, and a stage that crashes its process fails alone. An executor that
// holds something open across a run's stages (package temporalexec's
// Dispatcher starts a workflow) implements Finisher, and is told when the
// run is over.
//
// # Store
//
// Store is an interface: what the runner, status, pin, verify and gc ask
// of a store, and nothing more. It is made of four small ones, and a caller
// that needs less asks for less: StoreReader (list and read versions),
// StoreWriter (stage and commit one), MemoStore (the stages' memos) and
// StoreMaintainer (lock, mark damage, gc, verify). LocalStore keeps
// versions in a directory of this machine; a shared store is meant to keep
// a LocalStore as its cache, so that stage code, which only sees local
// directories, never changes.
//
// Each version directory holds the stage's files and manifest.json (stage,
// version, key, every key input including the config as used, files with
// size, digests, row counts and mtimes, creation time, duration, tool).
// Paths are relative, so a store can be moved, copied or restored from a
// backup. A stage writes into a staging directory under <store>/.tmp, and
// the runner renames it into place only after every file is digested, synced
// and the manifest written: a crash or kill -9 at any moment leaves either
// the old state or the complete new version. A cached run trusts a manifest
// while every file's size and mtime match it; files whose mtime changed are
// re-hashed once, a stage about to run re-hashes what it reads (see below),
// and full re-hashing is left to Verify.
//
// A flock(2) on <store>/.lock serialises writers (run, pin, unpin, gc); the
// kernel drops it when its holder dies, so a killed process never leaves a
// lock that blocks. Each process stages in a directory of its own,
// <store>/.tmp/run-<pid>-*, on which it holds another flock while it lives:
// a writer cleans up only the directories whose flock it can take, so even
// one that got in because .lock was deleted never removes a live run's
// staging.
//
// A memo entry carries a manifest.json of its files' digests, as a version
// does: each use re-hashes its files and uses them only while their bytes
// match it, a damaged one is computed again and the run's manifest notes
// it (MemoNote), as does the stage's report (Event.Repaired), and Verify
// re-hashes every entry.
//
// Before a stage runs, the runner re-hashes the stored files it will be
// given (its upstreams' files it reads, its references' files) and refuses
// to run it on any whose bytes differ from their manifests, naming each
// file with both digests (InputDamagedError, wrapping ErrInputDamaged) and
// marking it (Store.Suspect) for the next run to rebuild: the size and
// mtime a cached run trusts do not see a byte changed in place with its
// mtime kept. The check costs one read of what the stage reads; a run that
// finds every stage cached never makes it. When a stage fails, its inputs
// are re-hashed again, so that one damaged while it ran is named beside
// the stage's own error.
//
// A stage may estimate its output (Stage.Estimate); the runner refuses to
// start it when the estimate exceeds the store's free space
// (SpaceReporter).
//
// A run first settles, in order, every stage the store can answer for
// (pinned, or cached with its upstreams settled), and starts goroutines
// only for the stages that must run; a run that changes nothing reads
// manifests, stats files and writes nothing, not even pipeline.lock.
//
// # Lock file
//
// A config's lock file (LockPathOf: pipeline.lock for pipeline.yaml,
// other.lock for other.yaml, beside it) records, after every successful
// run, each stage's version, output digest and files, which stages are
// pinned, and the store it describes: a lock file that names another store
// is refused, and a store other than the config's keeps the config's lock
// file inside it (LockPathFor).
// Verify cross-checks the lock file against the manifests. Published files
// (Stage.Publish) are recorded with their store and digest in the folder's
// provenance.json; Verify re-hashes each, and a run, cached or not, puts
// back a copy whose bytes changed, which it tells by the ctime the publish
// index (Pipeline.PublishIndex) recorded, without reading an untouched one. A pinned stage is
// never rerun; its pinned version feeds downstream. A run with Locked set
// refuses to start when any version would differ from the lock file. The
// version commands mean when they name none is the lock file's, if the
// store has it, or else the newest stored one (Current).
//
// # Garbage collection
//
// GC keeps what every lock file of the store names (LockFiles: each
// config's beside the config and the store, and those inside the store),
// and the newest versions of each stage,
// and then, transitively, every version a kept one names as an input or a
// reference, so that a kept version's provenance never points at a
// removed one (a stage cached by early cutoff names the upstream version
// it was made from, which a later rerun of that upstream replaced in the
// lock file); and the memo entries the kept versions used. It tells what
// it is about to remove (GCOptions.Plan) before it removes anything.
package pipeline
