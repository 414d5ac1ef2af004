package remote

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"

	"github.com/mlsched/mlsched/pipeline"
)

// otherFileSystem returns a writable folder on another file system than
// $TMPDIR's, a tmpfs such as /dev/shm where there is one, or skips the
// test saying where it looked.
func otherFileSystem(t *testing.T) string {
	t.Helper()
	var tmp syscall.Stat_t
	if err := syscall.Stat(os.TempDir(), &tmp); err != nil {
		t.Fatal(err)
	}
	tried := []string{os.Getenv("MLSCHED_TEST_OTHER_FS"), "/dev/shm", "/run/shm", filepath.Join("/run/user", os.Getenv("UID"))}
	for _, dir := range tried {
		var st syscall.Stat_t
		if dir == "" || syscall.Stat(dir, &st) != nil || st.Dev == tmp.Dev {
			continue
		}
		d, err := os.MkdirTemp(dir, "mlsched-remote-test-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skipf("no writable folder on another file system than $TMPDIR (%s): tried %s; set MLSCHED_TEST_OTHER_FS to one", os.TempDir(), strings.Join(tried, ", "))
	return ""
}

// TestFileRemoteOnAnotherFileSystem: a file:// remote on another file
// system than $TMPDIR (a shared NFS folder, here a tmpfs) takes pushes and
// serves fetches; every push failed with "invalid cross-device link",
// since uploads were staged in $TMPDIR and renamed into the remote.
func TestFileRemoteOnAnotherFileSystem(t *testing.T) {
	rem := open(t, "file://"+otherFileSystem(t))
	a := newWorld(t, "x")
	if got := a.run(rem); got["make"] != pipeline.Ran || got["use"] != pipeline.Ran {
		t.Fatalf("first machine: %v, want both ran (and pushed)", got)
	}
	b := newWorld(t, "x")
	if got := b.run(rem); got["make"] != pipeline.Fetched || got["use"] != pipeline.Fetched {
		t.Fatalf("second machine: %v, want both fetched", got)
	}
}

// writerEnv, when set, makes TestKilledWriter the child process of a
// test: it uploads the file the variable names to the file remote that
// remoteEnv names, and is killed meanwhile.
const (
	writerEnv = "MLSCHED_TEST_REMOTE_WRITER"
	remoteEnv = "MLSCHED_TEST_REMOTE"
)

// TestKilledWriter is the child process of TestKilledPushLeavesNothing
// (and does nothing in a plain test run): it uploads a file, and says
// "uploading" first.
func TestKilledWriter(t *testing.T) {
	local := os.Getenv(writerEnv)
	if local == "" {
		t.Skip("the child process of TestKilledPushLeavesNothing")
	}
	r, err := Open(context.Background(), "file://"+os.Getenv(remoteEnv))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	os.Stdout.WriteString("uploading\n")
	if _, err := r.uploadBlob(context.Background(), hex.EncodeToString(sum[:]), local); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("uploaded\n")
}

// TestKilledPushLeavesNothing: an upload to a file remote killed with
// SIGKILL leaves its partial blob where the next push of that blob
// removes it, and nothing in $TMPDIR; 10 killed pushes left 26 MB of
// <sha>.<hex>.tmp files in $TMPDIR that no push ever removed.
func TestKilledPushLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	remoteDir := t.TempDir()
	local := filepath.Join(t.TempDir(), "big.bin")
	b := make([]byte, 256<<20)
	rand.Read(b)
	if err := os.WriteFile(local, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	sha := hex.EncodeToString(sum[:])
	temps := func() []string {
		var out []string
		for _, dir := range []string{tmp, remoteDir} {
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(path, ".tmp") {
					out = append(out, path)
				}
				return nil
			})
		}
		return out
	}

	killed := false
	for try := 0; try < 5 && !killed; try++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
		cmd.Env = append(os.Environ(), writerEnv+"="+local, remoteEnv+"="+remoteDir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "uploading\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the writer said %q", line)
		}
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(time.Millisecond) {
			if len(temps()) > 0 {
				killed = cmd.Process.Kill() == nil
				break
			}
		}
		cmd.Wait()
		if _, err := os.Stat(filepath.Join(remoteDir, filepath.FromSlash(casKey(sha)))); err == nil {
			killed = false // it finished first: try again
			os.RemoveAll(remoteDir)
			os.MkdirAll(remoteDir, 0o755)
		}
	}
	if !killed {
		t.Fatal("no upload was killed while it wrote: each finished first")
	}
	left := temps()
	if len(left) == 0 {
		t.Fatal("the killed upload left no temporary file: the test shows nothing")
	}
	// A killed upload's file has not been written to since it died.
	old := time.Now().Add(-time.Hour)
	for _, p := range left {
		os.Chtimes(p, old, old)
	}

	r := open(t, "file://"+remoteDir)
	if _, err := r.UploadFiles(context.Background(), map[string]string{sha: local}); err != nil {
		t.Fatal(err)
	}
	if left := temps(); len(left) > 0 {
		t.Errorf("after the next push of the blob: %v left", left)
	}
	got, err := r.GetBlob(context.Background(), sha, int64(len(b)))
	if err != nil || len(got) != len(b) {
		t.Errorf("the blob after the push: %d bytes, %v", len(got), err)
	}
}

// TestLiveUploadIsKept: a push removes no temporary file a writer still
// holds, however long ago it was written, nor one written within
// staleTemp; once its writer is gone, the next push removes it.
func TestLiveUploadIsKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := open(t, "file://"+dir)
	data := []byte("the blob's bytes")
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	local := filepath.Join(t.TempDir(), "blob")
	os.WriteFile(local, data, 0o644)

	wctx, cancel := context.WithCancel(ctx)
	w, err := r.bucket.NewWriter(wctx, casKey(sha), &blob.WriterOptions{ContentType: "application/octet-stream", BeforeWrite: holdTemp})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:4])
	temps, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(casKey(sha))+".*.tmp"))
	if len(temps) != 1 {
		t.Fatalf("a live writer's temporary files: %v, want one beside its object", temps)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(temps[0], old, old)
	if _, err := r.UploadFiles(ctx, map[string]string{sha: local}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temps[0]); err != nil {
		t.Errorf("a push removed a live writer's temporary file: %v", err)
	}
	cancel()
	w.Close()

	// A file no writer holds, written just now: a writer between closing
	// it and renaming it. It stays until it is staleTemp old.
	young := filepath.Join(dir, filepath.FromSlash(casKey(sha))+".18ec141015893e6d.tmp")
	os.WriteFile(young, data[:4], 0o644)
	os.Remove(filepath.Join(dir, filepath.FromSlash(casKey(sha))))
	if _, err := r.UploadFiles(ctx, map[string]string{sha: local}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a push removed a temporary file written just now: %v", err)
	}
	os.Chtimes(young, old, old)
	os.Remove(filepath.Join(dir, filepath.FromSlash(casKey(sha))))
	if _, err := r.UploadFiles(ctx, map[string]string{sha: local}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err == nil {
		t.Error("a push left a dead upload's temporary file")
	}
}

func TestTempOf(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	tests := []struct {
		temp, name string
		ok         bool
	}{
		{sha + ".18ec141015893e6d.tmp", sha, true},
		{"manifest.json.18ec1410c5172979.tmp", "manifest.json", true},
		{sha, "", false},
		{sha + ".tmp", "", false},
		{sha + "..tmp", "", false},
		{sha + ".18ec141015893e6dx.tmp", "", false},
		{sha + ".18EC141015893E6D.tmp", "", false},
		{sha + ".118ec141015893e6d.tmp", "", false},
		{".18ec141015893e6d.tmp", "", false},
	}
	for _, tt := range tests {
		if name, ok := tempOf(tt.temp); name != tt.name || ok != tt.ok {
			t.Errorf("tempOf(%q) = %q, %v; want %q, %v", tt.temp, name, ok, tt.name, tt.ok)
		}
	}
}

// TestStaleMultipartUploadsAreAborted: the parts of an S3 upload killed
// before it completed (a blob over 16 MiB goes in parts) stay in the
// bucket until the upload is aborted; a push aborts those of the remote's
// blobs begun more than staleUpload ago, and leaves younger ones, which
// may be live.
func TestStaleMultipartUploadsAreAborted(t *testing.T) {
	ctx := context.Background()
	r := open(t, fakeS3(t, "team/mlsched"))
	var client *s3.Client
	if !r.bucket.As(&client) {
		t.Fatal("the S3 remote has no S3 client")
	}
	killed := "team/mlsched/" + casKey(strings.Repeat("cd", 32))
	up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String(killed)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("shared"), Key: aws.String(killed), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader(strings.Repeat("x", 1<<20))}); err != nil {
		t.Fatal(err)
	}
	unfinished := func() int {
		out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("shared")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	a := newWorld(t, "x")
	a.run(nil)
	if _, err := r.PushVersion(ctx, a.store, a.manifest("make")); err != nil {
		t.Fatal(err)
	}
	if n := unfinished(); n != 1 {
		t.Errorf("a push aborted an upload begun just now: %d left, want 1", n)
	}
	r.now = func() time.Time { return time.Now().Add(staleUpload + time.Hour) }
	b := newWorld(t, "y")
	b.run(nil)
	if _, err := r.PushVersion(ctx, b.store, b.manifest("make")); err != nil {
		t.Fatal(err)
	}
	if n := unfinished(); n != 0 {
		t.Errorf("a push a day later left %d unfinished uploads, want none", n)
	}
}
