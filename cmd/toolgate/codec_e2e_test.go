package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rotationKeyLine is a key file line for id (every key byte b) with an optional marker.
func rotationKeyLine(id string, b byte, marker string) string {
	return strings.TrimSpace(id+" "+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32))+" "+marker) + "\n"
}

// writeKeyFile replaces path by a rename, as a config tool or a Secret volume does.
func writeKeyFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".tmp", []byte(content), 0o600))
	require.NoError(t, os.Rename(path+".tmp", path))
}

// testKeysRotateUnderLoad rotates the key file of two `toolgate worker` processes (on a task
// queue of their own, on dev's server) while calls run, and loses none:
//   - phase 1 adds key "k-new" decrypt-only, phase 2 lets it encrypt; `toolgate codec keys`
//     reads both workers' toolgate_codec_keys and exits 0 only once they hold the file's keys;
//   - out of order, a client encrypts with "k-next" before the workers have it: the workers say
//     they wait for it (a workflow task failure naming the key, retried) and the call completes
//     once the key file gives it;
//   - every call exits 0 with its decoded result. Callers read the live key file, as every
//     process of a deployment does: a call started before the rotation gets a result encrypted
//     with k-new, which its CLI process learns by re-reading the file when it meets the key.
//     (A process that never learns the new key cannot decode what it encrypts: two-phase
//     rotation requires every process to hold it before phase 2, which codec keys checks.)
func testKeysRotateUnderLoad(t *testing.T, env []string) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "rotation-keys.txt")
	writeKeyFile(t, keys, rotationKeyLine("k-old", 11, ""))
	const queue = "rotation"
	env = append(slices.Clone(env), "TOOLGATE_TASK_QUEUE="+queue)
	workerEnv := append(slices.Clone(env), "TOOLGATE_CODEC_KEY="+keys)
	metricsURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`)
	var urls []string
	var workers []*process
	for range 2 {
		w := startProcess(t, workerEnv, "worker", "--metrics-listen", "127.0.0.1:0")
		urls = append(urls, metricsURL.FindString(w.waitLine(t, w.stderr, "serving Prometheus metrics")))
		w.waitLine(t, w.stderr, "worker running")
		workers = append(workers, w)
	}
	codecKeys := func(file string) outcome {
		args := []string{"codec", "keys", "--codec-key", file}
		for _, u := range urls {
			args = append(args, "--metrics", u)
		}
		return toolgate(t, childEnv(), "", args...)
	}
	// waitForKeys waits until both workers hold the keys of file in its roles.
	waitForKeys := func(file string) {
		t.Helper()
		var got outcome
		require.Eventually(t, func() bool { got = codecKeys(file); return got.code == ExitOK }, lineTimeout, 200*time.Millisecond,
			"the workers never held the file's keys: %s%s", got.stdout, got.stderr)
	}

	// Calls run throughout.
	var wg sync.WaitGroup
	var mu sync.Mutex
	results := map[string]outcome{}
	call := func(id, keyFile string, seconds int) {
		callEnv := append(slices.Clone(env), "TOOLGATE_CODEC_KEY="+keyFile)
		wg.Go(func() {
			got := toolgate(t, callEnv, "", "call", "--id", id, "--progress", "off", "sleep", fmt.Sprintf(`{"seconds":%d}`, seconds))
			mu.Lock()
			results[id] = got
			mu.Unlock()
		})
	}
	for i := range 4 {
		call(fmt.Sprintf("rot-before-%d", i), keys, 3)
	}
	waitForKeys(keys)
	got := codecKeys(keys)
	assert.Contains(t, got.stdout, "file "+keys+": k-old encrypt")

	// Phase 1: every process learns k-new; k-old still encrypts.
	writeKeyFile(t, keys, rotationKeyLine("k-new", 12, "decrypt-only")+rotationKeyLine("k-old", 11, ""))
	for i := range 3 {
		call(fmt.Sprintf("rot-phase1-%d", i), keys, 2)
	}
	waitForKeys(keys)
	got = codecKeys(keys)
	assert.Contains(t, got.stdout, "k-new decrypt, k-old encrypt")

	// Phase 2: k-new encrypts.
	writeKeyFile(t, keys, rotationKeyLine("k-new", 12, "")+rotationKeyLine("k-old", 11, ""))
	for i := range 3 {
		call(fmt.Sprintf("rot-phase2-%d", i), keys, 2)
	}
	waitForKeys(keys)

	// Out of order: a client already encrypts with k-next, which no worker holds.
	early := filepath.Join(dir, "early.txt")
	require.NoError(t, os.WriteFile(early, []byte(rotationKeyLine("k-next", 13, "")+rotationKeyLine("k-new", 12, "")+rotationKeyLine("k-old", 11, "")), 0o600))
	call("rot-early", early, 1)
	lacks := codecKeys(early)
	assert.Equal(t, ExitErrorResult, lacks.code, "the workers lack k-next: %s", lacks.stdout)
	assert.Contains(t, lacks.stdout, "(lacks k-next; ")
	waiting := make(chan string, 2)
	for _, w := range workers {
		go func() {
			for line := range w.stderr {
				if strings.Contains(line, "waiting for codec key") && strings.Contains(line, "k-next") {
					waiting <- line
					return
				}
			}
		}()
	}
	select {
	case line := <-waiting:
		t.Logf("a worker waits for the key: %s", line)
	case <-time.After(lineTimeout):
		require.FailNow(t, "no worker said it waits for k-next", "%s\n%s", workers[0].stderrText(), workers[1].stderrText())
	}
	writeKeyFile(t, keys, rotationKeyLine("k-next", 13, "decrypt-only")+rotationKeyLine("k-new", 12, "")+rotationKeyLine("k-old", 11, ""))

	wg.Wait()
	require.Len(t, results, 11)
	for id, got := range results {
		assert.Equal(t, ExitOK, got.code, "call %s: %s", id, got.stderr)
		assert.Regexp(t, `"toolCallId":\s*"`+id+`"`, got.stdout, "call %s decoded its result", id)
	}
	for _, w := range workers {
		assert.NotContains(t, w.stderrText(), "unable to decode the workflow function input", "no call failed on its input")
		assert.Equal(t, 0, w.interrupt(t), w.stderrText())
	}
}
