package codeversion

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
)

// canonicalGo returns the form of a Go source file that is hashed: one line
// per token, with ordinary comments, layout and optional separators removed
// (see the package documentation). Two files have the same canonical form
// exactly when the compiler sees the same tokens and directives in them.
func canonicalGo(filename string, src []byte) ([]byte, error) {
	// Parsing rejects syntax errors (a broken file should fail loudly rather
	// than get a fingerprint) and finds the cgo preamble, which is a comment
	// in the token stream but C source to cgo.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, preamble := range cgoPreambles(f) {
		fmt.Fprintf(&b, "cgo-preamble %s\n", strconv.Quote(preamble))
	}

	var items []lexeme
	var errs scanner.ErrorList
	var s scanner.Scanner
	file := token.NewFileSet().AddFile(filename, -1, len(src))
	s.Init(file, src, errs.Add, scanner.ScanComments)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT {
			d, ok := directive(lit)
			if !ok {
				continue
			}
			lit = d
		}
		items = append(items, lexeme{tok, lit})
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}

	for i, it := range items {
		if it.tok == token.SEMICOLON || it.tok == token.COMMA {
			// The spec lets a semicolon be omitted before ')' or '}', and a
			// trailing comma before them is only there to allow a line break;
			// either way the program is the same. A comma before ']' is kept:
			// in "type T[P *C,]" it decides between a type parameter and an
			// array length.
			if next := nextToken(items[i+1:]); next == token.RPAREN || next == token.RBRACE {
				continue
			}
		}
		switch {
		case it.tok == token.SEMICOLON:
			// An inserted semicolon has the literal "\n"; it is the same token.
			b.WriteString(";\n")
		case it.tok == token.COMMENT:
			fmt.Fprintf(&b, "directive %s\n", strconv.Quote(it.lit))
		case it.tok.IsLiteral():
			fmt.Fprintf(&b, "%s %s\n", it.tok, strconv.Quote(it.lit))
		default:
			b.WriteString(it.tok.String())
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// A lexeme is a token kept for hashing: a non-comment token or a directive.
type lexeme struct {
	tok token.Token
	lit string
}

// nextToken returns the first token in items that is not a directive comment,
// or token.EOF.
func nextToken(items []lexeme) token.Token {
	for _, it := range items {
		if it.tok != token.COMMENT {
			return it.tok
		}
	}
	return token.EOF
}

// directive reports whether the comment text is a compiler directive and
// returns it without trailing blanks. Directives change the compiled program
// (//go:noinline, //go:linkname, //go:embed, //line, cgo's //export, ...), so
// unlike ordinary comments they are hashed. //go:build is left out because
// its effect, the set of files compiled, is hashed already, and //go:generate
// because it only matters to `go generate`.
func directive(text string) (string, bool) {
	text = strings.TrimRight(text, " \t")
	switch {
	case strings.HasPrefix(text, "//go:"):
		name, _, _ := strings.Cut(text[len("//go:"):], " ")
		if name == "build" || name == "generate" {
			return "", false
		}
		return text, true
	case strings.HasPrefix(text, "//line "), strings.HasPrefix(text, "/*line "),
		strings.HasPrefix(text, "//export "), strings.HasPrefix(text, "//extern "):
		return text, true
	}
	return "", false
}

// cgoPreambles returns the raw text of the comments that cmd/cgo reads as C
// source: the doc comment of each import "C", or of its declaration when that
// declares nothing else.
func cgoPreambles(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.IMPORT {
			continue
		}
		for _, spec := range d.Specs {
			s := spec.(*ast.ImportSpec)
			if s.Path.Value != `"C"` {
				continue
			}
			doc := s.Doc
			if doc == nil && len(d.Specs) == 1 {
				doc = d.Doc
			}
			if doc == nil {
				continue
			}
			lines := make([]string, len(doc.List))
			for i, c := range doc.List {
				lines[i] = c.Text
			}
			out = append(out, strings.Join(lines, "\n"))
		}
	}
	return out
}
