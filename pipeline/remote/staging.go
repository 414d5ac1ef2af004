package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"
)

// What a killed upload leaves, and who removes it.
//
// A file:// remote writes each object (fileblob, with no_tmp_dir) to a
// temporary file beside it, <name>.<hex>.tmp, and renames it into place
// once complete: in the object's own folder, so the rename never crosses
// file systems (a shared NFS folder is the main use of a file remote,
// and staging in $TMPDIR made every push to one fail), and so that a
// killed upload's file lies where the next push of that object looks.
// While it writes, the writer holds a flock on its temporary file
// (holdTemp). A push, before it uploads, removes from the folders it
// uploads into the temporary files that are dead: named as fileblob names
// them for an object that belongs there, whose flock it can take (no
// writer has it open), and not written for staleTemp (so that a writer
// between closing the file and renaming it, when it holds no flock, keeps
// it). Were a live writer's file removed all the same, its rename would
// fail and its push say so; no object is ever partial.
//
// An s3:// remote has no temporary files: the S3 client sends an object
// of up to 16 MiB in one request, which the server stores whole or not at
// all. A larger object goes in parts (a multipart upload), and the parts
// of an upload killed before it completed stay in the bucket, invisible
// and billed, until the upload is aborted; a push aborts those begun
// under the remote's cas/ more than staleUpload ago (abortStaleUploads).
// A bucket lifecycle rule (AbortIncompleteMultipartUpload) does the same
// for uploads no later push follows.

// staleTemp is how long a file remote's temporary file must have gone
// unwritten before a push may remove it.
const staleTemp = time.Minute

// staleUpload is how long ago an S3 multipart upload must have begun
// before a push aborts it: far longer than any upload of one blob takes.
const staleUpload = 24 * time.Hour

// s3Place is where an s3:// remote keeps its objects.
type s3Place struct {
	bucket string
	// prefix is the key prefix, "" or ending in "/".
	prefix string
}

// holdTemp is the BeforeWrite of every write to the remote: on a file
// remote it takes a flock on the temporary file the object is written to,
// which the writer holds until it closes the file, so that a push tells a
// live upload's file from a killed one's.
func holdTemp(as func(any) bool) error {
	var f *os.File
	if !as(&f) {
		return nil // not a file remote
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

// clean removes what killed uploads left where the blobs of these digests
// go: on a file remote, the dead temporary files of their shard folders;
// on an S3 remote, its stale multipart uploads.
func (r *Remote) clean(ctx context.Context, digests []string) error {
	if len(digests) == 0 {
		return nil
	}
	if r.s3 != nil {
		// Housekeeping a push must not fail for: credentials that may
		// upload but not list or abort uploads leave them to the
		// bucket's lifecycle rule.
		_, _ = r.abortStaleUploads(ctx)
		return nil
	}
	shards := map[string]bool{}
	for _, d := range digests {
		shards[d[:2]] = true
	}
	for shard := range shards {
		if err := r.removeDeadTemps(casPrefix+shard, isDigest); err != nil {
			return err
		}
	}
	return nil
}

// removeDeadTemps removes, from the folder of a file remote that holds
// the objects under prefix, the dead temporary files (see the top of this
// file) of objects whose names belong there (belongs). Any other remote
// has none.
func (r *Remote) removeDeadTemps(prefix string, belongs func(name string) bool) error {
	if r.dir == "" {
		return nil
	}
	dir := filepath.Join(r.dir, filepath.FromSlash(prefix))
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remote %s: %w", r.where, err)
	}
	for _, e := range ents {
		name, ok := tempOf(e.Name())
		if !ok || !belongs(name) || !e.Type().IsRegular() {
			continue
		}
		if err := removeIfDead(filepath.Join(dir, e.Name()), r.now()); err != nil {
			return fmt.Errorf("remote %s: remove a killed upload's file: %w", r.where, err)
		}
	}
	return nil
}

// tempOf parses the name fileblob gives the temporary file of the object
// name, <name>.<hex>.tmp (the hex is the time it was made, in
// nanoseconds).
func tempOf(temp string) (name string, ok bool) {
	rest, found := strings.CutSuffix(temp, ".tmp")
	i := strings.LastIndexByte(rest, '.')
	if !found || i <= 0 || i == len(rest)-1 || len(rest)-i-1 > 16 {
		return "", false
	}
	for _, c := range []byte(rest[i+1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return rest[:i], true
}

// removeIfDead removes the temporary file at path unless a writer holds
// its flock or wrote to it within staleTemp of now.
func removeIfDead(path string, now time.Time) error {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // renamed or removed by its writer meanwhile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < staleTemp {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil // a live writer holds it
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// abortStaleUploads aborts the multipart uploads of an S3 remote's blobs
// (under its cas/) that began more than staleUpload ago: what an upload
// killed before it completed leaves in the bucket. It returns how many it
// aborted.
func (r *Remote) abortStaleUploads(ctx context.Context) (int, error) {
	var client *s3.Client
	if !r.bucket.As(&client) {
		return 0, nil
	}
	aborted := 0
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(r.s3.bucket), Prefix: aws.String(r.s3.prefix + casPrefix)}
	for {
		out, err := client.ListMultipartUploads(ctx, in)
		if err != nil {
			return aborted, fmt.Errorf("remote %s: list unfinished uploads: %w", r.where, err)
		}
		for _, u := range out.Uploads {
			if u.Initiated == nil || r.now().Sub(*u.Initiated) < staleUpload {
				continue
			}
			_, err := client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: in.Bucket, Key: u.Key, UploadId: u.UploadId})
			if err != nil {
				return aborted, fmt.Errorf("remote %s: abort the unfinished upload of %s begun %s: %w", r.where, path.Base(aws.ToString(u.Key)), u.Initiated.Format(time.RFC3339), err)
			}
			aborted++
		}
		if !aws.ToBool(out.IsTruncated) {
			return aborted, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
