package credentials_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/credstoretest"
)

// fileBackend is a credentials directory for credstoretest.
type fileBackend struct{ dir string }

func (b fileBackend) Open(_ *testing.T, c credstoretest.Config) credentials.Store {
	return &credentials.FileStore{Dir: b.dir, Keyring: c.Keys, InsecurePlaintext: c.InsecurePlaintext, Now: c.Now}
}

func (b fileBackend) Dump(t *testing.T) string {
	var all strings.Builder
	err := filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all.Write(data)
		all.WriteByte('\n')
		return err
	})
	require.NoError(t, err)
	return all.String()
}

func (b fileBackend) MoveSealed(t *testing.T, provider, from, to string) {
	rows := map[string]map[string]any{}
	paths := map[string]string{}
	names, err := filepath.Glob(filepath.Join(b.dir, "tokens", "*.json"))
	require.NoError(t, err)
	for _, name := range names {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		var row map[string]any
		require.NoError(t, json.Unmarshal(data, &row))
		if row["provider"] == provider {
			principal := row["principal"].(string)
			rows[principal], paths[principal] = row, name
		}
	}
	require.Contains(t, rows, from)
	require.Contains(t, rows, to)
	rows[to]["sealed"], rows[to]["keyId"] = rows[from]["sealed"], rows[from]["keyId"]
	data, err := json.Marshal(rows[to])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[to], data, 0o600))
}

// TestFileStore runs the stores' behaviours (credstoretest) on a FileStore.
func TestFileStore(t *testing.T) {
	credstoretest.Run(t, func(t *testing.T) credstoretest.Backend {
		return fileBackend{dir: filepath.Join(t.TempDir(), "credentials")}
	})
}

// TestFileStoreLayout: the directories are 0700, the files 0600, and no file name holds a
// principal's or provider's text; a directory others can read is refused.
func TestFileStoreLayout(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "credentials")
	s := &credentials.FileStore{Dir: dir, Keyring: credstoretest.Keyring(t, "k1")}
	require.NoError(t, s.Put(ctx, "https://idp.example alice", "github", credentials.Token{AccessToken: "a"}))
	require.NoError(t, s.PutPending(ctx, credentials.Pending{State: "st", Principal: "https://idp.example alice", Provider: "github", Verifier: "v", Expires: time.Now().Add(time.Hour)}))
	files := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		assert.Equal(t, want, info.Mode().Perm(), path)
		for _, text := range []string{"alice", "idp", "github", "st."} {
			assert.NotContains(t, d.Name(), text)
		}
		return nil
	}))
	assert.Equal(t, 3, files, "a token, its lock file and a pending consent")

	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	err := (&credentials.FileStore{Dir: open, Keyring: credstoretest.Keyring(t, "k1")}).Init()
	require.ErrorContains(t, err, "chmod 700")
}

// helperEnv names the directory a helper process (TestFileStoreUpdateAcrossProcesses) works in.
const helperEnv = "CREDENTIALS_TEST_HELPER_DIR"

// helperIncrements is how many increments each process makes.
const helperIncrements = 40

// TestFileStoreUpdateAcrossProcesses: this process and a child, each with its own FileStore on
// one directory, increment one counter by Update at the same time; no increment is lost (the
// flock holds across processes).
func TestFileStoreUpdateAcrossProcesses(t *testing.T) {
	if dir := os.Getenv(helperEnv); dir != "" {
		helperIncrement(t, dir)
		return
	}
	dir := t.TempDir()
	key := credstoretest.Key(t, "k1")
	keyFile := filepath.Join(dir, "keys.txt")
	require.NoError(t, os.WriteFile(keyFile, []byte("k1 "+base64.StdEncoding.EncodeToString(key.Secret)+"\n"), 0o600))

	child := exec.Command(os.Args[0], "-test.run=^TestFileStoreUpdateAcrossProcesses$", "-test.count=1")
	child.Env = append(os.Environ(), helperEnv+"="+dir)
	out := new(strings.Builder)
	child.Stdout, child.Stderr = out, out
	require.NoError(t, child.Start())
	helperIncrement(t, dir)
	require.NoError(t, child.Wait(), out.String())

	ring, err := codec.LoadKeyring(keyFile, nil)
	require.NoError(t, err)
	got, found, err := (&credentials.FileStore{Dir: filepath.Join(dir, "store"), Keyring: ring}).Get(context.Background(), "p", "counter")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, strconv.Itoa(2*helperIncrements), got.AccessToken, "no increment lost between the processes")
}

// helperIncrement makes helperIncrements increments from 4 goroutines on the store in dir.
func helperIncrement(t *testing.T, dir string) {
	ring, err := codec.LoadKeyring(filepath.Join(dir, "keys.txt"), nil)
	require.NoError(t, err)
	s := &credentials.FileStore{Dir: filepath.Join(dir, "store"), Keyring: ring}
	var wg sync.WaitGroup
	errs := make(chan error, helperIncrements)
	for range 4 {
		wg.Go(func() {
			for range helperIncrements / 4 {
				_, err := s.Update(context.Background(), "p", "counter", credstoretest.Increment)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, fmt.Sprintf("pid %d", os.Getpid()))
	}
}

// BenchmarkFileStoreUpdate is one Update that rewrites a token: the flock, the read and open, the
// seal and the synced write and rename.
func BenchmarkFileStoreUpdate(b *testing.B) {
	ring, err := codec.NewKeyring(codec.Key{ID: "k1", Secret: make([]byte, codec.KeySize)})
	require.NoError(b, err)
	s := &credentials.FileStore{Dir: filepath.Join(b.TempDir(), "credentials"), Keyring: ring}
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Update(ctx, "p", "counter", credstoretest.Increment); err != nil {
			b.Fatal(err)
		}
	}
}
