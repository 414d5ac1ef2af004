// Package pipeline runs a DAG of stages that read and write versioned
// artifacts, rerunning only the stages whose inputs changed. It knows
// nothing about scheduling: stages are plain values (Stage) registered in a
// Registry, validated into a Graph and run by a Pipeline over a Store.
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
//	input  <upstream stage> <upstream output digest>   (one line per upstream, sorted by stage)
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
// cutoff).
//
// # Store
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
// re-hashed once, and full re-hashing is left to Verify.
//
// A flock(2) on <store>/.lock serialises writers (run, pin, unpin, gc); the
// kernel drops it when its holder dies, so a killed process never leaves a
// lock that blocks.
//
// # Lock file
//
// pipeline.lock records, after every successful run, each stage's version,
// output digest and files, and which stages are pinned. A pinned stage is
// never rerun; its pinned version feeds downstream. A run with Locked set
// refuses to start when any version would differ from the lock file.
package pipeline
