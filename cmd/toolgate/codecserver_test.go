package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// codecKeyFile writes a one-key codec key file and returns its path.
func codecKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.txt")
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, os.WriteFile(path, []byte("k1 "+key+"\n"), 0o600))
	return path
}

// startCodecServerProcess starts `toolgate codec-server` with args and returns it and its URL.
func startCodecServerProcess(t *testing.T, env []string, args ...string) (*process, string) {
	t.Helper()
	p := startProcess(t, env, append([]string{"codec-server", "--codec-key", codecKeyFile(t)}, args...)...)
	line := p.waitLine(t, p.stdout, "codec-server ")
	return p, strings.TrimPrefix(line, "codec-server ")
}

// rawRequest sends head (request line and headers, without the blank line) and then body from
// a goroutine, and returns the status code of the answer; the body is streamed until the server
// answers or closes, so a server that buffered it would have to hold all of it.
func rawRequest(t *testing.T, addr, head string, body io.Reader) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, head+"\r\n\r\n")
	require.NoError(t, err)
	go func() { _, _ = io.Copy(conn, body) }() // ends with an error once the server closes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

// vmKB reads a field (VmRSS, VmHWM) of /proc/PID/status in KiB.
func vmKB(t *testing.T, pid int, field string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(t, err)
			return kb
		}
	}
	require.FailNow(t, "no "+field+" in /proc status")
	return 0
}

// zeros is an endless stream of '0' bytes up to n.
func zeros(n int64) io.Reader { return io.LimitReader(repeatReader('0'), n) }

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// The codec server decrypts only for loopback Host names (421 for a rebinding page's name) and
// reads at most --max-body-bytes of a body (413): an 800 MB body, announced or chunked, leaves
// the process's peak RSS far below it (contract section 10; issue 22 item 3).
func TestCodecServerProcessRefusesRebindingAndLargeBodies(t *testing.T) {
	p, url := startCodecServerProcess(t, childEnv())
	addr := strings.TrimPrefix(url, "http://")
	const payloads = `{"payloads":[]}`

	hosts := []struct {
		host string
		want int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + strings.Split(addr, ":")[1], http.StatusMisdirectedRequest},
		{"127.1", http.StatusMisdirectedRequest},
		{"localhost.", http.StatusMisdirectedRequest},
		{addr, http.StatusOK},
		{"localhost", http.StatusOK},
	}
	for _, tt := range hosts {
		t.Run("Host "+tt.host, func(t *testing.T) {
			head := fmt.Sprintf("POST /decode HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d", tt.host, len(payloads))
			assert.Equal(t, tt.want, rawRequest(t, addr, head, strings.NewReader(payloads)))
		})
	}

	const huge = 800 << 20
	before := vmKB(t, p.cmd.Process.Pid, "VmRSS")
	bodies := []struct {
		name string
		head string
	}{
		{"announced 800 MB", fmt.Sprintf("POST /decode HTTP/1.1\r\nHost: %s\r\nContent-Length: %d", addr, huge)},
		{"chunked 800 MB", fmt.Sprintf("POST /decode HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked", addr)},
	}
	for _, tt := range bodies {
		t.Run(tt.name, func(t *testing.T) {
			body := zeros(huge)
			if strings.Contains(tt.head, "chunked") {
				body = chunked(zeros(huge))
			}
			assert.Equal(t, http.StatusRequestEntityTooLarge, rawRequest(t, addr, tt.head, body))
		})
	}
	peak := vmKB(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("codec-server RSS before %d KiB, peak after two 800 MB bodies %d KiB", before, peak)
	assert.Less(t, peak, 200<<10, "peak RSS stays far below the 800 MB body")
}

// chunked frames r in HTTP/1.1 chunks of 64 KiB, ending with the last chunk.
func chunked(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				if _, werr := fmt.Fprintf(pw, "%x\r\n%s\r\n", n, buf[:n]); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err != nil {
				_, werr := io.WriteString(pw, "0\r\n\r\n")
				pw.CloseWithError(werr)
				return
			}
		}
	}()
	return pr
}

// A client that sends half a request's headers is dropped after --read-header-timeout.
func TestCodecServerProcessDropsSlowHeaders(t *testing.T) {
	_, url := startCodecServerProcess(t, childEnv(), "--read-header-timeout", "200ms")
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /decode HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(lineTimeout))) // a ceiling against hangs
	_, err = io.ReadAll(conn)
	assert.NoError(t, err, "the server closes the connection (EOF), not the test's ceiling")
}

// Beyond loopback the codec server needs a token, read from --token-file or $TOOLGATE_CODEC_TOKEN;
// --token on the command line still works but warns.
func TestCodecServerProcessToken(t *testing.T) {
	t.Run("non-loopback without a token is refused", func(t *testing.T) {
		got := toolgate(t, childEnv(), "", "codec-server", "--codec-key", codecKeyFile(t), "--listen", "0.0.0.0:0")
		assert.Equal(t, ExitUsage, got.code, got.stderr)
		assert.Contains(t, got.stderr, "not a loopback address")
	})
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600))
	tests := []struct {
		name     string
		env      []string
		args     []string
		wantWarn bool
	}{
		{name: "token file", env: childEnv(), args: []string{"--token-file", tokenFile}},
		{name: "environment", env: childEnv("TOOLGATE_CODEC_TOKEN=s3cret")},
		{name: "deprecated argv", env: childEnv(), args: []string{"--token", "s3cret"}, wantWarn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := startCodecServerProcess(t, tt.env, append([]string{"--listen", "0.0.0.0:0"}, tt.args...)...)
			port := url[strings.LastIndex(url, ":")+1:]
			post := func(token string) int {
				req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/decode", strings.NewReader(`{"payloads":[]}`))
				require.NoError(t, err)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				return resp.StatusCode
			}
			assert.Equal(t, http.StatusUnauthorized, post(""))
			assert.Equal(t, http.StatusOK, post("s3cret"))
			p.interrupt(t)
			assert.Equal(t, tt.wantWarn, strings.Contains(p.stderrText(), "--token puts the secret on the command line"), p.stderrText())
		})
	}
}
