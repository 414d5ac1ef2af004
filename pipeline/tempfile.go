package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Files outside the store (pipeline.lock, what publish copies to models/
// and reports/) and manifests are written through a temporary file beside
// them (replaceFile). A process killed meanwhile leaves that file behind;
// its name, .<name>.tmp-<pid>-<random>, says whose it is, so that a later
// writer removes it once that process is gone, and never a live one's.

// tempPattern is the os.CreateTemp pattern of the temporary file through
// which process pid writes the file name.
func tempPattern(name string, pid int) string {
	return "." + name + ".tmp-" + strconv.Itoa(pid) + "-*"
}

// tempOwner parses a tempPattern file name: the file it was to become, and
// its writer's pid.
func tempOwner(temp string) (name string, pid int, ok bool) {
	i := strings.LastIndex(temp, ".tmp-")
	if !strings.HasPrefix(temp, ".") || i < 2 {
		return "", 0, false
	}
	p, rest, found := strings.Cut(temp[i+len(".tmp-"):], "-")
	n, err := strconv.Atoi(p)
	if !found || rest == "" || err != nil || n <= 0 {
		return "", 0, false
	}
	return temp[1:i], n, true
}

// removeDeadTemps removes from dir the temporary files of the file name
// (of every file, if name is empty) whose writers no longer run. A dir that
// does not exist holds none.
func removeDeadTemps(dir, name string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		of, pid, ok := tempOwner(e.Name())
		if !ok || (name != "" && of != name) || !e.Type().IsRegular() || processAlive(pid) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove a killed writer's temporary file: %w", err)
		}
	}
	return nil
}

// processAlive reports whether process pid exists: signal 0 reaches it, or
// it belongs to another user.
func processAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
