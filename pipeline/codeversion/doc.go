// Package codeversion derives a stage's code version from the Go source that
// builds it, so that the runner's cache key changes exactly when the code
// that produces an artifact changes.
//
// A code version (a "fingerprint") is the hex SHA-256 of a list of
// "key value" lines, one per influence, in the spirit of the go command's
// action IDs. For a package P of this module the lines are, in order:
//
//	mlsched codeversion v1              schema salt; bump it when this list changes
//	package <dir of P>                  the package being fingerprinted
//	go <version>                        the go directive of go.mod (language semantics)
//	pkg <dir>                           for P and every package of this module in P's
//	                                    transitive import closure, sorted by dir, followed by:
//	gofile <path> <sha256>                each non-test Go file (Go and cgo files), see below
//	file <path> <sha256>                  each other compiled file (.c, .h, .s, .syso, ...)
//	embed <path> <sha256>                 each file embedded with //go:embed, raw bytes
//	module <path>@<version>             every other module in the closure, sorted by path;
//	                                    " => <path>@<version>" follows when it is replaced,
//	                                    " => local go<version>" when replaced by a directory
//
// Paths are relative to the module root and slash-separated, so the result
// does not depend on where the module is checked out, on the working directory
// or on GOPATH. The file set is the one `go list -deps` selects for the
// current GOOS, GOARCH and build tags: _test.go files and files excluded by
// build constraints take no part. The standard library and the Go toolchain
// version are not hashed (they belong to the machine, and hashing them would
// make the committed fingerprints differ between developers); the go
// directive of go.mod is hashed because it selects language semantics.
//
// A Go file is not hashed as bytes but as its token stream, so that comments
// and layout do not matter while any change the compiler can see does:
//
//   - ordinary comments are dropped, but compiler directives are kept in
//     place (//go:noinline, //go:embed, //go:linkname, //line, //export, ...;
//     not //go:build, whose effect is the file set, nor //go:generate), as is
//     the cgo preamble above import "C";
//   - explicit and automatically inserted semicolons are the same token;
//   - a semicolon or comma right before ')' or '}' is dropped, because the
//     language makes it optional there (it only appears or disappears when a
//     list is split across lines or joined).
//
// Re-printing the comment-free AST with go/printer would look simpler but is
// not layout-independent: the printer keeps line breaks and blank lines from
// the source positions, so deleting a full-line comment between two
// statements, or joining two lines, would change the printed text. The token
// stream carries no positions. Files are still parsed with go/parser, so that
// a syntax error is reported instead of fingerprinted.
//
// A module replaced by a local directory has no version that changes with
// its code, so its packages are hashed file by file like this module's
// (paths are then "<module path>/<path in module>").
//
// Setting MLSCHED_DEBUG_CODEVERSION=1 prints every hashed line to standard
// error, prefixed with "codeversion[<dir>]: ", and then the fingerprint as
// "codeversion[<dir>] = <hex>". That is how to find out why a fingerprint
// changed: diff the output of two runs. File bodies appear only as their
// digests.
package codeversion
