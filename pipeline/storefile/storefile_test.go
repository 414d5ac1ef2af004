package storefile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// store makes, in a fresh folder, one of each kind of thing a store path
// may hold, and returns the folder.
func store(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("not the store's"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.Mkdir(filepath.Join(dir, "dir"), 0o755),
		os.Symlink(outside, filepath.Join(dir, "link")),
		os.Symlink(filepath.Dir(outside), filepath.Join(dir, "dirlink")),
		syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return dir
}

func TestOpen(t *testing.T) {
	dir := store(t)
	tests := []struct {
		name string
		want string // in the error; "" for none
	}{
		{"file", ""},
		{"link", "a symbolic link to "},
		{"fifo", "a named pipe (FIFO), not a regular file"},
		{"socket", "a socket, not a regular file"},
		{"dir", "a directory, not a regular file"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name)
		done := make(chan struct{})
		var (
			b   []byte
			err error
		)
		go func() {
			defer close(done)
			b, err = ReadFile(path)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", tt.name)
		}
		if tt.want == "" {
			if err != nil || string(b) != "bytes" {
				t.Errorf("ReadFile(%s) = %q, %v; want its bytes", tt.name, b, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), path+": "+tt.want) {
			t.Errorf("ReadFile(%s) = %v; want an error wrapping ErrForeign naming %s, %q", tt.name, err, path, tt.want)
		}
		if _, err := Check(path); err == nil || !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%s) = %v; want %q", tt.name, err, tt.want)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want a not-exist error", err)
	}
}

func TestDir(t *testing.T) {
	dir := store(t)
	tests := []struct {
		name string
		want string // in the error; "" for none
	}{
		{"dir", ""},
		{"dirlink", "a symbolic link to "},
		{"file", "a regular file, not a directory"},
		{"fifo", "a named pipe (FIFO), not a directory"},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name)
		err := Dir(path)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Dir(%s) = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), path+": "+tt.want) {
			t.Errorf("Dir(%s) = %v; want an error wrapping ErrForeign naming %s, %q", tt.name, err, path, tt.want)
		}
	}
	if err := Dir(filepath.Join(dir, "dirlink")); !strings.Contains(err.Error(), "never follows a link out of itself") {
		t.Errorf("Dir(dirlink) = %v, want it to say why a link is refused", err)
	}
}
