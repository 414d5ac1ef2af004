// Package devservers starts, on 127.0.0.1, the two servers a distributed
// mlsched run needs, for trying one out and for the tests that prove it:
// the Temporal dev server (`temporal server start-dev`, its state in a
// SQLite file) and versitygw (an S3 server over a directory, where a
// bucket is a folder). `mlsched dev-servers` and `make test-distributed`
// start them through this one piece of code, so that the flags the tests
// prove are the flags a newcomer gets.
//
// They are no deployment: the dev server is one process with no
// replication, and versitygw here serves one machine's disk. A team's
// deployment has an S3 bucket and a Temporal cluster of its own
// (docs/deployment.md).
//
// Each server is started in a process group of its own, so that Ctrl-C in
// a terminal reaches only the program that started it, which then stops
// both in order (Stop); on Linux the kernel kills both with SIGKILL if
// that program dies without stopping them, even by kill -9.
package devservers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// ErrPortInUse is returned by Start when a port it was given is taken.
var ErrPortInUse = errors.New("port in use")

// Region is the S3 region versitygw answers for (its default).
const Region = "us-east-1"

// How long Start waits for each server to answer, and Stop for each to
// end after SIGTERM before it kills it.
const (
	temporalReady = time.Minute
	s3Ready       = 30 * time.Second
	stopGrace     = 10 * time.Second
)

// Config says which programs to start, where they keep their state, and
// on which ports of 127.0.0.1 they listen.
type Config struct {
	// Temporal and Versitygw are the servers' programs (make
	// distributed-tools builds both into .tools/bin).
	Temporal, Versitygw string
	// Dir holds the servers' state and logs: temporal.db, s3/<bucket>/,
	// temporal.log and versitygw.log. It is made where missing and kept
	// between starts: a server started again finds what it held.
	Dir string
	// Bucket is the S3 bucket, a folder under Dir/s3 made before the
	// server starts.
	Bucket string
	// AccessKey and SecretKey are the S3 server's root credentials, which
	// clients give in the AWS environment (Servers.Env).
	AccessKey, SecretKey string
	// TemporalPort is Temporal's frontend (gRPC), UIPort its web UI and
	// S3Port versitygw's; 0 picks a free port.
	TemporalPort, UIPort, S3Port int
	// UI serves Temporal's web UI; without it the server is headless.
	UI bool
}

// Servers are the two servers, started and answering.
type Servers struct {
	// Temporal is the frontend's address (host:port), for --temporal.
	Temporal string
	// UI is the web UI's URL; empty without one.
	UI string
	// S3Endpoint is versitygw's URL, the remote URL's endpoint.
	S3Endpoint string
	// Bucket, AccessKey and SecretKey are the Config's.
	Bucket, AccessKey, SecretKey string
	// TemporalLog and S3Log are the servers' output.
	TemporalLog, S3Log string

	procs []*server
	// exited receives the first server that ends on its own.
	exited chan *server
}

// NewCredentials makes a random access key and secret for the S3 server.
func NewCredentials() (key, secret string) {
	return "mlsched-dev-" + randomHex(4), randomHex(20)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Start starts both servers and returns once both answer: Temporal's
// health check and an HTTP response from versitygw. Whatever fails, it
// leaves nothing running; a server that ends before it answers is named
// with the end of its log.
func Start(ctx context.Context, c Config) (_ *Servers, err error) {
	if c.AccessKey == "" || c.SecretKey == "" {
		return nil, errors.New("devservers: the S3 server needs an access key and a secret")
	}
	if c.Bucket == "" {
		return nil, errors.New("devservers: no bucket")
	}
	for _, p := range []string{c.Temporal, c.Versitygw} {
		if _, err := os.Stat(p); err != nil {
			return nil, err
		}
	}
	s3root := filepath.Join(c.Dir, "s3")
	// The bucket is the folder; versitygw serves what is there.
	if err := os.MkdirAll(filepath.Join(s3root, c.Bucket), 0o700); err != nil {
		return nil, err
	}
	tport, sport, uport, hport, mport := c.TemporalPort, c.S3Port, c.UIPort, 0, 0
	// Temporal's HTTP API and its metrics get free ports, on 127.0.0.1
	// too (--ip).
	want := []wantPort{{"Temporal", &tport}, {"S3", &sport}, {"Temporal's HTTP API", &hport}, {"Temporal's metrics", &mport}}
	if c.UI {
		want = append(want, wantPort{"Temporal's web UI", &uport})
	}
	if err := reserve(want); err != nil {
		return nil, err
	}
	s := &Servers{
		Temporal:    net.JoinHostPort("127.0.0.1", strconv.Itoa(tport)),
		S3Endpoint:  "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(sport)),
		Bucket:      c.Bucket,
		AccessKey:   c.AccessKey,
		SecretKey:   c.SecretKey,
		TemporalLog: filepath.Join(c.Dir, "temporal.log"),
		S3Log:       filepath.Join(c.Dir, "versitygw.log"),
		exited:      make(chan *server, 2),
	}
	targs := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(tport),
		"--http-port", strconv.Itoa(hport), "--metrics-port", strconv.Itoa(mport),
		"--log-level", "error", "--db-filename", filepath.Join(c.Dir, "temporal.db")}
	if c.UI {
		s.UI = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(uport))
		targs = append(targs, "--ui-port", strconv.Itoa(uport))
	} else {
		targs = append(targs, "--headless")
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	// HOME is the state folder, so that no settings file of the user's
	// (~/.config/temporalio) changes how the server starts.
	if err := s.start("temporal", s.TemporalLog, []string{"HOME=" + c.Dir}, c.Temporal, targs...); err != nil {
		return nil, err
	}
	if err := s.start("versitygw", s.S3Log,
		[]string{"ROOT_ACCESS_KEY_ID=" + c.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + c.SecretKey},
		c.Versitygw, "--port", net.JoinHostPort("127.0.0.1", strconv.Itoa(sport)), "--quiet", "posix", s3root); err != nil {
		return nil, err
	}
	if err := s.waitFor(ctx, s.procs[0], temporalReady, s.temporalAnswers); err != nil {
		return nil, err
	}
	if err := s.waitFor(ctx, s.procs[1], s3Ready, s.s3Answers); err != nil {
		return nil, err
	}
	return s, nil
}

// wantPort is a port to reserve: a given one, or 0 for a free one.
type wantPort struct {
	what string
	port *int
}

// reserve checks that each given port is free on 127.0.0.1 and sets each
// 0 to a free one, holding every port until all are picked, so that no two
// are the same. A server may still lose a port to another program between
// this check and its start; it then ends, and Start names it with its log.
func reserve(want []wantPort) error {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for _, w := range want {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*w.port)))
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s: 127.0.0.1:%d: %w", w.what, *w.port, ErrPortInUse)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.what, err)
		}
		held = append(held, l)
		*w.port = l.Addr().(*net.TCPAddr).Port
	}
	return nil
}

// RemoteURL is the mlsched remote (the config's remote:, or --remote)
// under prefix in the bucket: plain HTTP, path-style, as versitygw serves.
// It carries no credential: clients take those from the environment.
func (s *Servers) RemoteURL(prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s&use_path_style=true&disable_https=true",
		s.Bucket, prefix, s.S3Endpoint, Region)
}

// Env is the AWS environment that reaches the S3 server.
func (s *Servers) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// Wait returns when ctx ends (nil) or a server ends on its own (an error
// naming it, with the end of its log).
func (s *Servers) Wait(ctx context.Context) error {
	select {
	case p := <-s.exited:
		return p.ended()
	case <-ctx.Done():
		return nil
	}
}

// Stop ends both servers: SIGTERM, then SIGKILL for one still running
// after 10 s. It returns once both have ended, with an error naming each
// that had to be killed.
func (s *Servers) Stop() error {
	errs := make(chan error, len(s.procs))
	for _, p := range s.procs {
		go func() { errs <- p.stop() }()
	}
	var all []error
	for range s.procs {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// temporalAnswers asks Temporal's frontend for its health.
func (s *Servers) temporalAnswers(ctx context.Context) error {
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Temporal,
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}

// s3Answers takes any HTTP response from versitygw (an anonymous request
// is refused, which is an answer).
func (s *Servers) s3Answers(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.S3Endpoint+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// waitFor polls answers every 100 ms, each try for at most 2 s, until it
// succeeds, p ends, ctx ends or within passes.
func (s *Servers) waitFor(ctx context.Context, p *server, within time.Duration, answers func(context.Context) error) error {
	deadline := time.Now().Add(within)
	for {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := answers(try)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.ended()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer after %s: %w (its log, %s:\n%s)", p.name, within, err, p.log, p.tail())
		}
	}
}

// server is one running server process.
type server struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{} // closed once it ended
	err       error         // how it ended, once done
}

// start starts a server with env added to this process's environment,
// its output in log.
func (s *Servers) start(name, log string, env []string, path string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close() // the child holds its own copy
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &server{name: name, log: log, cmd: cmd, done: make(chan struct{})}
	s.procs = append(s.procs, p)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
		s.exited <- p
	}()
	return nil
}

// stop sends SIGTERM, then SIGKILL after stopGrace.
func (p *server) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not end within %s of SIGTERM: killed", p.name, stopGrace)
}

// ended says how a server that ended did, with the end of its log.
func (p *server) ended() error {
	how := "exited"
	if p.err != nil {
		how = p.err.Error()
	}
	return fmt.Errorf("%s ended (%s); its log, %s:\n%s", p.name, how, p.log, p.tail())
}

// tail is the last lines of the server's log.
func (p *server) tail() string {
	b, _ := os.ReadFile(p.log)
	const n = 3000
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}
