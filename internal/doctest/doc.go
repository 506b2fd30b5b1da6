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
// # Complete files
//
// A snippet whose first code line is a package clause is a complete Go file and is built as it
// is; the documents hold only such snippets (TestDocumentationSnippetsCompile fails on any other),
// so what a newcomer pastes into a file compiles there. A snippet whose first line is a comment
// naming a file ("// main.go", "// weather/replay_test.go") is that file: the snippets of one
// document naming files in one directory are built as one package, so a walkthrough's files may
// use each other's declarations (a _test.go file is compiled too, under another name).
//
// # Fragments
//
// Build still accepts a fragment (for tests of this package): its leading import declarations go
// to the top of the file; everything after them, types and statements, becomes the body of
//
//	func fragment() (err error) { <snippet>; return }
package doctest
