package pipeline

import (
	"os"
	"syscall"
)

// stampOf is what the publish index records of a copy's stat: its ctime
// and inode beside its size and mtime.
func stampOf(fi os.FileInfo) copyStamp {
	st := copyStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ctime, st.Inode = sys.Ctim.Nano(), sys.Ino
	}
	return st
}
