//go:build !linux

package pipeline

import "os"

// stampOf is what the publish index records of a copy's stat. Where the
// system's stat is not Linux's, it records size and mtime alone: a copy
// whose bytes changed with its mtime set back is then seen by verify, not
// by a run.
func stampOf(fi os.FileInfo) copyStamp {
	return copyStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
}
