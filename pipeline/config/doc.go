// Package config loads a pipeline's YAML config into the app's own typed
// struct, strictly, and gives that struct a canonical byte form for cache
// keys.
//
// The package knows nothing about stages. The app passes a pointer to its
// config struct filled with defaults; Load overlays, in increasing
// precedence, the YAML file, environment variables and --set arguments:
//
//	cfg := app.Defaults()
//	err := config.Load(config.Options{
//		File:      "pipeline.yaml",
//		Env:       os.Environ(),
//		EnvPrefix: "MLSCHED_",
//		Sets:      sets, // from repeatable --set flags
//	}, &cfg)
//
// The file must be a regular file of at most MaxFileSize (1 MiB): a named
// pipe, a device such as /dev/zero or /dev/null, or a directory is refused
// before it is opened. It is parsed with yaml.v3 into nodes and converted
// here, in time linear in its size (yaml.v3's own decoding compares every
// pair of a mapping's keys). Layers are merged here, on the typed value,
// rather than in a koanf.Koanf, so that each error names the input it came
// from and a map can be replaced by the file yet edited entry by entry by
// an override.
//
// The app's own validation sees the merged value; Options.Origins records
// which input set each key, and Attribute names that input in the app's
// errors (an *Error with a Key and no Source):
//
//	--set schedule.load=0: schedule.load: must be in [0.001, 1000], got 0
//
// # Keys
//
// A struct field is a key only if it has a `koanf:"name"` tag; fields
// without one, or tagged `koanf:"-"`, are the app's own business. A key path
// joins names with dots: generate.eval.jobs. Keys lists every path a struct
// accepts, for documentation and for the "did you mean" in errors.
//
// In the environment, MLSCHED_GENERATE__EVAL__JOBS=2000 sets
// generate.eval.jobs: the prefix is stripped, "__" separates segments
// (because keys contain "_"), and names match case-insensitively. Map keys
// given through the environment are lower-cased; use --set for others.
// On the command line, --set generate.eval.jobs=2000.
//
// # Decoding rules
//
// Decoding is strict, and every problem is reported at once, as Errors:
//
//   - A key that names no field is an error, with a suggestion: a near
//     sibling for a typo, or the full path of a key put at the wrong level.
//   - Integers accept YAML integers, and floats that are integral and fit
//     the field (1e6 is fine, 1.5 and 300 for an int8 are not). Floats accept
//     integers but not NaN or infinity. Booleans accept only true and false.
//     Strings accept only strings: a YAML number for a string field is an
//     error, never silently turned into text.
//   - time.Duration fields take strings such as "10ms"; a bare number is an
//     error asking for a unit. Types implementing encoding.TextUnmarshaler
//     and encoding.TextMarshaler take strings. A struct implementing
//     Shorthand takes a string as well as a mapping of its keys.
//   - Nested structs merge key by key: keys the file leaves out keep their
//     defaults.
//   - Lists replace the default as a whole. In the environment and --set they
//     are comma-separated (spaces around items trimmed; an empty value is the
//     empty list).
//   - A map in the file replaces the default map as a whole, so that a user
//     can drop a default entry. In the environment and --set, a key below the
//     map (--set lanes.gpu.count=4) sets or edits that one entry and keeps the
//     others. For a map of plain values the rest of the path is the entry's
//     key, which may therefore contain dots.
//   - Pointer fields are optional: nil when absent or null. A YAML null for
//     any other field is an error.
//   - Values from the environment and --set are strings, parsed according
//     to the type of the field they reach, including fields inside map
//     values. Numbers are spelled as in the file (1000, 1e3, 1_000, 0x3e8).
//
// An empty file is a valid, empty config. A missing file, one that is not a
// regular file or is too large, a YAML syntax error
// (with its line), a --set argument without "=" and an unsupported field type
// in the struct are errors too. Load never panics, whatever the input, and
// leaves dst unchanged unless it succeeds.
//
// # Canonical form
//
// Canonical encodes a typed value as JSON that depends only on the value,
// never on how the YAML was written. It is the config's part of a stage's
// cache key, so two files that differ only in formatting, comments, key
// order, number spelling (1000, 1e3, 1_000) or in stating a default
// explicitly hash the same, and a stage reruns only when a setting really
// changed. The rules:
//
//   - objects use the koanf tag names, with keys sorted bytewise;
//   - integers are written as integers; floats in the shortest form that
//     round-trips at the field's width, with -0 written as 0;
//   - durations as time.Duration.String ("1m30s"), text types as their
//     MarshalText, Shorthand structs as their short form where they have
//     one;
//   - nil pointer fields are omitted, so absent and null are the same and
//     adding an optional field to a struct does not change existing keys
//     (a nil pointer inside a list or map is null);
//   - nil and empty maps are both {}, nil and empty lists both [];
//   - no insignificant whitespace, and no HTML escaping of strings.
//
// Flatten and Diff read canonical JSON back as "a.b.c" leaves to say which
// settings differ between two runs:
//
//	generate.eval.jobs: 1000 → 2000
package config
