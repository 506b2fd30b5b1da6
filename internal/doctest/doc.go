// Package doctest proves that the Go snippets of the project's documentation compile from outside
// this module, as a user would write them.
//
// # What is built
//
// Every fenced block that opens with exactly ```go in README.md and docs/*.md is one snippet. The
// test writes each into its own package of one temporary module outside this repository, which
// requires github.com/toolgate/toolgate through a replace directive to the repository root and
// the same dependency versions as this module, and runs one `go build ./...` over all of them.
// Compiler errors name the Markdown file and line (through //line directives).
//
// # Complete files and fragments
//
// A snippet whose first code line is a package clause is a complete Go file and is built as it
// is. Any other snippet is a fragment: the body of a function returning error. Its leading import
// declarations (if any) go to the top of the file; everything after them, types and statements,
// becomes the body of
//
//	func fragment() (err error) { <snippet>; return }
//
// so a fragment may `return err` and may declare local types, and must import what it uses and
// use what it declares, exactly like real code.
package doctest
