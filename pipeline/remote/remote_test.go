package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/remote/remotetest"
)

// world is a two-stage pipeline (make writes two files and a memo entry;
// use reads make's output) over a store of its own, counting how often
// each stage's code ran.
type world struct {
	t     *testing.T
	dir   string
	store *pipeline.LocalStore
	runs  map[string]*atomic.Int32
	data  string // what make writes, part of its config
	noise string // what make also writes, not in its config (a measurement)
	// measures declares make a stage that measures the machine.
	measures bool
}

func newWorld(t *testing.T, data string) *world {
	t.Helper()
	dir := t.TempDir()
	st, err := pipeline.OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, dir: dir, store: st, data: data,
		runs: map[string]*atomic.Int32{"make": {}, "use": {}}}
}

func (w *world) pipeline(rem pipeline.Remote) *pipeline.Pipeline {
	w.t.Helper()
	reg := pipeline.NewRegistry()
	must := func(err error) {
		if err != nil {
			w.t.Fatal(err)
		}
	}
	must(reg.Register(pipeline.Stage{Name: "make", Config: map[string]string{"data": w.data}, Code: "v1", Measures: w.measures,
		Run: func(ctx context.Context, env *pipeline.Env) error {
			w.runs["make"].Add(1)
			unit, err := env.Memo.Get("unit", w.data, nil, func(dir string) error {
				return os.WriteFile(filepath.Join(dir, "unit.txt"), []byte("unit of "+w.data), 0o644)
			})
			if err != nil {
				return err
			}
			b, err := os.ReadFile(filepath.Join(unit, "unit.txt"))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(env.Dir, "sub"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(env.Dir, "a.txt"), b, 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.Dir, "sub", "b.txt"), []byte(strings.Repeat(w.data, 1000)+w.noise), 0o644)
		}}))
	must(reg.Register(pipeline.Stage{Name: "use", Deps: []string{"make"}, Code: "v1",
		Run: func(ctx context.Context, env *pipeline.Env) error {
			w.runs["use"].Add(1)
			b, err := os.ReadFile(filepath.Join(env.Inputs["make"].Dir, "a.txt"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.Dir, "c.txt"), append(b, '!'), 0o644)
		}}))
	g, err := reg.Graph()
	must(err)
	return &pipeline.Pipeline{Graph: g, Store: w.store, LockPath: filepath.Join(w.dir, "pipeline.lock"), Tool: "test", Remote: rem}
}

// run runs the whole pipeline and returns each stage's outcome.
func (w *world) run(rem pipeline.Remote) map[string]pipeline.Outcome {
	w.t.Helper()
	res, err := w.pipeline(rem).Run(context.Background(), pipeline.RunOptions{Jobs: 2})
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]pipeline.Outcome{}
	for _, r := range res {
		out[r.Stage] = r.Outcome
	}
	return out
}

func (w *world) manifest(stage string) *pipeline.Manifest {
	w.t.Helper()
	vs, err := w.store.Versions(stage)
	if err != nil || len(vs) == 0 {
		w.t.Fatalf("%s: no version (%v)", stage, err)
	}
	return vs[len(vs)-1]
}

// remotes opens each kind of remote the tests run against: memblob, a
// shared directory (fileblob), and an S3 server on 127.0.0.1 (gofakes3,
// reached through s3blob as a real bucket would be).
var remotes = map[string]func(t *testing.T) *Remote{
	"mem":  func(t *testing.T) *Remote { return open(t, "mem://") },
	"file": func(t *testing.T) *Remote { return open(t, "file://"+t.TempDir()) },
	"s3":   func(t *testing.T) *Remote { return open(t, fakeS3(t, "team/mlsched")) },
}

func open(t *testing.T, u string) *Remote {
	t.Helper()
	r, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// fakeS3 starts an S3 server on 127.0.0.1 and returns the remote URL of
// prefix in its bucket, with credentials in the AWS environment.
func fakeS3(t *testing.T, prefix string) string {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	return remotetest.S3(t, "shared", prefix)
}

func TestPushFetchAcrossStores(t *testing.T) {
	for kind, mk := range remotes {
		t.Run(kind, func(t *testing.T) {
			rem := mk(t)
			a := newWorld(t, "x")
			if got := a.run(rem); got["make"] != pipeline.Ran || got["use"] != pipeline.Ran {
				t.Fatalf("first machine: %v, want both ran", got)
			}
			// A second machine with the same config fetches both versions
			// and runs nothing.
			b := newWorld(t, "x")
			if got := b.run(rem); got["make"] != pipeline.Fetched || got["use"] != pipeline.Fetched {
				t.Fatalf("second machine: %v, want both fetched", got)
			}
			if n := b.runs["make"].Load() + b.runs["use"].Load(); n != 0 {
				t.Errorf("second machine ran stage code %d times", n)
			}
			for _, stage := range []string{"make", "use"} {
				ma, mb := a.manifest(stage), b.manifest(stage)
				if ma.Output != mb.Output || ma.Key != mb.Key {
					t.Errorf("%s: fetched output %s key %s, made %s %s", stage, mb.Output, mb.Key, ma.Output, ma.Key)
				}
				if bad, touched, err := b.store.Check(mb, false); err != nil || len(bad) > 0 || touched != 0 {
					t.Errorf("%s: fetched version checks as damaged %v, touched %d, %v", stage, bad, touched, err)
				}
			}
			if probs, _, err := b.store.Verify(context.Background()); err != nil || len(probs) > 0 {
				t.Errorf("verify after fetch: %v %v", probs, err)
			}
			// The rerun there is cached, and a third config runs.
			if got := b.run(rem); got["make"] != pipeline.Cached {
				t.Errorf("rerun: %v, want cached", got)
			}
			c := newWorld(t, "y")
			if got := c.run(rem); got["make"] != pipeline.Ran {
				t.Errorf("other config: %v, want ran", got)
			}
		})
	}
}

func TestPushUploadsOnlyMissingBlobs(t *testing.T) {
	ctx := context.Background()
	rem := open(t, "mem://")
	a := newWorld(t, "x")
	a.run(nil)
	m := a.manifest("make")
	st, err := rem.PushVersion(ctx, a.store, m)
	if err != nil {
		t.Fatal(err)
	}
	// Two version files and the memo entry's file, whose bytes are also
	// a.txt's: three files, two distinct blobs.
	if st.Blobs != 2 || st.Present != 0 || st.Existed {
		t.Errorf("first push: %+v, want 2 blobs uploaded", st)
	}
	st, err = rem.PushVersion(ctx, a.store, m)
	if err != nil {
		t.Fatal(err)
	}
	if st.Blobs != 0 || st.Present != 2 || !st.Existed {
		t.Errorf("second push: %+v, want nothing uploaded", st)
	}
	missing, err := rem.Missing(ctx, []string{m.Files[0].SHA256, strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 1 || missing[0] != strings.Repeat("ab", 32) {
		t.Errorf("Missing = %v, want only the unknown digest", missing)
	}
}

func TestPullBringsMemoEntries(t *testing.T) {
	ctx := context.Background()
	rem := open(t, "mem://")
	a := newWorld(t, "x")
	a.run(rem)
	m := a.manifest("make")
	if len(m.Memo) != 1 {
		t.Fatalf("make used %d memo entries, want 1", len(m.Memo))
	}
	b := newWorld(t, "x")
	unlock, err := b.store.Lock(ctx, "test", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, st, err := rem.Pull(ctx, b.store, "make", m.Version); err != nil || st.Files != 2 || st.Present {
		t.Fatalf("pull: %+v %v, want 2 files downloaded", st, err)
	}
	if _, st, err := rem.Pull(ctx, b.store, "make", m.Version); err != nil || !st.Present || st.Files != 0 {
		t.Errorf("second pull: %+v %v, want present", st, err)
	}
	unlock()
	if _, _, _, err := b.store.Memo("make", pipeline.KeyInputs{}).Entry(m.Memo[0]); err != nil {
		t.Errorf("memo entry not pulled: %v", err)
	}
	if probs, n, err := b.store.Verify(ctx); err != nil || len(probs) > 0 || n != 3 {
		t.Errorf("verify after pull: %v, %d files, %v", probs, n, err)
	}
}

// TestFetchRefusesDamage checks that a damaged, partial or missing blob
// is never used: the fetch fails naming the object, and the local store is
// left without the version (and without staging debris).
func TestFetchRefusesDamage(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(b *blob.Bucket, key string) error
		want   string
	}{
		{"flipped byte", func(b *blob.Bucket, key string) error {
			data, err := b.ReadAll(ctx, key)
			if err != nil {
				return err
			}
			data[len(data)/2] ^= 1
			return b.WriteAll(ctx, key, data, nil)
		}, "is damaged"},
		{"truncated", func(b *blob.Bucket, key string) error {
			data, err := b.ReadAll(ctx, key)
			if err != nil {
				return err
			}
			return b.WriteAll(ctx, key, data[:len(data)/2], nil)
		}, "is damaged"},
		{"longer", func(b *blob.Bucket, key string) error {
			data, err := b.ReadAll(ctx, key)
			if err != nil {
				return err
			}
			return b.WriteAll(ctx, key, append(data, 'x'), nil)
		}, "is damaged"},
		{"deleted", func(b *blob.Bucket, key string) error { return b.Delete(ctx, key) }, "is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rem := open(t, "mem://")
			a := newWorld(t, "x")
			a.run(rem)
			m := a.manifest("make")
			var big pipeline.File
			for _, f := range m.Files {
				if f.Size > big.Size {
					big = f
				}
			}
			if err := c.damage(rem.bucket, casKey(big.SHA256)); err != nil {
				t.Fatal(err)
			}
			b := newWorld(t, "x")
			_, err := b.pipeline(rem).Run(ctx, pipeline.RunOptions{Jobs: 1, Targets: []string{"make"}})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), casKey(big.SHA256)) {
				t.Fatalf("run over a remote with a %s blob: %v, want an error naming %s as %q", c.name, err, casKey(big.SHA256), c.want)
			}
			if _, err := b.store.Manifest("make", m.Version); !errors.Is(err, pipeline.ErrNotFound) {
				t.Errorf("the local store has the version after a failed fetch: %v", err)
			}
			left, _ := filepath.Glob(filepath.Join(b.dir, "data", ".tmp", "*", "*"))
			if len(left) > 0 {
				t.Errorf("staging left behind: %v", left)
			}
		})
	}
}

// TestRemoteManifestIsACommitRecord checks that the first writer of a
// version wins. A second writer with other output for a stage that
// measures the machine (a measurement taken on another machine) leaves the
// remote's version alone and is told so; for any other stage the push is
// a conflict that names both outputs, fails, and changes nothing, and a
// run whose push conflicts fails.
func TestRemoteManifestIsACommitRecord(t *testing.T) {
	for _, measures := range []bool{true, false} {
		t.Run(fmt.Sprintf("measures=%v", measures), func(t *testing.T) {
			ctx := context.Background()
			rem := open(t, "mem://")
			a := newWorld(t, "x")
			a.measures = measures
			a.run(rem)
			ma := a.manifest("make")
			if ma.Measured != measures {
				t.Errorf("manifest says measured %v, want %v", ma.Measured, measures)
			}

			// The same output pushed again uploads nothing and changes nothing.
			st, err := rem.PushVersion(ctx, a.store, ma)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Existed || st.Other != "" || st.Blobs != 0 {
				t.Errorf("same output pushed twice: %+v, want existed, nothing uploaded", st)
			}

			// b makes the same version (same key) with other bytes, as a
			// measurement on another machine, or a build from other code,
			// would.
			b := newWorld(t, "x")
			b.measures = measures
			b.noise = "made elsewhere"
			b.run(nil)
			mb := b.manifest("make")
			if mb.Version != ma.Version || mb.Output == ma.Output {
				t.Fatalf("b's make: version %s output %s; a's %s %s: want the same version, other output", mb.Version, mb.Output, ma.Version, ma.Output)
			}
			st, err = rem.PushVersion(ctx, b.store, mb)
			if measures {
				if err != nil || !st.Existed || st.Other != ma.Output || st.Blobs != 0 {
					t.Errorf("other measurement pushed: %+v, %v; want existed with the remote's output %s, nothing uploaded", st, err, ma.Output)
				}
			} else {
				var conflict *pipeline.ConflictError
				if !errors.As(err, &conflict) || conflict.Remote != ma.Output || conflict.Local != mb.Output || st.Blobs != 0 {
					t.Errorf("other output of a deterministic stage pushed: %+v, %v; want a conflict naming %.16s and %.16s, nothing uploaded", st, err, ma.Output, mb.Output)
				}
				for _, want := range []string{"push make@" + ma.Version + ": conflict", ma.Output[:16], mb.Output[:16], "mlsched verify --remote"} {
					if err != nil && !strings.Contains(err.Error(), want) {
						t.Errorf("conflict %q does not say %q", err, want)
					}
				}
				// A run that makes the other output fails at its push.
				d := newWorld(t, "x")
				d.noise = "made elsewhere"
				_, err := d.pipeline(&pushOnly{rem}).Run(ctx, pipeline.RunOptions{Jobs: 1})
				if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "stored make@"+ma.Version+" here: push") {
					t.Errorf("a run whose push conflicts: %v, want the conflict", err)
				}
			}
			got, err := rem.manifest(ctx, "make", ma.Version)
			if err != nil || got.Output != ma.Output || !got.Created.Equal(ma.Created) {
				t.Errorf("the remote's manifest changed: %+v %v", got, err)
			}
			// A third machine gets the first writer's version.
			c := newWorld(t, "x")
			c.run(rem)
			if got := c.manifest("make").Output; got != ma.Output {
				t.Errorf("fetched output %s, want the first writer's %s", got, ma.Output)
			}
		})
	}
}

// pushOnly is a remote a run pushes to but never fetches from, as a run
// on a machine that ran the stage itself would.
type pushOnly struct{ *Remote }

func (p *pushOnly) Fetch(context.Context, pipeline.StoreWriter, string, string, string) (*pipeline.Manifest, error) {
	return nil, nil
}

func TestOpenRefusesBadURLs(t *testing.T) {
	cases := []struct{ url, want string }{
		{"s3://AKIAEXAMPLE:secret@bucket/x", "carries credentials"},
		{"gs://bucket", "unknown scheme"},
		{"file://relative/dir", "file:///absolute/path"},
		{"s3://bucket/p?prefix=q/", "not both"},
		{"::", "missing protocol scheme"},
	}
	for _, c := range cases {
		_, err := Open(context.Background(), c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v, want %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error shows the secret: %v", c.url, err)
		}
	}
}

// TestCreateNeverOverwrites checks, on every kind of remote, the
// conditional write that manifests rely on: the second writer of a key
// learns that it exists and the first writer's bytes stay.
func TestCreateNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	for kind, mk := range remotes {
		t.Run(kind, func(t *testing.T) {
			rem := mk(t)
			key := versionKey("make", "0123456789abcdef")
			if ok, err := rem.create(ctx, key, []byte("first")); !ok || err != nil {
				t.Fatalf("first create: %v %v", ok, err)
			}
			if ok, err := rem.create(ctx, key, []byte("second")); ok || err != nil {
				t.Fatalf("second create: %v %v, want false and no error", ok, err)
			}
			if got, err := rem.bucket.ReadAll(ctx, key); err != nil || string(got) != "first" {
				t.Errorf("object holds %q (%v), want the first writer's", got, err)
			}
		})
	}
}

// TestS3KeepsEverythingUnderThePrefix checks that an s3://bucket/prefix
// remote writes nowhere else in the bucket.
func TestS3KeepsEverythingUnderThePrefix(t *testing.T) {
	ctx := context.Background()
	u := fakeS3(t, "team/mlsched")
	rem := open(t, u)
	newWorld(t, "x").run(rem)
	whole := open(t, strings.Replace(u, "/team/mlsched?", "?", 1))
	it := whole.bucket.List(nil)
	n := 0
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			break
		}
		n++
		if !strings.HasPrefix(obj.Key, "team/mlsched/") {
			t.Errorf("object %s outside the prefix", obj.Key)
		}
	}
	// Three blobs (make's a.txt has its memo entry's bytes, stored once),
	// two version manifests and a memo entry's manifest.
	if n != 6 {
		t.Errorf("%d objects in the bucket, want 6", n)
	}
}

// TestCheckReachesTheRemote checks that Check passes on every kind of
// remote that answers, and fails, saying what to check, on an S3 endpoint
// where nothing listens.
func TestCheckReachesTheRemote(t *testing.T) {
	for name, open := range remotes {
		t.Run(name, func(t *testing.T) {
			if err := open(t).Check(context.Background()); err != nil {
				t.Errorf("Check = %v", err)
			}
		})
	}
	t.Run("nothing listens", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		fakeS3(t, "x") // for its AWS environment
		r := open(t, "s3://team/x?endpoint=http://"+addr+"&region=us-east-1&use_path_style=true&disable_https=true")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := r.Check(ctx); err == nil || !strings.Contains(err.Error(), "does not answer a read") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Errorf("Check = %v, want it to say the remote does not answer, and what to check", err)
		}
	})
}
