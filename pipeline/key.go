package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/pipeline/config"
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

// keySchema starts every stage key; bump it when the key's recipe changes.
const keySchema = "mlsched stage key v1"

// upstreamsOf lists the upstream artifacts of s as they enter its key:
// each one's output digest, or the digest of the files s reads of it
// (Stage.Reads).
func upstreamsOf(s *Stage, ms []*Manifest) ([]Upstream, error) {
	out := make([]Upstream, len(ms))
	for i, m := range ms {
		out[i] = Upstream{Stage: m.Stage, Version: m.Version, Output: m.Output}
		if _, ok := s.Reads[m.Stage]; ok {
			files, err := readsOf(s, m)
			if err != nil {
				return nil, err
			}
			out[i].Output = OutputDigest(files).String()
		}
	}
	slices.SortFunc(out, func(a, b Upstream) int { return strings.Compare(a.Stage, b.Stage) })
	return out, nil
}

// readsOf returns the files of m that s reads: all of them, unless
// Stage.Reads lists some.
func readsOf(s *Stage, m *Manifest) ([]File, error) {
	names, ok := s.Reads[m.Stage]
	if !ok {
		return m.Files, nil
	}
	files := make([]File, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == n })
		if i < 0 {
			return nil, fmt.Errorf("stage %s reads %s from %s@%s, which has no such file: %w", s.Name, n, m.Stage, m.Version, ErrNotFound)
		}
		files = append(files, m.Files[i])
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// key computes a stage's cache key: the stage name, its code version and
// salt, its config section in canonical form, the global seed if the stage
// uses it, the files outside the store and the stored versions (Refs) it
// reads, and the output digest of every upstream artifact. Upstream
// *outputs*, not versions, enter the key, so an upstream that reran but
// produced the same content leaves this key unchanged (early cutoff),
// unless the stage shows its upstreams' versions (ShowsUpstreams).
// keyFrom is the key of s made from its upstreams' stored versions ms,
// in s's order (upstreamsOf, then key).
func (p *Pipeline) keyFrom(s *Stage, ms []*Manifest) (ID, KeyInputs, error) {
	ups, err := upstreamsOf(s, ms)
	if err != nil {
		return ID{}, KeyInputs{}, err
	}
	return p.key(s, ups)
}

func (p *Pipeline) key(s *Stage, ups []Upstream) (ID, KeyInputs, error) {
	in, err := p.ownInputs(s)
	if err != nil {
		return ID{}, KeyInputs{}, err
	}
	in.Upstream, in.UpstreamVersions = ups, s.ShowsUpstreams
	h := newKeyHash(keySchema, "stage "+s.Name)
	in.write(h)
	return h.sum(), in, nil
}

// ownInputs is what enters a stage's key besides its upstreams.
func (p *Pipeline) ownInputs(s *Stage) (KeyInputs, error) {
	cfg, err := canonicalConfig(s.Config)
	if err != nil {
		return KeyInputs{}, fmt.Errorf("canonical config: %w", err)
	}
	in := KeyInputs{Code: s.Code, Salt: s.Salt, Config: cfg, Extern: s.Extern}
	if s.UsesSeed {
		seed := p.Seed
		in.Seed = &seed
	}
	for _, r := range s.Refs {
		ri, err := p.resolveRef(r)
		if err != nil {
			return KeyInputs{}, err
		}
		in.Refs = append(in.Refs, ri)
	}
	return in, nil
}

// resolveRef finds the version and file a Ref names.
func (p *Pipeline) resolveRef(r Ref) (RefInput, error) {
	m, err := Resolve(p.Store, r.Stage, r.Version)
	if err != nil {
		return RefInput{}, fmt.Errorf("%s: %w", r.Key, err)
	}
	i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == r.File })
	if i < 0 {
		return RefInput{}, fmt.Errorf("%s: %s@%s has no %s: %w", r.Key, m.Stage, m.Version, r.File, ErrNotFound)
	}
	return RefInput{Key: r.Key, Stage: m.Stage, Version: m.Version, File: r.File, Content: m.Files[i].Content}, nil
}

// CheckRefs resolves the Refs of the named stages (all of them when names
// is empty), so that a reference the store cannot provide is reported
// before anything runs.
func (p *Pipeline) CheckRefs(names []string) error {
	if len(names) == 0 {
		names = p.Graph.Names()
	}
	var errs []error
	for _, n := range names {
		for _, r := range p.Graph.Stage(n).Refs {
			if _, err := p.resolveRef(r); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func canonicalConfig(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return config.Canonical(v)
}
