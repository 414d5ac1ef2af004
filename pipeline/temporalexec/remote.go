package temporalexec

import (
	"context"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote"
)

// Blobs is the shared remote's content-addressed storage as a distributed
// run uses it: a stage's task and result, its output files and the files
// outside the store travel as blobs named by their sha256, each checked
// against its digest on the way in.
type Blobs interface {
	// PutBlob stores data under its sha256, unless the remote has it, and
	// returns the digest.
	PutBlob(ctx context.Context, data []byte) (string, error)
	// GetBlob reads the blob of a digest, of at most limit bytes, and
	// checks its bytes against the digest; a missing one is
	// pipeline.ErrNotFound.
	GetBlob(ctx context.Context, sha string, limit int64) ([]byte, error)
	// UploadFiles sends the blobs the remote lacks of the files given
	// (sha256 to local path), and returns how many it sent.
	UploadFiles(ctx context.Context, files map[string]string) (int, error)
	// DownloadFiles writes the files of a manifest's list into dir from
	// their blobs, checking each one's size and digest, and giving it the
	// listed mtime.
	DownloadFiles(ctx context.Context, dir string, files []pipeline.File) error
}

// DispatcherRemote is the shared remote as the coordinator's Dispatcher
// uses it: it pushes a stage's input versions, stores the stage's task,
// and brings back the output files and memo entries a worker left there.
type DispatcherRemote interface {
	Blobs
	// Push copies a stored version, with the memo entries it lists, to
	// the remote, unless the remote holds it already (pipeline.Remote's
	// Push).
	Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error
	// PullMemo brings the memo entries of a stage, of those keys, that
	// the remote holds and st lacks.
	PullMemo(ctx context.Context, st pipeline.MemoStore, stage string, keys []string) error
}

// WorkerRemote is the shared remote as a Worker uses it: it pulls a
// stage's inputs and task, pushes the memo entries and files the stage
// made, and records each stage's result once, so that a retry finds it.
type WorkerRemote interface {
	Blobs
	// Create writes a small record under name unless one exists, and
	// reports whether it did: the first writer's record stays.
	Create(ctx context.Context, name string, data []byte) (bool, error)
	// Record reads a record Create wrote; a missing one is
	// pipeline.ErrNotFound.
	Record(ctx context.Context, name string) ([]byte, error)
	// Pull brings stage@version, and the memo entries it lists, into st
	// unless st has them intact. The caller holds st's lock.
	Pull(ctx context.Context, st pipeline.VersionSink, stage, version string) (*pipeline.Manifest, remote.PullStats, error)
	// PushMemo uploads the memo entries of a stage that st holds, of
	// those keys, with their blobs first.
	PushMemo(ctx context.Context, st pipeline.MemoStore, stage string, keys []string) error
	// PullMemo brings the memo entries of a stage, of those keys, that
	// the remote holds and st lacks. The caller holds st's lock.
	PullMemo(ctx context.Context, st pipeline.MemoStore, stage string, keys []string) error
}

// An object store (package remote) is the shared remote of both sides.
var (
	_ DispatcherRemote = (*remote.Remote)(nil)
	_ WorkerRemote     = (*remote.Remote)(nil)
)
