package codeversion

import (
	"bytes"
	"strings"
	"testing"
)

func TestCanonicalGo(t *testing.T) {
	const base = `package p

import (
	"fmt"
	"strings"
)

// F joins and prints.
func F(xs []string) {
	s := strings.Join(xs, ",")
	fmt.Println(s)
}
`
	tests := []struct {
		name  string
		other string
		same  bool
	}{
		{"identical", base, true},
		{"doc comment edited", strings.Replace(base, "joins and prints", "prints the joined list", 1), true},
		{"full-line comment removed", strings.Replace(base, "// F joins and prints.\n", "", 1), true},
		{"comment between statements", strings.Replace(base, "\tfmt.Println", "\t// print it\n\n\tfmt.Println", 1), true},
		{"block comment inside expression", strings.Replace(base, `(xs, ",")`, `(xs /* the list */, ",")`, 1), true},
		{"trailing line comment", strings.Replace(base, `",")`, `",") // comma`, 1), true},
		{"blank lines and indentation", strings.ReplaceAll(strings.ReplaceAll(base, "\n\t", "\n\n        "), "\n)", "\n\n)"), true},
		{"CRLF line endings", strings.ReplaceAll(base, "\n", "\r\n"), true},
		{"one-line body with semicolons", `package p
import ("fmt"; "strings")
func F(xs []string) { s := strings.Join(xs, ","); fmt.Println(s) }`, true},
		{"call split across lines with trailing comma", strings.Replace(base, `strings.Join(xs, ",")`, "strings.Join(\n\t\txs,\n\t\t\",\",\n\t)", 1), true},
		{"go:build constraint edited", "//go:build linux\n\n" + base, true},
		{"go:generate edited", strings.Replace(base, "// F joins", "//go:generate echo hi\n// F joins", 1), true},

		{"string literal changed", strings.Replace(base, `","`, `";"`, 1), false},
		{"raw string with the same value", strings.Replace(base, `","`, "`,`", 1), false},
		{"identifier renamed", strings.NewReplacer("s :=", "joined :=", "Println(s)", "Println(joined)").Replace(base), false},
		{"parentheses added", strings.Replace(base, "Println(s)", "Println((s))", 1), false},
		{"imports reordered", strings.Replace(base, "\"fmt\"\n\t\"strings\"", "\"strings\"\n\t\"fmt\"", 1), false},
		{"statement added", strings.Replace(base, "\tfmt.Println(s)\n", "\tfmt.Println(s)\n\tfmt.Println()\n", 1), false},
		{"go:noinline added", strings.Replace(base, "func F", "//go:noinline\nfunc F", 1), false},
		{"line directive added", strings.Replace(base, "\tfmt.Println", "//line other.go:10\n\tfmt.Println", 1), false},
		{"empty statement added", strings.Replace(base, "fmt.Println(s)\n", "fmt.Println(s);;\n", 1), false},
	}
	want, err := canonicalGo("p.go", []byte(base))
	if err != nil {
		t.Fatalf("canonicalGo(base): %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonicalGo("p.go", []byte(tt.other))
			if err != nil {
				t.Fatalf("canonicalGo: %v", err)
			}
			if same := bytes.Equal(got, want); same != tt.same {
				t.Errorf("canonical form same as base = %v, want %v\nbase:\n%s\nother:\n%s", same, tt.same, want, got)
			}
		})
	}
}

func TestCanonicalGoDirectivePlacement(t *testing.T) {
	// Moving a directive from one function to another changes the program,
	// so the directive must be hashed where it stands, not as a file-level set.
	a := "package p\n\n//go:noinline\nfunc f() {}\n\nfunc g() {}\n"
	b := "package p\n\nfunc f() {}\n\n//go:noinline\nfunc g() {}\n"
	ca, err := canonicalGo("a.go", []byte(a))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := canonicalGo("b.go", []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(ca, cb) {
		t.Errorf("moving //go:noinline from f to g did not change the canonical form:\n%s", ca)
	}
}

func TestCanonicalGoCgoPreamble(t *testing.T) {
	const src = "package p\n\n// #include <stdio.h>\n// int one(void) { return 1; }\nimport \"C\"\n\nfunc F() int { return int(C.one()) }\n"
	base, err := canonicalGo("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	edited, err := canonicalGo("p.go", []byte(strings.Replace(src, "return 1;", "return 2;", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(base, edited) {
		t.Errorf("editing the cgo preamble did not change the canonical form:\n%s", base)
	}
}

func TestCanonicalGoSyntaxError(t *testing.T) {
	_, err := canonicalGo("bad.go", []byte("package p\nfunc f() { x := }\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.go:2") {
		t.Errorf("canonicalGo(syntax error) = %v, want an error naming bad.go:2", err)
	}
}

func TestDirective(t *testing.T) {
	tests := []struct {
		comment string
		want    string
		ok      bool
	}{
		{"//go:noinline", "//go:noinline", true},
		{"//go:embed a.txt  ", "//go:embed a.txt", true},
		{"//go:linkname x runtime.x", "//go:linkname x runtime.x", true},
		{"//line a.go:1", "//line a.go:1", true},
		{"/*line a.go:1*/", "/*line a.go:1*/", true},
		{"//export F", "//export F", true},
		{"//go:build linux", "", false},
		{"//go:generate stringer", "", false},
		{"// go:noinline", "", false},
		{"//nolint:errcheck", "", false},
		{"// plain comment", "", false},
	}
	for _, tt := range tests {
		got, ok := directive(tt.comment)
		if got != tt.want || ok != tt.ok {
			t.Errorf("directive(%q) = %q, %v, want %q, %v", tt.comment, got, ok, tt.want, tt.ok)
		}
	}
}
