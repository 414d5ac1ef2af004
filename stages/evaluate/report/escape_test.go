package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fifo", "fifo"},
		{"round_robin", "round_robin"},
		{"edf+batch+split", "edf+batch+split"},
		{"a|b", "a&#124;b"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"AT&T &amp;", "AT&amp;T &amp;amp;"},
		{"_x_", `\_x\_`},
		{"a._b_", `a.\_b\_`},
		{"**bold** `code` [link](x) ~~gone~~ # h", `\*\*bold\*\* \` + "`" + `code\` + "`" + ` \[link\](x) \~\~gone\~\~ \# h`},
		{`back\slash`, `back\\slash`},
		{"two\nlines\r\tand a tab", "two lines  and a tab"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"Intel(R) Xeon(R) CPU @ 2.20GHz", "Intel(R) Xeon(R) CPU @ 2.20GHz"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodeAndFence(t *testing.T) {
	tests := []struct{ got, want string }{
		{Code("evaluate@0123"), "`evaluate@0123`"},
		{Code("a`b"), "``a`b``"},
		{Code("`x`"), "`` `x` ``"},
		{Code("two\nlines"), "`two lines`"},
		{Code(""), "` `"},
		{Fence("yaml", "seed: 1\n"), "```yaml\nseed: 1\n```\n"},
		{Fence("", "a\n```\nb"), "````\na\n```\nb\n````\n"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// render converts Markdown to HTML as the report does (GitHub tables).
func render(t testing.TB, md string) *html.Node {
	t.Helper()
	var buf bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(md), &buf); err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// shown is what a reader sees of s: control characters as spaces,
// invalid UTF-8 as U+FFFD.
func shown(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// checkRendered renders s escaped in a paragraph, a table cell, a code
// span and a fenced block, and checks that each shows exactly s and adds
// no element, attribute or column.
func checkRendered(t testing.TB, s string) {
	want := "a" + shown(s) + "b"
	md := "a" + Escape(s) + "b\n\n" +
		"| name | x |\n|---|---|\n| a" + Escape(s) + "b | x |\n\n" +
		"c " + Code(s) + " d\n\n" +
		Fence("", s)
	root := render(t, md)
	var elems []string
	var paras, cells []string
	var code []string
	for n := range root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		elems = append(elems, n.Data)
		switch n.Data {
		case "p":
			paras = append(paras, text(n))
		case "td":
			cells = append(cells, text(n))
		case "code":
			code = append(code, text(n))
		}
	}
	wantElems := "html head body p table thead tr th th tbody tr td td p code pre code"
	if got := strings.Join(elems, " "); got != wantElems {
		t.Fatalf("escaped %q renders elements %q, want %q\nMarkdown:\n%s", s, got, wantElems, md)
	}
	if paras[0] != want {
		t.Errorf("escaped %q shows %q in a paragraph, want %q", s, paras[0], want)
	}
	if len(cells) != 2 || cells[0] != want {
		t.Errorf("escaped %q shows cells %q, want [%q x]", s, cells, want)
	}
	// A code span shows its content with the padding space stripped and
	// no other change; a fenced block shows every line as written.
	if c := shown(s); code[0] != c && code[0] != strings.TrimSpace(c) && c != "" {
		t.Errorf("Code(%q) shows %q", s, code[0])
	}
	if fb := strings.TrimSuffix(code[1], "\n"); fb != strings.TrimSuffix(strings.ToValidUTF8(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\uFFFD"), "\n") && !strings.ContainsAny(s, "\x00\t") {
		t.Errorf("Fence(%q) shows %q", s, code[1])
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func TestEscapeRenders(t *testing.T) {
	for _, s := range escapeSeeds {
		checkRendered(t, s)
	}
}

var escapeSeeds = []string{
	"fifo", "round_robin", "a|b", "<script>alert(1)</script>", "&lt;", "&#124;", "_x_", "a._b_",
	"**b**", "`c`", "[l](u)", "![i](u)", "~~s~~", "# h", `\|`, `a\`, "two\nlines", "x  \ny",
	"<http://x>", "www.example.com", "1. item", "- item", "> quote", "---", "===", "    indent",
	"&", "a&b", "\x00", "\xff", "é", "💥", " lead", "trail ", "||", "| a | b |",
}

// FuzzEscape checks that any string, escaped, renders as itself in a
// paragraph and a table cell, and adds no element or column.
func FuzzEscape(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 200 {
			return
		}
		checkRendered(t, s)
	})
}
