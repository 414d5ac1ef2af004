// Package remote keeps a copy of a pipeline's store in an object store
// shared between machines (S3 or anything S3-compatible, through
// gocloud.dev/blob; a shared file system through fileblob), so that people
// and CI machines reuse each other's versions rather than compute them
// again. DVC's remotes and Bazel's remote cache are the models.
//
// # Layout
//
// Under the remote's prefix:
//
//	cas/sha256/<aa>/<digest>                  a file's bytes, named by their sha256
//	versions/<stage>/<version>/manifest.json  a version: its manifest, as stored locally
//	memo/<stage>/<key>/manifest.json          a memo entry's manifest
//	records/<name>                            a small record of a distributed run (which result a stage's activity stored)
//
// A manifest is the commit record. Push uploads every blob a version needs
// first (after asking, shard by shard, which the remote lacks), and its
// manifest last, with IfNotExist: a manifest never names a missing blob,
// and two writers of the same version never overwrite each other (the
// second learns what the first stored). Fetch reads a manifest, downloads
// each blob into the local store's staging directory while hashing it, and
// commits the version only when every file has its recorded size and
// digest: a damaged or partial object is never used.
//
// # Credentials
//
// The remote is named by a URL (s3://bucket/prefix?endpoint=…&region=…
// &use_path_style=true, or file:///path). Credentials come from the
// standard AWS environment variables and files, never from the URL: a URL
// that carries a user or password is refused, so none can reach a
// manifest, a log or an error.
package remote

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// remotes
	_ "gocloud.dev/blob/memblob"  // mem:// remotes, for tests
	_ "gocloud.dev/blob/s3blob"   // s3:// remotes
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remoteurl"
	"github.com/mlsched/mlsched/pipeline/storefile"
	"github.com/mlsched/mlsched/pipeline/userfile"
)

// Object names under the remote's prefix.
const (
	casPrefix      = "cas/sha256/"
	versionsPrefix = "versions/"
	memoPrefix     = "memo/"
	recordsPrefix  = "records/"
)

// maxManifest bounds a manifest read from the remote.
const maxManifest = 64 << 20

// transfers bounds the uploads or downloads in flight at once.
const transfers = 8

// Remote is an object store holding versions and memo entries.
type Remote struct {
	bucket *blob.Bucket
	where  string
	// dir is the folder of a file:// remote ("" for another kind), where
	// a push removes the temporary files of killed uploads (see
	// removeDeadTemps).
	dir string
	// s3 names the bucket and prefix of an s3:// remote (nil for another
	// kind), whose unfinished multipart uploads a push aborts (see
	// abortStaleUploads); now is the clock that ages them.
	s3  *s3Place
	now func() time.Time
}

var _ pipeline.Remote = (*Remote)(nil)

// Open opens the remote a URL names: s3://bucket/prefix?… (the path is the
// prefix under which everything is kept), file:///dir, or mem:// (in this
// process, for tests). Opening reaches no server.
func Open(ctx context.Context, rawURL string) (*Remote, error) {
	u, err := remoteurl.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	where := u.Redacted()
	r := &Remote{where: where, now: time.Now}
	switch u.Scheme {
	case "s3":
		// s3://bucket/prefix: gocloud takes the prefix as a parameter.
		q := u.Query()
		r.s3 = &s3Place{bucket: u.Host, prefix: q.Get("prefix")}
		if prefix := strings.Trim(u.Path, "/"); prefix != "" {
			q.Set("prefix", prefix+"/")
			r.s3.prefix = prefix + "/"
		}
		u.Path, u.RawPath, u.RawQuery = "", "", q.Encode()
	case "file":
		if err := os.MkdirAll(u.Path, 0o755); err != nil {
			return nil, fmt.Errorf("remote %s: %w", where, err)
		}
		// Each object is written to a temporary file beside it and
		// renamed into place, never staged in $TMPDIR: a remote on
		// another file system (a shared NFS folder) could not be
		// renamed into, and a killed upload's file there was never
		// removed (see removeDeadTemps).
		q := u.Query()
		q.Set("no_tmp_dir", "true")
		u.RawQuery = q.Encode()
		r.dir = u.Path
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", where, err)
	}
	r.bucket = b
	return r, nil
}

// Check reaches the remote once, asking for one object's attributes, so
// that bad credentials, a missing bucket or a server that does not answer
// show before any work depends on the remote.
func (r *Remote) Check(ctx context.Context) error {
	if _, err := r.bucket.Exists(ctx, recordsPrefix+"check"); err != nil {
		return fmt.Errorf("remote %s does not answer a read: %w (check its address and the credentials in the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)", r.where, err)
	}
	return nil
}

// Location implements pipeline.Remote.
func (r *Remote) Location() string { return r.where }

// Close releases the remote's connections.
func (r *Remote) Close() error { return r.bucket.Close() }

func casKey(sha string) string { return casPrefix + sha[:2] + "/" + sha }
func versionKey(stage, v string) string {
	return versionsPrefix + stage + "/" + v + "/" + pipeline.ManifestName
}
func memoKey(stage, key string) string {
	return memoPrefix + stage + "/" + key + "/" + pipeline.ManifestName
}

// PushStats says what a push moved.
type PushStats struct {
	// Blobs and Bytes count the files uploaded; Present those the remote
	// already held.
	Blobs, Present int
	Bytes          int64
	// Existed says the remote already held the version's manifest.
	Existed bool
	// Other is set when the remote holds this version of a stage that
	// measures the machine with another output (Manifest.Measured: a
	// measurement taken elsewhere): the remote's is kept.
	Other string
}

// differs decides what a remote manifest with other output than the local
// one means: a measurement taken elsewhere (either says it measured the
// machine), kept as it is, or a conflict.
func differs(local, theirs *pipeline.Manifest) (PushStats, error) {
	if local.Measured || theirs.Measured {
		return PushStats{Existed: true, Other: theirs.Output}, nil
	}
	return PushStats{Existed: true}, &pipeline.ConflictError{Stage: local.Stage, Version: local.Version, Remote: theirs.Output, Local: local.Output}
}

// Push implements pipeline.Remote: it uploads stage@version from st, and
// the memo entries its run used, unless the remote has them.
func (r *Remote) Push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) error {
	_, err := r.PushVersion(ctx, st, m)
	return err
}

// PushVersion uploads a stored version and the memo entries its manifest
// lists: the blobs the remote lacks, then the memo entries' manifests, then
// the version's manifest. A version whose local files do not match their
// manifest is refused.
func (r *Remote) PushVersion(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) (PushStats, error) {
	return r.push(ctx, st, m, false)
}

// ReplaceVersion pushes a version as PushVersion does, but where the
// remote holds it with other output, this store's replaces the remote's
// (stats.Other names the output replaced): the way out of a conflict once
// a trusted build has shown which copy is right.
func (r *Remote) ReplaceVersion(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest) (PushStats, error) {
	return r.push(ctx, st, m, true)
}

func (r *Remote) push(ctx context.Context, st pipeline.VersionSource, m *pipeline.Manifest, replace bool) (PushStats, error) {
	var stats PushStats
	name := m.Stage + "@" + m.Version
	if bad, _, err := st.Check(m, true); err != nil {
		return stats, fmt.Errorf("push %s: %w", name, err)
	} else if len(bad) > 0 {
		return stats, fmt.Errorf("push %s: the local copy is damaged (%s); run 'mlsched run --force %s' to rebuild it", name, strings.Join(bad, "; "), m.Stage)
	}
	dir, err := st.Open(m.Stage, m.Version)
	if err != nil {
		return stats, fmt.Errorf("push %s: %w", name, err)
	}
	manifest, err := storefile.ReadFile(filepath.Join(dir, pipeline.ManifestName))
	if err != nil {
		return stats, fmt.Errorf("push %s: %w", name, err)
	}
	// Whether the remote holds the version already decides nothing by
	// itself: its blobs may have been lost; but a remote version with
	// other output is kept, and nothing is uploaded for it, unless this
	// push replaces it.
	replacing := false
	if theirs, err := r.manifest(ctx, m.Stage, m.Version); err == nil {
		stats.Existed = true
		if theirs.Output != m.Output && !replace {
			return differs(m, theirs)
		}
		if theirs.Output != m.Output {
			replacing, stats.Other = true, theirs.Output
		}
	} else if !errors.Is(err, pipeline.ErrNotFound) {
		return stats, fmt.Errorf("push %s: %w", name, err)
	}
	uploads := map[string]string{} // sha256 -> local path
	for _, f := range m.Files {
		uploads[f.SHA256] = filepath.Join(dir, filepath.FromSlash(f.Path))
	}
	type entry struct {
		key      string
		manifest []byte
	}
	var entries []entry
	memo := st.Memo(m.Stage, pipeline.KeyInputs{})
	for _, key := range m.Memo {
		edir, files, raw, err := memo.Entry(key)
		if errors.Is(err, pipeline.ErrNotFound) {
			continue // gc'd, or never built here: nothing to share
		}
		if err != nil {
			return stats, fmt.Errorf("push %s: %w", name, err)
		}
		for _, f := range files {
			uploads[f.SHA256] = filepath.Join(edir, filepath.FromSlash(f.Path))
		}
		entries = append(entries, entry{key, raw})
	}
	n, bytes, present, err := r.upload(ctx, uploads)
	stats.Blobs, stats.Bytes, stats.Present = n, bytes, present
	if err != nil {
		return stats, fmt.Errorf("push %s: %w", name, err)
	}
	for _, e := range entries {
		if _, err := r.create(ctx, memoKey(m.Stage, e.key), e.manifest); err != nil {
			return stats, fmt.Errorf("push %s: memo entry %.16s: %w", name, e.key, err)
		}
	}
	if replacing {
		// The manifest goes last, as for a new version: the remote never
		// names a file it does not hold.
		if err := r.bucket.WriteAll(ctx, versionKey(m.Stage, m.Version), manifest, &blob.WriterOptions{ContentType: "application/json", BeforeWrite: holdTemp}); err != nil {
			return stats, fmt.Errorf("push %s: replace the remote's manifest: %w", name, err)
		}
		return stats, nil
	}
	if stats.Existed {
		return stats, nil
	}
	created, err := r.create(ctx, versionKey(m.Stage, m.Version), manifest)
	if err != nil {
		return stats, fmt.Errorf("push %s: %w", name, err)
	}
	if !created {
		// Another writer committed it meanwhile.
		stats.Existed = true
		if theirs, err := r.manifest(ctx, m.Stage, m.Version); err == nil && theirs.Output != m.Output {
			st, err := differs(m, theirs)
			st.Blobs, st.Bytes, st.Present = stats.Blobs, stats.Bytes, stats.Present
			return st, err
		}
	}
	return stats, nil
}

// create writes an object that must not exist yet; it reports false when
// one does (the first writer's stays).
func (r *Remote) create(ctx context.Context, key string, data []byte) (bool, error) {
	if err := r.removeDeadTemps(path.Dir(key), func(name string) bool { return name == path.Base(key) }); err != nil {
		return false, err
	}
	err := r.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json", BeforeWrite: holdTemp})
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", key, err)
	}
	return true, nil
}

// Missing returns the digests, of those given, that the remote has no blob
// for. It asks in one batch: one listing per shard (cas/sha256/<aa>/) that
// the digests fall in, rather than a request per blob.
func (r *Remote) Missing(ctx context.Context, digests []string) ([]string, error) {
	shards := map[string][]string{}
	for _, d := range digests {
		shards[d[:2]] = append(shards[d[:2]], d)
	}
	var (
		mu      sync.Mutex
		missing []string
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for shard, want := range shards {
		g.Go(func() error {
			have := map[string]bool{}
			it := r.bucket.List(&blob.ListOptions{Prefix: casPrefix + shard + "/"})
			for {
				obj, err := it.Next(gctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					return fmt.Errorf("list %s%s/: %w", casPrefix, shard, err)
				}
				have[path.Base(obj.Key)] = true
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range want {
				if !have[d] {
					missing = append(missing, d)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.Sort(missing)
	return slices.Compact(missing), nil
}

// upload sends the blobs the remote lacks, of those given (sha256 to local
// path), and returns how many it sent, their bytes, and how many the remote
// already had.
func (r *Remote) upload(ctx context.Context, files map[string]string) (n int, size int64, present int, err error) {
	digests := make([]string, 0, len(files))
	for d := range files {
		digests = append(digests, d)
	}
	missing, err := r.Missing(ctx, digests)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := r.clean(ctx, missing); err != nil {
		return 0, 0, 0, err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for _, d := range missing {
		g.Go(func() error {
			written, err := r.uploadBlob(gctx, d, files[d])
			if err != nil {
				return err
			}
			mu.Lock()
			n, size = n+1, size+written
			mu.Unlock()
			return nil
		})
	}
	err = g.Wait()
	return n, size, len(digests) - len(missing), err
}

// uploadBlob uploads one file under its digest. The bytes sent are hashed
// on the way: a file that changed since its digest was taken aborts the
// write (the object is never created), and the object store checks the
// MD5 of what it received.
func (r *Remote) uploadBlob(ctx context.Context, sha, local string) (int64, error) {
	// A file outside the store (an imported profile a distributed run
	// uploads) may be a link; a named pipe in any file's place must not
	// block the upload.
	f, _, err := userfile.Open(local, -1)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sum := md5.New()
	if _, err := io.Copy(sum, f); err != nil {
		return 0, fmt.Errorf("read %s: %w", local, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := r.bucket.NewWriter(wctx, casKey(sha), &blob.WriterOptions{ContentMD5: sum.Sum(nil), ContentType: "application/octet-stream", BeforeWrite: holdTemp})
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", local, err)
	}
	h := sha256.New()
	written, err := io.Copy(io.MultiWriter(w, h), f)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != sha {
		err = fmt.Errorf("%s changed since its digest was taken", local)
	}
	if err != nil {
		cancel() // abort: the object is not created
		_ = w.Close()
		return 0, fmt.Errorf("upload %s: %w", local, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("upload %s: %w", local, err)
	}
	return written, nil
}

// manifest reads and checks the remote manifest of stage@version.
func (r *Remote) manifest(ctx context.Context, stage, version string) (*pipeline.Manifest, error) {
	_, m, err := r.readManifest(ctx, stage, version)
	return m, err
}

func (r *Remote) readManifest(ctx context.Context, stage, version string) ([]byte, *pipeline.Manifest, error) {
	key := versionKey(stage, version)
	b, err := r.readSmall(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	m, err := pipeline.ParseManifest(b, r.where+"/"+key, stage, version)
	if err != nil {
		return nil, nil, err
	}
	return b, m, nil
}

// readSmall reads a whole object of at most maxManifest bytes; a missing
// one is pipeline.ErrNotFound.
func (r *Remote) readSmall(ctx context.Context, key string) ([]byte, error) {
	rd, err := r.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("%s/%s: %w", r.where, key, pipeline.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", r.where, key, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", r.where, key, err)
	}
	if len(b) > maxManifest {
		return nil, fmt.Errorf("%s/%s: over %d bytes: not a manifest", r.where, key, maxManifest)
	}
	return b, nil
}

// Fetch implements pipeline.Remote: it brings stage@version into st when
// the remote holds it with the given key, and returns its manifest; nil
// and no error when the remote lacks it. The caller holds st's lock.
func (r *Remote) Fetch(ctx context.Context, st pipeline.StoreWriter, stage, version, key string) (*pipeline.Manifest, error) {
	raw, m, err := r.readManifest(ctx, stage, version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if key != "" && m.Key != key {
		return nil, fmt.Errorf("%s/%s: key %.16s…, not the %.16s… this run computed for %s@%s", r.where, versionKey(stage, version), m.Key, key, stage, version)
	}
	if err := r.install(ctx, st, m, raw); err != nil {
		return nil, err
	}
	return m, nil
}

// install downloads a version's files into a staging directory of st,
// checking each against the manifest, and commits it with the remote's
// manifest.
func (r *Remote) install(ctx context.Context, st pipeline.StoreWriter, m *pipeline.Manifest, raw []byte) error {
	name := m.Stage + "@" + m.Version
	staging, err := st.Begin(m.Stage, m.Version)
	if err != nil {
		return fmt.Errorf("pull %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staging)
		}
	}()
	if err := r.downloadAll(ctx, staging, m.Files); err != nil {
		return fmt.Errorf("pull %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(staging, pipeline.ManifestName), raw, 0o644); err != nil {
		return fmt.Errorf("pull %s: %w", name, err)
	}
	if err := st.Commit(staging, m.Stage, m.Version); err != nil {
		return fmt.Errorf("pull %s: commit: %w", name, err)
	}
	committed = true
	return nil
}

// downloadAll fetches files into dir, in parallel.
func (r *Remote) downloadAll(ctx context.Context, dir string, files []pipeline.File) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for _, f := range files {
		g.Go(func() error { return r.download(gctx, dir, f) })
	}
	return g.Wait()
}

// download fetches one file's blob into dir, hashing it on the way, and
// gives it the manifest's mtime, so that the local store trusts it as it
// trusts a file it wrote. A blob whose size or digest differs from the
// manifest's is refused.
func (r *Remote) download(ctx context.Context, dir string, f pipeline.File) error {
	key := casKey(f.SHA256)
	rd, err := r.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%s: blob %s/%s is missing", f.Path, r.where, key)
	}
	if err != nil {
		return fmt.Errorf("%s: read %s/%s: %w", f.Path, r.where, key, err)
	}
	defer rd.Close()
	local := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(local, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rd, f.Size+1))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: download %s/%s: %w", f.Path, r.where, key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != f.Size || got != f.SHA256 {
		return fmt.Errorf("%s: blob %s/%s is damaged: %d bytes with sha256 %.16s…, the manifest says %d bytes with %.16s…", f.Path, r.where, key, n, got, f.Size, f.SHA256)
	}
	mtime := timeOf(f.ModTime)
	return os.Chtimes(local, mtime, mtime)
}

// PullStats says what a pull moved.
type PullStats struct {
	// Files and Bytes count the version's files downloaded; zero when the
	// local store had the version intact (Present).
	Files   int
	Bytes   int64
	Present bool
}

// Pull brings stage@version, and the memo entries it lists, from the
// remote into st unless st has them intact. The caller holds st's lock.
func (r *Remote) Pull(ctx context.Context, st pipeline.VersionSink, stage, version string) (*pipeline.Manifest, PullStats, error) {
	var stats PullStats
	raw, m, err := r.readManifest(ctx, stage, version)
	if err != nil {
		return nil, stats, err
	}
	if local, err := st.Manifest(stage, version); err == nil {
		if bad, _, err := st.Check(local, true); err == nil && len(bad) == 0 {
			stats.Present = true
			if local.Output != m.Output {
				return local, stats, fmt.Errorf("pull %s@%s: this store holds it with other output (%.16s; the remote's is %.16s), a measurement taken here: kept this store's", stage, version, local.Output, m.Output)
			}
			return local, stats, r.pullMemo(ctx, st, m)
		}
	}
	if err := r.install(ctx, st, m, raw); err != nil {
		return nil, stats, err
	}
	stats.Files = len(m.Files)
	for _, f := range m.Files {
		stats.Bytes += f.Size
	}
	return m, stats, r.pullMemo(ctx, st, m)
}

// pullMemo brings the memo entries a version lists that the remote holds
// and st lacks.
func (r *Remote) pullMemo(ctx context.Context, st pipeline.MemoStore, m *pipeline.Manifest) error {
	memo := st.Memo(m.Stage, pipeline.KeyInputs{})
	for _, key := range m.Memo {
		b, err := r.readSmall(ctx, memoKey(m.Stage, key))
		if errors.Is(err, pipeline.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		files, err := pipeline.ParseMemoManifest(b, r.where+"/"+memoKey(m.Stage, key), m.Stage, key)
		if err != nil {
			return err
		}
		if err := memo.Install(key, func(dir string) error { return r.downloadAll(ctx, dir, files) }); err != nil {
			return fmt.Errorf("pull %s@%s: memo entry %.16s: %w", m.Stage, m.Version, key, err)
		}
	}
	return nil
}

// Versions lists the versions the remote holds, by stage, sorted.
func (r *Remote) Versions(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	it := r.bucket.List(&blob.ListOptions{Prefix: versionsPrefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s/%s: %w", r.where, versionsPrefix, err)
		}
		parts := strings.Split(strings.TrimPrefix(obj.Key, versionsPrefix), "/")
		if len(parts) == 3 && parts[2] == pipeline.ManifestName {
			out[parts[0]] = append(out[parts[0]], parts[1])
		}
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out, nil
}

// Has says whether the remote holds stage@version.
func (r *Remote) Has(ctx context.Context, stage, version string) (bool, error) {
	ok, err := r.bucket.Exists(ctx, versionKey(stage, version))
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.where, err)
	}
	return ok, nil
}

// timeOf is a manifest's mtime (Unix nanoseconds) as a time.
func timeOf(ns int64) time.Time { return time.Unix(0, ns) }

// PutBlob stores data under its sha256, unless the remote has it, and
// returns the digest: how small records (a stage's task, its result)
// travel between machines by digest.
func (r *Remote) PutBlob(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	d := hex.EncodeToString(sum[:])
	if ok, err := r.bucket.Exists(ctx, casKey(d)); err == nil && ok {
		return d, nil
	}
	if err := r.bucket.WriteAll(ctx, casKey(d), data, &blob.WriterOptions{BeforeWrite: holdTemp}); err != nil {
		return "", fmt.Errorf("write %s/%s: %w", r.where, casKey(d), err)
	}
	return d, nil
}

// GetBlob reads the blob of a digest, of at most limit bytes, and checks
// its bytes against the digest.
func (r *Remote) GetBlob(ctx context.Context, sha string, limit int64) ([]byte, error) {
	if !isDigest(sha) {
		return nil, fmt.Errorf("blob %q: not a sha256 digest", sha)
	}
	rd, err := r.bucket.NewReader(ctx, casKey(sha), nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("blob %s/%s is missing: %w", r.where, casKey(sha), pipeline.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", r.where, casKey(sha), err)
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", r.where, casKey(sha), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("blob %s/%s: over %d bytes", r.where, casKey(sha), limit)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("blob %s/%s is damaged: its bytes have another sha256", r.where, casKey(sha))
	}
	return b, nil
}

// isDigest says whether s is a sha256 in lower-case hex.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// UploadFiles sends the blobs the remote lacks of the files given (sha256
// to local path), and returns how many it sent.
func (r *Remote) UploadFiles(ctx context.Context, files map[string]string) (int, error) {
	n, _, _, err := r.upload(ctx, files)
	return n, err
}

// DownloadFiles writes the files of a manifest's list into dir from their
// blobs, checking each one's size and digest, and giving it the listed
// mtime.
func (r *Remote) DownloadFiles(ctx context.Context, dir string, files []pipeline.File) error {
	return r.downloadAll(ctx, dir, files)
}

// PushMemo uploads the memo entries of a stage that st holds, of those
// keys, with their blobs first; entries st lacks are skipped.
func (r *Remote) PushMemo(ctx context.Context, st pipeline.MemoStore, stage string, keys []string) error {
	memo := st.Memo(stage, pipeline.KeyInputs{})
	uploads := map[string]string{}
	manifests := map[string][]byte{}
	for _, key := range keys {
		dir, files, raw, err := memo.Entry(key)
		if errors.Is(err, pipeline.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, f := range files {
			uploads[f.SHA256] = filepath.Join(dir, filepath.FromSlash(f.Path))
		}
		manifests[key] = raw
	}
	if _, _, _, err := r.upload(ctx, uploads); err != nil {
		return err
	}
	for key, raw := range manifests {
		if _, err := r.create(ctx, memoKey(stage, key), raw); err != nil {
			return fmt.Errorf("memo entry %s/%.16s: %w", stage, key, err)
		}
	}
	return nil
}

// PullMemo brings the memo entries of a stage, of those keys, that the
// remote holds and st lacks. The caller holds st's lock.
func (r *Remote) PullMemo(ctx context.Context, st pipeline.MemoStore, stage string, keys []string) error {
	return r.pullMemo(ctx, st, &pipeline.Manifest{Stage: stage, Memo: keys})
}

// Create writes a small record under name (below records/ in the
// remote) unless one exists, and reports whether it did: the first
// writer's record stays.
func (r *Remote) Create(ctx context.Context, name string, data []byte) (bool, error) {
	return r.create(ctx, recordsPrefix+name, data)
}

// Record reads a record Create wrote; a missing one is
// pipeline.ErrNotFound.
func (r *Remote) Record(ctx context.Context, name string) ([]byte, error) {
	return r.readSmall(ctx, recordsPrefix+name)
}

// Difference is a version that the remote and a store both hold, with
// other output.
type Difference struct {
	Stage, Version string
	// Remote and Local are the two outputs' digests.
	Remote, Local string
	// Measured says that the stage measures the machine (either manifest
	// says so): another machine's measurement, not a conflict.
	Measured bool
}

// Compare reads the remote's manifest of each version in ms and returns
// those whose output differs from the local one, in ms's order; versions
// the remote lacks are skipped. It returns how many the remote holds.
func (r *Remote) Compare(ctx context.Context, ms []*pipeline.Manifest) (diffs []Difference, held int, err error) {
	found := make([]*Difference, len(ms))
	holds := make([]bool, len(ms))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for i, m := range ms {
		g.Go(func() error {
			theirs, err := r.manifest(gctx, m.Stage, m.Version)
			if errors.Is(err, pipeline.ErrNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("compare %s@%s: %w", m.Stage, m.Version, err)
			}
			holds[i] = true
			if theirs.Output != m.Output {
				found[i] = &Difference{Stage: m.Stage, Version: m.Version, Remote: theirs.Output, Local: m.Output,
					Measured: m.Measured || theirs.Measured}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	for i, d := range found {
		if holds[i] {
			held++
		}
		if d != nil {
			diffs = append(diffs, *d)
		}
	}
	return diffs, held, nil
}
