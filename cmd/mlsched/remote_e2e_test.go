package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/remote/remotetest"
)

// s3Server starts an S3 server on 127.0.0.1 and returns the remote URL
// of a prefix in its bucket.
func s3Server(t *testing.T) string { return remotetest.S3(t, "team", "mlsched") }

// awsEnv is the standard AWS environment the remote's credentials come
// from, with a secret the tests look for where it must never appear.
func awsEnv(t *testing.T) []string {
	none := filepath.Join(t.TempDir(), "none")
	return []string{"AWS_ACCESS_KEY_ID=team-key", "AWS_SECRET_ACCESS_KEY=" + testSecret,
		"AWS_CONFIG_FILE=" + none, "AWS_SHARED_CREDENTIALS_FILE=" + none}
}

const testSecret = "s3cr3t-never-shown"

// TestRemoteSharesVersionsBetweenMachines runs the real CLI as three
// machines sharing one S3 remote: the first computes and pushes, the
// second's run fetches everything and computes nothing, the third pulls
// and its run is then cached. Every machine ends with the same outputs,
// byte for byte, and the secret appears in no output and no stored file.
func TestRemoteSharesVersionsBetweenMachines(t *testing.T) {
	url := s3Server(t)
	machine := func() *project { return remoteMachine(t, url) }
	a := machine()
	out := a.mustCLI("run")
	for stage, o := range outcomes(out) {
		if o != "ran" {
			t.Errorf("first machine: %s %s, want ran", stage, o)
		}
	}
	// Each push is a line under its stage's: what it moved.
	if moved(out, "pushed  ") != "evaluate generate profile schedule train" {
		t.Errorf("first machine's run: want a line under each stage's saying what its push moved\n%s", out)
	}
	if out := a.mustCLI("push"); strings.Count(out, "present ") != 5 {
		t.Errorf("push after a run pushed everything:\n%s\nwant 5 lines 'present'", out)
	}

	b := machine()
	out = b.mustCLI("run")
	for stage, o := range outcomes(out) {
		if o != "fetched" {
			t.Errorf("second machine: %s %s, want fetched", stage, o)
		}
	}
	if moved(out, "fetched ") != "evaluate generate profile schedule train" {
		t.Errorf("second machine's run: want a line under each stage's saying what its fetch moved\n%s", out)
	}
	b.mustCLI("verify")

	c := machine()
	out = c.mustCLI("pull")
	if n := strings.Count(out, "pulled "); n != 5 {
		t.Errorf("pull on a fresh machine:\n%s\nwant 5 lines 'pulled'", out)
	}
	for stage, o := range outcomes(c.mustCLI("run")) {
		if o != "cached" {
			t.Errorf("run after pull: %s %s, want cached", stage, o)
		}
	}
	if out := c.mustCLI("pull", "schedule"); !strings.HasPrefix(out, "present schedule@") {
		t.Errorf("pulling what is here: %q, want present", out)
	}

	want := lockOutputs(t, a)
	for name, p := range map[string]*project{"fetched": b, "pulled": c} {
		if got := lockOutputs(t, p); got != want {
			t.Errorf("%s machine's pipeline.lock outputs differ:\n%s\nwant\n%s", name, got, want)
		}
		report, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
		wantReport, _ := os.ReadFile(filepath.Join(a.dir, "reports", "report.md"))
		if err != nil || string(report) != string(wantReport) {
			t.Errorf("%s machine's published report differs from the first's (%v)", name, err)
		}
	}
	for _, p := range []*project{a, b, c} {
		filepath.Walk(p.dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				if b, _ := os.ReadFile(path); strings.Contains(string(b), testSecret) {
					t.Errorf("%s holds the secret", path)
				}
			}
			return nil
		})
	}
}

// moveLine is a line of run's output under a stage's, saying what a push
// or fetch of its version moved.
var moveLine = regexp.MustCompile(`^(  (?:pushed  |fetched ))(\w+)@([0-9a-f]{16})  \d+ file\(s\), \S+ \S+ in \S+`)

// moved lists, sorted, the stages that a run's output says were pushed
// or fetched (how says which), each in a line right under its stage's
// line, at the stage's version.
func moved(out, how string) string {
	var stages []string
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		m := moveLine.FindStringSubmatch(line)
		if m == nil || m[1] != "  "+how || i == 0 {
			continue
		}
		// The stage's line is the nearest above that is not indented.
		above := i - 1
		for above > 0 && strings.HasPrefix(lines[above], "  ") {
			above--
		}
		if f := strings.Fields(lines[above]); len(f) < 3 || f[0] != m[2] || !strings.HasPrefix(m[3], f[2]) {
			continue
		}
		stages = append(stages, m[2])
	}
	slices.Sort(stages)
	return strings.Join(stages, " ")
}

// TestRemoteOutOfReach checks that a run whose remote cannot be reached
// fails, rather than going on without the team's store, with an error
// that names the flag that runs without it, and that the flag does.
func TestRemoteOutOfReach(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.env = append(awsEnv(t), "MLSCHED_REMOTE="+remotetest.Unreachable(t, "team", "mlsched"))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "(to run without the remote, fetching and pushing nothing, add --no-remote)"},
		{[]string{"run", "--executor", "temporal", "--temporal", "127.0.0.1:1"}, "to run here without it, use --executor local --no-remote"},
	}
	for _, c := range cases {
		out, errs, code := p.cli(c.args...)
		if code != 1 || !strings.Contains(errs, "fetch from the remote s3://team/mlsched") || !strings.Contains(errs, c.want) || strings.Contains(out, " ran ") {
			t.Errorf("mlsched %s with the remote down: exit %d\n%s%s\nwant exit 1, nothing run, naming %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
	out := p.mustCLI("run", "--no-remote")
	for stage, o := range outcomes(out) {
		if o != "ran" {
			t.Errorf("run --no-remote: %s %s, want ran", stage, o)
		}
	}
}

// remoteMachine is a project on tiny.yaml whose remote is url, with the
// AWS environment that reaches it: one machine of a team.
func remoteMachine(t *testing.T, url string) *project {
	p := newProject(t, "tiny.yaml")
	p.env = append(awsEnv(t), "MLSCHED_REMOTE="+url)
	return p
}

// lockOutputs is each stage's output digest in pipeline.lock, one per line.
func lockOutputs(t *testing.T, p *project) string { return lockField(t, p, "output") }

// lockField is each stage's field of that name in pipeline.lock, one per
// line.
func lockField(t *testing.T, p *project, field string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"`+field+`"`) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.Join(lines, "\n")
}

func TestRemoteBadInput(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.env = awsEnv(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--set", "remote=s3://AKIA:" + testSecret + "@team/x", "status"}, 2, "remote"},
		{[]string{"--set", "remote=ftp://host/x", "status"}, 2, "unknown scheme"},
		{[]string{"push"}, 2, "no remote"},
		{[]string{"pull", "nosuch"}, 2, `unknown stage "nosuch"`},
		{[]string{"pull", "generat"}, 2, `unknown stage "generat" (did you mean generate?)`},
	}
	for _, c := range cases {
		out, errs, code := p.cli(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("mlsched %s: exit %d, stderr %q; want exit %d naming %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
		if strings.Contains(out+errs, testSecret) {
			t.Errorf("mlsched %s shows the secret: %s%s", strings.Join(c.args, " "), out, errs)
		}
	}
}

// TestLeanBuildHandsOver checks the lean build (bin/mlsched): it runs a
// pipeline without a remote itself, and hands a config with a remote, and
// the commands that need one, to mlsched-dist beside it.
func TestLeanBuildHandsOver(t *testing.T) {
	url := s3Server(t)
	p := newProject(t, "tiny.yaml")
	p.env = awsEnv(t)
	if _, errs, code := p.cliOf(leanBin, "run"); code != 0 {
		t.Fatalf("lean run: exit %d\n%s", code, errs)
	}
	if out, errs, code := p.cliOf(leanBin, "run"); code != 0 || outcomes(out)["evaluate"] != "cached" {
		t.Fatalf("lean run: exit %d\n%s%s", code, out, errs)
	}
	p.env = append(p.env, "MLSCHED_REMOTE="+url)
	if out, errs, code := p.cliOf(leanBin, "push"); code != 0 || strings.Count(out, "pushed ") != 5 {
		t.Errorf("lean push: exit %d\n%s%s", code, out, errs)
	}
	q := newProject(t, "tiny.yaml")
	q.env = p.env
	if out, errs, code := q.cliOf(leanBin, "run", "--no-push"); code != 0 || outcomes(out)["schedule"] != "fetched" {
		t.Errorf("lean run with a remote: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := q.cliOf(leanBin, "worker", "--help"); code != 0 || !strings.Contains(out, "--concurrency") {
		t.Errorf("lean worker --help: exit %d\n%s%s", code, out, errs)
	}
}

// forgeOutput gives stage's stored version in p other output, its manifest
// made to match: what a machine built from other code than the key names
// stores under that key.
func forgeOutput(t *testing.T, p *project, stage string) (version, output string) {
	t.Helper()
	mpath := p.only("data/" + stage + "/*/" + pipeline.ManifestName)
	dir := filepath.Dir(mpath)
	version = filepath.Base(dir)
	b, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.ParseManifest(b, mpath, stage, version)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(dir, "zz-other-code.txt")
	if err := os.WriteFile(extra, []byte("built from another commit\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	d, err := digest.File(extra)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(extra)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = append(m.Files, pipeline.File{Path: "zz-other-code.txt", Size: d.Size, SHA256: d.SHA256, Content: d.Content, Rows: d.Rows, ModTime: fi.ModTime().UnixNano()})
	m.Output = pipeline.OutputDigest(m.Files).String()
	b, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mpath, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mpath, b, 0o444); err != nil {
		t.Fatal(err)
	}
	return version, m.Output
}

// TestPushRefusesAConflict runs two machines sharing a remote, the second
// holding a version of generate with other output than the first pushed
// (as a machine built from other code would). Its push names both outputs,
// pushes the rest and fails; verify --remote finds the conflict on it and
// none on the first machine; the remote keeps the first machine's output.
func TestPushRefusesAConflict(t *testing.T) {
	url := s3Server(t)
	machine := func() *project { return remoteMachine(t, url) }
	a, b := machine(), machine()
	a.mustCLI("run")
	b.mustCLI("run", "--no-remote")
	version, forged := forgeOutput(t, b, "generate")
	want := stageOutputs(t, a.read("pipeline.lock"))["generate"]

	out, errs, code := b.cli("push")
	if code != 1 || !strings.Contains(out, "CONFLICT generate@"+version+"  the remote's output "+want[:16]+", here "+forged[:16]) ||
		!strings.Contains(errs, "conflict") || strings.Count(out, "present ") != 4 {
		t.Errorf("push of a conflicting version: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1, the conflict named with both outputs, the other 4 versions present", code, out, errs)
	}
	out, errs, code = b.cli("verify", "--remote")
	if code != 1 || !strings.Contains(out, "CONFLICT generate@"+version) || !strings.Contains(errs, "1 of the 5 version(s)") {
		t.Errorf("verify --remote where a version conflicts: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if out := a.mustCLI("verify", "--remote"); !strings.Contains(out, "which holds 5 of them: no conflict") {
		t.Errorf("verify --remote on the first machine:\n%s", out)
	}
	// A third machine fetches the first machine's output.
	c := machine()
	c.mustCLI("run")
	if got := stageOutputs(t, c.read("pipeline.lock"))["generate"]; got != want {
		t.Errorf("fetched generate output %s, want the first machine's %s", got, want)
	}
	// Had b's copy been the right one, --replace puts it in the remote's
	// place: then the first machine's copy is the one that conflicts.
	if out := b.mustCLI("push", "--replace", "generate@"+version); !strings.Contains(out, "replaced generate@"+version+"  the remote's output "+want[:16]+" with this store's "+forged[:16]) {
		t.Errorf("push --replace:\n%s", out)
	}
	if out := b.mustCLI("verify", "--remote"); !strings.Contains(out, "no conflict") {
		t.Errorf("verify --remote after --replace:\n%s", out)
	}
	if out, _, code := a.cli("verify", "--remote"); code != 1 || !strings.Contains(out, "CONFLICT generate@"+version) {
		t.Errorf("verify --remote on the first machine after b's --replace: exit %d\n%s", code, out)
	}
}
