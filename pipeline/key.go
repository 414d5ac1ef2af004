package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ID is a fixed-size content hash: a stage's cache key ("everything that
// determines the output") or an output digest ("the bytes produced").
type ID [sha256.Size]byte

// String returns the ID in lower-case hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 16 hex digits of the ID, the form used for version
// directory names.
func (id ID) Short() string { return id.String()[:versionLen] }

// versionLen is the length of a version name: 64 bits of the key, enough that
// two live versions of one stage never collide.
const versionLen = 16

// debugKeys prints every hashed line to stderr, like GODEBUG=gocachehash=1
// does for the go command, to answer "why did this stage rerun?".
var debugKeys = os.Getenv("MLSCHED_DEBUG_KEY") == "1"

// keyHash accumulates "name value" lines into a SHA-256 whose first line
// names what is being hashed and the schema, so a change of scheme can never
// alias keys of the old one.
type keyHash struct {
	h    hash.Hash
	name string
	dbg  io.Writer
}

// newKeyHash starts a hash for name (for example "stage generate") under
// schema salt.
func newKeyHash(salt, name string) *keyHash {
	k := &keyHash{h: sha256.New(), name: name}
	if debugKeys {
		k.dbg = os.Stderr
	}
	k.line("schema", salt)
	k.line("name", name)
	return k
}

// line hashes one influence. Values are written on one line, newlines
// escaped, so no two different sets of lines hash the same byte stream.
func (k *keyHash) line(key, value string) {
	value = strings.ReplaceAll(value, `\`, `\\`)
	value = strings.ReplaceAll(value, "\n", `\n`)
	fmt.Fprintf(k.h, "%s %s\n", key, value)
	if k.dbg != nil {
		fmt.Fprintf(k.dbg, "HASH[%s]: %s %s\n", k.name, key, value)
	}
}

// sum returns the ID of the lines written so far.
func (k *keyHash) sum() ID {
	var id ID
	k.h.Sum(id[:0])
	if k.dbg != nil {
		fmt.Fprintf(k.dbg, "HASH[%s]: => %s\n", k.name, id)
	}
	return id
}

// write hashes the key lines of in, in the order the package doc lists
// them.
func (in *KeyInputs) write(h *keyHash) {
	h.line("code", in.Code)
	h.line("salt", in.Salt)
	h.line("config", string(in.Config))
	if in.Seed != nil {
		h.line("seed", strconv.FormatInt(*in.Seed, 10))
	}
	for _, name := range slices.Sorted(maps.Keys(in.Extern)) {
		h.line("extern", name+" "+in.Extern[name])
	}
	for _, r := range in.Refs {
		h.line("ref", r.Key+" "+r.String()+" "+r.Content)
	}
	for _, u := range in.Upstream {
		h.line("input", u.Stage+" "+u.Output)
		if in.UpstreamVersions {
			h.line("input-version", u.Stage+" "+u.Version)
		}
	}
}
