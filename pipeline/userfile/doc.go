// Package userfile opens the files a user names (a config file, an
// imported profile, a shared library, a store directory) refusing, before a
// byte is read, anything that is not what the tool expects.
//
// Only the name is the user's choice, and a name can point anywhere: at a
// named pipe, where opening blocks until a writer comes and may never
// return; at /dev/zero or /dev/urandom, which never end; at a directory; or
// at a sparse file a terabyte long. Each of those hung the tool or filled
// its memory. So every such path is checked first with stat (following
// symbolic links) and must be a regular file (or, for CheckDir, a
// directory); Open then opens it without blocking, checks that the file it
// got is the one it checked, and bounds how much may be read.
//
// Errors are *fs.PathError values naming the path, whose Err says what the
// path is and what was wanted, for example
//
//	open /tmp/zero.csv: a symlink to /dev/zero, a character device, not a regular file
//	open big.csv: 1.2 GiB, more than the 256 MiB this input may hold
//
// and wrap ErrNotRegular, ErrNotDir or ErrTooLarge for errors.Is.
package userfile
