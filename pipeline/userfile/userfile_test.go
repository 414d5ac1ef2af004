package userfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok.csv")
	if err := os.WriteFile(regular, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, make([]byte, 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.csv")
	if f, err := os.Create(sparse); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(1 << 40) // a terabyte that takes no space
		f.Close()
	}
	tests := []struct {
		path  string
		limit int64
		want  string // "" for success
		cause error
	}{
		{regular, 100, "", nil},
		{regular, -1, "", nil},
		{fifo, 100, "open " + fifo + ": a named pipe (FIFO), not a regular file", ErrNotRegular},
		{zero, 100, "open " + zero + ": a symlink to /dev/zero, a character device, not a regular file", ErrNotRegular},
		{"/dev/null", 100, "open /dev/null: a character device, not a regular file", ErrNotRegular},
		{dir, 100, "open " + dir + ": a directory, not a regular file", ErrNotRegular},
		{big, 1000, "open " + big + ": 2.0 KiB, more than the 1000 B this input may hold", ErrTooLarge},
		{sparse, 1 << 20, "open " + sparse + ": 1 TiB, more than the 1 MiB this input may hold", ErrTooLarge},
		{filepath.Join(dir, "missing.csv"), 100, "no such file or directory", os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				defer close(done)
				b, err = ReadFile(tt.path, tt.limit)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadFile(%s) still blocked after 5s", tt.path)
			}
			if tt.want == "" {
				if err != nil || string(b) != "a,b\n" {
					t.Fatalf("ReadFile(%s) = %q, %v", tt.path, b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.cause) {
				t.Fatalf("ReadFile(%s) = %v, want an error containing %q wrapping %v", tt.path, err, tt.want, tt.cause)
			}
		})
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{
		{dir, ""},
		{filepath.Join(dir, "new", "store"), ""},
		{file, "open " + file + ": a regular file, not a directory"},
		{filepath.Join(file, "store"), "open " + file + ": a regular file, not a directory"},
		{"/dev/null/data", "open /dev/null: a character device, not a directory"},
	} {
		err := CheckDir(tt.path)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want || !errors.Is(err, ErrNotDir)) {
			t.Errorf("CheckDir(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 20: "1 MiB", 5 << 30: "5 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
