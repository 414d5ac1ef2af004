package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s as Markdown inline text that renders as s, whatever s
// holds: a name from the config, a string from an artifact or an imported
// file. Every section writer passes such strings through it (or through
// Code or Fence); only the report's own words are written as Markdown.
//
// It writes the HTML specials < > & as entities, so that no viewer, strict
// CommonMark or not, meets a tag or an entity; | as the entity &#124;, so
// that a table row keeps its columns; a backslash before each of
// \ ` * [ ] ~ # (code spans, emphasis, links, strikethrough, headings);
// _ likewise, except between two ASCII letters or digits, where no
// Markdown reads it as emphasis ("round_robin" stays as it is); a space
// for every control character, newlines included, so that a string never
// ends a table row or a paragraph; and U+FFFD for each run of invalid
// UTF-8.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '|':
			b.WriteString("&#124;")
		case r == '_':
			if i > 0 && i+1 < len(s) && alnum(s[i-1]) && alnum(s[i+1]) {
				b.WriteByte('_')
			} else {
				b.WriteString(`\_`)
			}
		case strings.ContainsRune("\\`*[]~#", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsControl(r):
			b.WriteByte(' ')
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether Escape would change s: the common case, a
// plain name, costs no allocation.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= utf8.RuneSelf || strings.IndexByte("&<>|_\\`*[]~#", c) >= 0 {
			return true
		}
	}
	return false
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Code returns s as an inline code span that shows s verbatim: its fence
// is one backtick longer than the longest run of backticks in s, padded
// with a space when s starts or ends with a backtick or a space (which
// CommonMark strips, unless s is all spaces). Newlines and other control characters become
// spaces. In a table, the table's writer escapes any | in it.
func Code(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s == "" {
		return fence + " " + fence
	}
	if strings.Trim(s, " ") != "" && (s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ') {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Fence returns body as a fenced code block with the given info string
// (a language such as "yaml", or ""), shown verbatim: the fence is at
// least three backticks and longer than any run of backticks in body, so
// no line of body can close it. The block ends with a newline.
func Fence(info, body string) string {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	body = strings.ToValidUTF8(body, "\uFFFD")
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return fence + info + "\n" + body + fence + "\n"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
