package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// What mlsched prints names paths, config values and file contents that
// anyone may have chosen, and a terminal acts on the control characters
// in them: ESC starts a sequence that can recolour, clear or retitle the
// screen, CR overwrites the line, BEL rings. So every message and every
// line of output passes through escapeControl (the errors, warnings and
// waiting messages on stderr, and all of stdout through controlEscaper),
// which writes such a character as Go writes it in a quoted string
// (strconv.Quote): \x1b, \r, \u0085. The progress line mlsched draws on a
// terminal is its own and is not escaped; neither is a stage's own output.

// escapeControl returns s with each control character but newline and tab
// (C0, DEL, and the C1 controls U+0080 to U+009F), and each byte that is
// not UTF-8, written as an escape.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, needsEscape) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\a':
			b.WriteString(`\a`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\v':
			b.WriteString(`\v`)
		case needsEscape(r) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// needsEscape says whether r is a control character a terminal may act
// on: any but newline and tab.
func needsEscape(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || 0x80 <= r && r <= 0x9f
}

// controlEscaper writes what is written to it through escapeControl. A
// character split between two writes is held until the second, so that
// it is not taken for bytes that are not UTF-8; Flush writes what is held.
type controlEscaper struct {
	w    io.Writer
	held []byte
}

func (e *controlEscaper) Write(p []byte) (int, error) {
	buf := append(e.held, p...)
	// Hold an incomplete character at the end, if the bytes so far could
	// still start one.
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	e.held = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(e.w, escapeControl(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held, escaped.
func (e *controlEscaper) Flush() error {
	if len(e.held) == 0 {
		return nil
	}
	held := e.held
	e.held = nil
	_, err := io.WriteString(e.w, escapeControl(string(held)))
	return err
}
