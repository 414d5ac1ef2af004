// Package ident is the rule for names that become identifiers: names a
// user gives in the config or in an imported file that later label rows,
// directories, chart series and report tables (a device of
// schedule.cluster, the profile device its samples come from).
//
// Such a name must match Pattern: an ASCII letter or digit, then up to 63
// ASCII letters, digits, dots, underscores, colons and hyphens ("a100",
// "cuda:0", "node-7.gpu_1"). The set leaves out
// everything Markdown, HTML, YAML, a shell or a file system reads as
// syntax (| < > & ` * [ ] # / \ quotes, spaces, newlines), so a name shows
// as written wherever it goes. A new kind of name that becomes an
// identifier is checked with Check too.
package ident

import (
	"fmt"
	"regexp"
)

// Pattern is the rule every identifier matches.
const Pattern = `^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`

// Rule says Pattern in words, for error messages and docs.
const Rule = "1 to 64 ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or digit"

var re = regexp.MustCompile(Pattern)

// Valid reports whether name matches Pattern.
func Valid(name string) bool { return re.MatchString(name) }

// Check returns nil for a valid name, and otherwise an error that quotes
// the name and states the rule; the caller prefixes the key or the column.
func Check(name string) error {
	if Valid(name) {
		return nil
	}
	return fmt.Errorf("%q is not a valid name: want %s (%s)", name, Rule, Pattern)
}
