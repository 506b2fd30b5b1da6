package toolbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

const secret = "TOP SECRET outside the root"

// fsFixture is a served root beside a directory it must not reveal:
//
//	base/outside/secret
//	base/root/a.txt                 "hello"
//	base/root/sub/b.txt             "bee"
//	base/root/sub/deeper/c.txt      "sea"
//	base/root/link-in      -> a.txt
//	base/root/sub/up       -> ..                      (stays inside)
//	base/root/link-out     -> ../outside/secret
//	base/root/abs-out      -> base/outside/secret      (absolute)
//	base/root/abs-in       -> base/root/a.txt          (absolute, though inside)
//	base/root/dir-out      -> ../outside               (directory)
//	base/root/chain1       -> chain2 -> dir-out       (a chain of directory links)
//	base/root/sub/esc      -> ../../outside
type fsFixture struct {
	base, root string
}

func newFSFixture(t *testing.T) fsFixture {
	t.Helper()
	base := t.TempDir()
	f := fsFixture{base: base, root: filepath.Join(base, "root")}
	for _, d := range []string{"outside", "root/sub/deeper"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	files := map[string]string{
		"outside/secret":           secret,
		"root/a.txt":               "hello",
		"root/sub/b.txt":           "bee",
		"root/sub/deeper/c.txt":    "sea",
		"root/sub/deeper/.hidden":  "h",
		"root/sub/deeper/big.bin":  "\x7fELF\x00\x01",
		"root/sub/deeper/utf8.txt": "ünïcödé",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(base, name), []byte(content), 0o644))
	}
	links := map[string]string{
		"root/link-in":  "a.txt",
		"root/sub/up":   "..",
		"root/link-out": "../outside/secret",
		"root/abs-out":  filepath.Join(base, "outside/secret"),
		"root/abs-in":   filepath.Join(base, "root/a.txt"),
		"root/dir-out":  "../outside",
		"root/chain1":   "chain2",
		"root/chain2":   "dir-out",
		"root/sub/esc":  "../../outside",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(base, name)))
	}
	return f
}

// readResult mirrors readFileResult for decoding content.
type readResult struct {
	Path       string  `json:"path"`
	Size       int64   `json:"size"`
	Offset     int64   `json:"offset"`
	Content    *string `json:"content"`
	Binary     bool    `json:"binary"`
	Truncated  bool    `json:"truncated"`
	NextOffset int64   `json:"nextOffset"`
}

type listResult struct {
	Path      string   `json:"path"`
	Entries   []string `json:"entries"`
	Truncated bool     `json:"truncated"`
}

func readArgs(path string) string { return fmt.Sprintf(`{"path":%q}`, path) }

func TestFileToolsNeedARoot(t *testing.T) {
	reg := newTestRegistry(t, Config{})
	for _, name := range []string{NameReadFile, NameListDir} {
		res := run(t, reg, name, `{"path":"a.txt"}`)
		assert.Equal(t, fmt.Sprintf("Unknown Tool %q", name), requireError(t, res, toolcore.CodeToolNotFound))
	}
}

func TestReadFile(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	tests := []struct {
		path string
		want string
	}{
		{"a.txt", "hello"},
		{"./a.txt", "hello"},
		{"sub/b.txt", "bee"},
		{"sub//deeper/./c.txt", "sea"},
		{"link-in", "hello"},
		{"sub/up/a.txt", "hello"},
		{"sub/up/sub/up/sub/b.txt", "bee"},
		{"sub/deeper/utf8.txt", "ünïcödé"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var got readResult
			requireOK(t, run(t, reg, NameReadFile, readArgs(tt.path)), &got)
			require.NotNil(t, got.Content)
			assert.Equal(t, tt.want, *got.Content)
			assert.Equal(t, int64(len(tt.want)), got.Size)
			assert.False(t, got.Truncated)
			assert.Zero(t, got.NextOffset)
			assert.Equal(t, tt.path, got.Path)
		})
	}
}

func TestReadFileRefusesEscapes(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	escape := "the path leads outside the served directory (symbolic links must stay inside it and be relative)"
	tests := []struct {
		path string
		want string
	}{
		{"link-out", `read "link-out": ` + escape},
		{"abs-out", `read "abs-out": ` + escape},
		{"abs-in", `read "abs-in": ` + escape},
		{"dir-out/secret", `read "dir-out/secret": ` + escape},
		{"chain1/secret", `read "chain1/secret": ` + escape},
		{"sub/esc/secret", `read "sub/esc/secret": ` + escape},
		{"sub/up/link-out", `read "sub/up/link-out": ` + escape},
		{"sub/up/up/outside/secret", `read "sub/up/up/outside/secret": no such file or directory`},
		{"missing.txt", `read "missing.txt": no such file or directory`},
		{"sub", `read "sub": is a directory; use list_dir`},
		{"a.txt/x", `read "a.txt/x": not a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := run(t, reg, NameReadFile, readArgs(tt.path))
			msg := requireError(t, res, toolcore.CodeToolExecutionFailed)
			assert.Equal(t, tt.want, msg)
			assert.NotContains(t, res.Content(), secret)
			assert.NotContains(t, msg, f.base, "the operator's paths stay private")
		})
	}
}

func TestFilePathRejects(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	dotdot := `"path" must not contain ".." elements`
	abs := `"path" must be relative to the served directory, not absolute`
	cases := []rejectCase{
		{"parent", `{"path":"../outside/secret"}`, dotdot},
		{"just parent", `{"path":".."}`, dotdot},
		{"inner parent escaping", `{"path":"a/../../b"}`, dotdot},
		{"inner parent staying", `{"path":"sub/../a.txt"}`, dotdot},
		{"trailing parent", `{"path":"sub/.."}`, dotdot},
		{"absolute", `{"path":"/etc/passwd"}`, abs},
		{"absolute into root", fmt.Sprintf(`{"path":%q}`, filepath.Join(f.root, "a.txt")), abs},
		{"backslash absolute", `{"path":"\\etc\\passwd"}`, abs},
		{"nul", `{"path":"a.txt\u0000.png"}`, `"path" must not contain NUL bytes`},
		{"empty", `{"path":""}`, `"path" must not be empty; use "." for the served directory`},
		{"too long", fmt.Sprintf(`{"path":%q}`, strings.Repeat("a/", MaxPathBytes)), `"path" must be at most 4096 bytes`},
		{"number", `{"path":7}`, `"path" must be a string, not a number`},
		{"unknown", `{"path":"a.txt","mode":"w"}`, `unknown argument "mode"; allowed: "path"`},
	}
	t.Run(NameListDir, func(t *testing.T) { assertRejects(t, reg, NameListDir, cases) })
	for i := range cases {
		cases[i].want = strings.Replace(cases[i].want, `allowed: "path"`, `allowed: "path", "offset"`, 1)
	}
	cases = append(cases,
		rejectCase{"missing", `{}`, `"path" is required`},
		rejectCase{"negative offset", `{"path":"a.txt","offset":-1}`, `"offset" must be a whole number of bytes, 0 or more`},
		rejectCase{"fractional offset", `{"path":"a.txt","offset":1.5}`, `"offset" must be a whole number of bytes, 0 or more`},
		rejectCase{"huge offset", `{"path":"a.txt","offset":1e30}`, `"offset" must be a whole number of bytes, 0 or more`},
		rejectCase{"string offset", `{"path":"a.txt","offset":"3"}`, `"offset" must be a number, not a string`},
	)
	t.Run(NameReadFile, func(t *testing.T) { assertRejects(t, reg, NameReadFile, cases) })
}

func TestReadFilePaging(t *testing.T) {
	f := newFSFixture(t)
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "line %04d ü\n", i)
	}
	want := b.String()
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "long.txt"), []byte(want), 0o644))
	reg := newTestRegistry(t, Config{Root: f.root})

	var got strings.Builder
	offset, calls := int64(0), 0
	for {
		calls++
		require.Less(t, calls, 100)
		var page readResult
		res := run(t, reg, NameReadFile, fmt.Sprintf(`{"path":"long.txt","offset":%d}`, offset))
		assert.LessOrEqual(t, len([]rune(res.Content())), toolcore.MaxContentCodePoints)
		requireOK(t, res, &page)
		assert.Equal(t, offset, page.Offset)
		assert.Equal(t, int64(len(want)), page.Size)
		got.WriteString(*page.Content)
		if !page.Truncated {
			assert.Zero(t, page.NextOffset)
			break
		}
		assert.Greater(t, page.NextOffset, offset)
		offset = page.NextOffset
	}
	assert.Equal(t, want, got.String())
	assert.Greater(t, calls, 5, "a 26 KB file takes several pages")
}

func TestReadFileBounds(t *testing.T) {
	f := newFSFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "u.txt"), []byte("aéb"), 0o644))
	tests := []struct {
		name     string
		maxBytes int
		args     string
		want     readResult
	}{
		{"read max bytes", 4, `{"path":"a.txt"}`, readResult{Path: "a.txt", Size: 5, Content: ptr("hell"), Truncated: true, NextOffset: 4}},
		{"offset", 0, `{"path":"a.txt","offset":3}`, readResult{Path: "a.txt", Size: 5, Offset: 3, Content: ptr("lo")}},
		{"offset at end", 0, `{"path":"a.txt","offset":5}`, readResult{Path: "a.txt", Size: 5, Offset: 5, Content: ptr("")}},
		{"offset beyond end", 0, `{"path":"a.txt","offset":99}`, readResult{Path: "a.txt", Size: 5, Offset: 99, Content: ptr("")}},
		{"offset inside a rune", 0, `{"path":"u.txt","offset":2}`, readResult{Path: "u.txt", Size: 4, Offset: 3, Content: ptr("b")}},
		{"limit inside a rune", 2, `{"path":"u.txt"}`, readResult{Path: "u.txt", Size: 4, Content: ptr("a"), Truncated: true, NextOffset: 1}},
		{"binary", 0, `{"path":"sub/deeper/big.bin"}`, readResult{Path: "sub/deeper/big.bin", Size: 6, Binary: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newTestRegistry(t, Config{Root: f.root, ReadMaxBytes: tt.maxBytes})
			var got readResult
			requireOK(t, run(t, reg, NameReadFile, tt.args), &got)
			assert.Equal(t, tt.want, got)
		})
	}
}

func ptr(s string) *string { return &s }

// A link swapped between validation and execution is judged when it is used.
func TestReadFileSymlinkSwappedAfterValidation(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	link := filepath.Join(f.root, "flip")
	require.NoError(t, os.Symlink("a.txt", link))
	tool, ok := reg.Get(NameReadFile)
	require.True(t, ok)
	call, err := toolcore.NewToolCall("call-flip", NameReadFile, []byte(`{"path":"flip"}`))
	require.NoError(t, err)
	accepted, _, ok := tool.Validate(call)
	require.True(t, ok)

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink("../outside/secret", link))
	_, err = tool.Invoke(context.Background(), accepted)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leads outside the served directory")
}

// Racing a link between an inside and an outside target never yields the outside file.
func TestReadFileSymlinkRace(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	link := filepath.Join(f.root, "race")
	require.NoError(t, os.Symlink("a.txt", link))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{"../outside/secret", "a.txt", "dir-out/secret", "sub/up/a.txt"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(f.root, "race.tmp")
			_ = os.Remove(tmp)
			if os.Symlink(targets[i%len(targets)], tmp) == nil {
				_ = os.Rename(tmp, link) // atomic swap
			}
		}
	}()
	okReads := 0
	for range 300 {
		res := run(t, reg, NameReadFile, `{"path":"race"}`)
		require.NotContains(t, res.Content(), secret)
		if !res.IsError() {
			okReads++
			var got readResult
			requireOK(t, res, &got)
			assert.Equal(t, "hello", *got.Content)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of 300 reads succeeded through an inside target", okReads)
}

func TestListDir(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	tests := []struct {
		args string
		want listResult
	}{
		{`{}`, listResult{Path: ".", Entries: []string{"a.txt", "abs-in", "abs-out", "chain1", "chain2", "dir-out", "link-in", "link-out", "sub/"}}},
		{`{"path":"."}`, listResult{Path: ".", Entries: []string{"a.txt", "abs-in", "abs-out", "chain1", "chain2", "dir-out", "link-in", "link-out", "sub/"}}},
		{`{"path":"sub"}`, listResult{Path: "sub", Entries: []string{"b.txt", "deeper/", "esc", "up"}}},
		{`{"path":"sub/up/sub/deeper/"}`, listResult{Path: "sub/up/sub/deeper/", Entries: []string{".hidden", "big.bin", "c.txt", "utf8.txt"}}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var got listResult
			requireOK(t, run(t, reg, NameListDir, tt.args), &got)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestListDirRefuses(t *testing.T) {
	f := newFSFixture(t)
	reg := newTestRegistry(t, Config{Root: f.root})
	escape := "the path leads outside the served directory (symbolic links must stay inside it and be relative)"
	tests := []struct {
		path string
		want string
	}{
		{"dir-out", `list "dir-out": ` + escape},
		{"chain1", `list "chain1": ` + escape},
		{"sub/esc", `list "sub/esc": ` + escape},
		{"a.txt", `list "a.txt": not a directory; use read_file`},
		{"nope", `list "nope": no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := run(t, reg, NameListDir, readArgs(tt.path))
			assert.Equal(t, tt.want, requireError(t, res, toolcore.CodeToolExecutionFailed))
			assert.NotContains(t, res.Content(), "secret")
		})
	}
}

func TestListDirBounds(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), nil, 0o644))
	}
	long := filepath.Join(dir, "long")
	require.NoError(t, os.Mkdir(long, 0o755))
	for i := range 120 {
		name := fmt.Sprintf("%03d-%s", i, strings.Repeat("n", 60))
		require.NoError(t, os.WriteFile(filepath.Join(long, name), nil, 0o644))
	}
	tests := []struct {
		name       string
		maxEntries int
		path       string
		wantLen    int // 0: only check that it was shortened to fit
		wantFirst  string
	}{
		{"default bound", 0, ".", DefaultListMaxEntries, "f000"},
		{"configured bound", 7, ".", 7, "f000"},
		{"shortened to fit the result", 0, "long", 0, "000-" + strings.Repeat("n", 60)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newTestRegistry(t, Config{Root: dir, ListMaxEntries: tt.maxEntries})
			res := run(t, reg, NameListDir, readArgs(tt.path))
			assert.LessOrEqual(t, len([]rune(res.Content())), toolcore.MaxContentCodePoints)
			var got listResult
			requireOK(t, res, &got)
			assert.True(t, got.Truncated)
			require.NotEmpty(t, got.Entries)
			assert.Equal(t, tt.wantFirst, got.Entries[0])
			if tt.wantLen > 0 {
				assert.Len(t, got.Entries, tt.wantLen)
			} else {
				assert.Less(t, len(got.Entries), 120)
				assert.Greater(t, len(got.Entries), 20)
			}
		})
	}
}

func TestFileToolsRootRemovedLater(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	reg := newTestRegistry(t, Config{Root: root})
	require.NoError(t, os.Remove(root))
	for _, name := range []string{NameReadFile, NameListDir} {
		res := run(t, reg, name, `{"path":"a.txt"}`)
		msg := requireError(t, res, toolcore.CodeToolExecutionFailed)
		assert.Equal(t, "the served directory is unavailable", msg, name)
		assert.NotContains(t, msg, root)
	}
}

// A 16 GiB sparse file (no disk used) is binary: read_file looks at its first ReadMaxBytes only,
// so it must say the file goes on, and where.
func TestReadFileBinaryCutSaysTruncated(t *testing.T) {
	f := newFSFixture(t)
	const size = 16 << 30
	file, err := os.Create(filepath.Join(f.root, "sparse.img"))
	require.NoError(t, err)
	require.NoError(t, file.Truncate(size))
	require.NoError(t, file.Close())
	reg := newTestRegistry(t, Config{Root: f.root})

	var head, tail readResult
	requireOK(t, run(t, reg, NameReadFile, `{"path":"sparse.img"}`), &head)
	requireOK(t, run(t, reg, NameReadFile, `{"path":"sparse.img","offset":17179869000}`), &tail)

	assert.Equal(t, readResult{Path: "sparse.img", Size: size, Binary: true, Truncated: true, NextOffset: DefaultReadMaxBytes}, head)
	assert.Equal(t, readResult{Path: "sparse.img", Size: size, Offset: 17179869000, Binary: true}, tail,
		"the last bytes were all looked at: not truncated")
}

// A path of MaxPathBytes must not push the other fields out of the content cap: the package
// promises that every field arrives.
func TestFileToolsLongPathKeepsEveryField(t *testing.T) {
	f := newFSFixture(t)
	root, err := os.OpenRoot(f.root)
	require.NoError(t, err)
	defer root.Close()
	segment := strings.Repeat("d", 250)
	var dir string
	for len(dir)+len(segment)+1+len("/file.txt") <= MaxPathBytes {
		dir = strings.TrimPrefix(dir+"/"+segment, "/")
	}
	dir += "/" + strings.Repeat("e", MaxPathBytes-len(dir)-len("/file.txt")-1)
	require.NoError(t, root.MkdirAll(dir, 0o755))
	file := dir + "/file.txt"
	require.Len(t, file, MaxPathBytes)
	require.NoError(t, root.WriteFile(file, []byte(strings.Repeat("text ", 2000)), 0o644))
	reg := newTestRegistry(t, Config{Root: f.root})

	var read readResult
	requireOK(t, run(t, reg, NameReadFile, readArgs(file)), &read)
	var list listResult
	requireOK(t, run(t, reg, NameListDir, readArgs(dir)), &list)

	assert.True(t, read.Truncated)
	assert.EqualValues(t, 10000, read.Size)
	assert.Positive(t, read.NextOffset)
	assert.True(t, strings.HasPrefix(file, strings.TrimSuffix(read.Path, "…")), "the path is shortened, not changed")
	assert.Equal(t, []string{"file.txt"}, list.Entries)
	assert.False(t, list.Truncated)
}
