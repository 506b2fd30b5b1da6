package doctest

import (
	"bufio"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Snippet is one fenced ```go block of a Markdown file.
type Snippet struct {
	File string // as named in compiler errors, e.g. "README.md"
	Line int    // line of the first code line, 1-based
	Code string
}

// Extract returns the ```go blocks of a Markdown document in order. An unterminated block is an
// error: it would silently drop the rest of the document.
func Extract(file, markdown string) ([]Snippet, error) {
	var (
		out   []Snippet
		in    bool
		start int
		body  strings.Builder
	)
	sc := bufio.NewScanner(strings.NewReader(markdown))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && strings.TrimRight(line, " \t") == "```go":
			in, start = true, n+1
			body.Reset()
		case in && strings.TrimRight(line, " \t") == "```":
			in = false
			out = append(out, Snippet{File: file, Line: start, Code: body.String()})
		case in:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if in {
		return nil, fmt.Errorf("%s:%d: ```go block is never closed", file, start-1)
	}
	return out, nil
}

var (
	packageClause = regexp.MustCompile(`^package [A-Za-z_][A-Za-z0-9_]*\s*(//.*)?$`)
	fileComment   = regexp.MustCompile(`^//\s*((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+\.go)$`)
)

// Path returns the file a complete-file snippet names in a comment on its first line
// ("// agent.go", "// weather/replay_test.go"), or "" when it names none. Snippets of one document
// that name files in the same directory are one package, as the files of a walkthrough are.
func (s Snippet) Path() string {
	if !s.IsFile() {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimLeft(s.Code, "\n"), "\n")
	if m := fileComment.FindStringSubmatch(strings.TrimSpace(first)); m != nil {
		return path.Clean(m[1])
	}
	return ""
}

// IsFile says whether the snippet is a complete Go file: its first line that is neither blank
// nor a comment is a package clause.
func (s Snippet) IsFile() bool {
	for _, line := range strings.Split(s.Code, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		return packageClause.MatchString(t)
	}
	return false
}

// Source returns the Go file that builds the snippet as package pkg: a complete file with its
// package clause renamed to pkg, or a fragment wrapped in a function. Renaming main too is
// deliberate: func main of a library package is an ordinary function, so nothing is linked and the
// build stays a compile-only check. //line directives map every line back to the Markdown file.
func (s Snippet) Source(pkg string) string {
	if s.IsFile() {
		return s.fileSource(pkg)
	}
	return s.fragmentSource(pkg)
}

func (s Snippet) fileSource(pkg string) string {
	lines := strings.Split(strings.TrimSuffix(s.Code, "\n"), "\n")
	var b strings.Builder
	done := false
	for i, line := range lines {
		if !done && packageClause.MatchString(strings.TrimSpace(line)) {
			done = true
			line = "package " + pkg
			fmt.Fprintf(&b, "%s\n%s\n", line, lineDirective(s.File, s.Line+i+1))
			continue
		}
		if !done {
			line = "" // comments before the package clause are not needed to compile
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func (s Snippet) fragmentSource(pkg string) string {
	lines := strings.Split(strings.TrimSuffix(s.Code, "\n"), "\n")
	imports := importPrefix(lines)
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	if imports > 0 {
		fmt.Fprintf(&b, "%s\n", lineDirective(s.File, s.Line))
		for _, line := range lines[:imports] {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nfunc fragment() (err error) {\n")
	fmt.Fprintf(&b, "%s\n", lineDirective(s.File, s.Line+imports))
	for _, line := range lines[imports:] {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteString("\treturn\n}\n")
	return b.String()
}

// importPrefix returns how many leading lines of a fragment are import declarations (single or
// parenthesized), with the blank lines and comments between and after them.
func importPrefix(lines []string) int {
	end, inBlock := 0, false
	for i, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case inBlock:
			if t == ")" {
				inBlock = false
				end = i + 1
			}
		case t == "" || strings.HasPrefix(t, "//"):
			// belongs to whatever follows
		case t == "import (":
			inBlock = true
		case strings.HasPrefix(t, "import "):
			end = i + 1
		default:
			return end
		}
	}
	return end
}

func lineDirective(file string, line int) string {
	return fmt.Sprintf("//line %s:%d", file, line)
}
