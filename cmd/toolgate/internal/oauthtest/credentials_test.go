package oauthtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// scenarioTimeout bounds one scenario's waits (never a timing assertion).
const scenarioTimeout = 4 * time.Minute

// TestDelegatedCredentialsProvider is issue 33's delegated credentials end to end against
// zitadel/oidc's OpenID provider (the short form; TestDelegatedCredentialsHydra runs the same
// against ORY Hydra).
func TestDelegatedCredentialsProvider(t *testing.T) {
	runScenario(t, startProvider(t))
}

// TestDelegatedCredentialsHydra is the same scenario against ORY Hydra (-args -hydra).
func TestDelegatedCredentialsHydra(t *testing.T) {
	runScenario(t, runHydra(t))
}

// runScenario: a worker process serves whoami, a tool with Options.Credentials naming provider
// "idp" (srv) that returns the subject srv's userinfo endpoint answers for the token it was
// given; `toolgate worker --oauth-providers` serves the consent endpoint on the same credentials
// store (files, sealed with a codec key; the client secret from --secrets-dir). Through the CLI
// against `toolgate dev`:
//   - alice's first call waits awaiting consent, and toolgate status shows the authorization URL;
//   - both workers are killed (SIGKILL) and started again during the wait;
//   - the test follows the URL through srv as alice (login, consent); the redirect lands on the
//     worker's consent endpoint, and the call completes with alice's subject;
//   - bob likewise gets bob's own token, another one;
//   - carol refuses at the provider: her call ends TOOL_EXECUTION_FAILED without running;
//   - alice's next call uses her stored token without asking;
//   - toolgate credentials revoke makes alice's next call wait for consent again;
//   - a token whose lifetime ran out is refreshed: the next call gets a new one, no consent.
func runScenario(t *testing.T, srv Server) {
	if testing.Short() {
		t.Skip("end-to-end: starts toolgate dev and a worker process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	dev, err := testbin.StartDev(ctx, nil, "--in-memory", "--no-ui", "--port", "0", "--server-log-level", "warn")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Stop(30 * time.Second) })

	dir := t.TempDir()
	ports, err := freePorts(1)
	require.NoError(t, err)
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	redirect := "http://" + listen + "/oauth/callback"
	client, err := srv.NewClient(ctx, ClientSpec{RedirectURI: redirect})
	require.NoError(t, err)
	cfg := workerConfig{
		Address:       dev.Frontend(),
		Namespace:     dev.Namespace(),
		TaskQueue:     "oauth-" + strings.ToLower(rand.Text()[:8]),
		ProvidersFile: filepath.Join(dir, "providers.json"),
		SecretsDir:    filepath.Join(dir, "secrets"),
		StoreDir:      filepath.Join(dir, "credentials"),
		KeyFile:       filepath.Join(dir, "keys.txt"),
		ConsentListen: listen,
		RedirectURL:   redirect,
		Userinfo:      discover(t, ctx, srv.Issuer()).Userinfo,
	}
	writeWorkerFiles(t, cfg, srv.Issuer(), client)
	cli := &toolgateCLI{t: t, ctx: ctx, bin: bin, cfg: cfg}
	w := startWorker(t, cfg)
	endpoint := startConsentWorker(t, bin, cfg)

	// alice's first call waits for her consent; status shows where to give it.
	aliceURL := cli.startAwaitingConsent("alice-1", "alice")
	status := cli.run(0, "status", "toolcall-alice-1")
	assert.Contains(t, status, "awaiting consent to "+whoamiProvider)

	// Both workers die during the wait and come back; the consent still lands.
	w.kill()
	endpoint.kill()
	startWorker(t, cfg)             // stopped at cleanup
	startConsentWorker(t, bin, cfg) // likewise
	cli.consent(srv, aliceURL, "alice")
	alice1 := cli.result("toolcall-alice-1")
	assert.Equal(t, "alice", alice1.Subject, "alice's call ran with alice's token")

	// bob gets his own token.
	cli.consent(srv, cli.startAwaitingConsent("bob-1", "bob"), "bob")
	bob1 := cli.result("toolcall-bob-1")
	assert.Equal(t, "bob", bob1.Subject, "bob's call ran with bob's token")
	assert.NotEqual(t, alice1.Token, bob1.Token)

	// carol refuses at the provider: her call ends without running the tool.
	cli.authorize(srv, cli.startAwaitingConsent("carol-1", "carol"), "carol", false)
	refused := cli.errorResult("toolcall-carol-1")
	assert.Contains(t, refused, "refused consent to "+whoamiProvider+" (access_denied); the tool did not run")

	// alice's stored token serves her next call: no consent asked.
	alice2 := cli.completesWithoutConsent("alice-2", "alice")
	assert.Equal(t, whoamiOutput{Subject: "alice", Token: alice1.Token}, alice2)

	list := cli.run(0, "credentials", "list", "--credentials-dir", cfg.StoreDir)
	assert.Contains(t, list, "alice\t"+whoamiProvider+"\t")
	assert.Contains(t, list, "bob\t"+whoamiProvider+"\t")

	// A revoked token: alice's next call waits for her consent again. From now on the provider
	// issues access tokens shorter-lived than the client's one-minute expiry leeway, so the
	// stored token counts as expired at every later call.
	cli.run(0, "credentials", "revoke", "--principal", "alice", "--provider", whoamiProvider, "--credentials-dir", cfg.StoreDir)
	require.NoError(t, srv.SetAccessTokenLifetime(ctx, client.ID, 20*time.Second))
	cli.consent(srv, cli.startAwaitingConsent("alice-3", "alice"), "alice")
	alice3 := cli.result("toolcall-alice-3")
	assert.Equal(t, "alice", alice3.Subject)
	assert.NotEqual(t, alice1.Token, alice3.Token, "a new consent, a new token")

	// The expired token is refreshed: a new access token for alice, without her.
	alice4 := cli.completesWithoutConsent("alice-4", "alice")
	assert.Equal(t, "alice", alice4.Subject)
	assert.NotEqual(t, alice3.Token, alice4.Token, "the tool was given the refreshed token")
	assert.Equal(t, fingerprint(storedToken(t, ctx, cfg, "alice").AccessToken), alice4.Token,
		"the token the tool was given is the one the store keeps now")

	// bob's long-lived token is untouched by alice's revocation and refreshes.
	bob2 := cli.completesWithoutConsent("bob-2", "bob")
	assert.Equal(t, whoamiOutput{Subject: "bob", Token: bob1.Token}, bob2)
}

// writeWorkerFiles writes what cfg names: the providers file (provider "idp" at issuer, the
// client's ID, its secret by name), the secret's file and a codec key.
func writeWorkerFiles(t *testing.T, cfg workerConfig, issuer string, client Client) {
	t.Helper()
	require.NoError(t, os.Mkdir(cfg.SecretsDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfg.SecretsDir, "idp_client_secret"), []byte(client.Secret+"\n"), 0o600))
	providers, err := json.Marshal(map[string]any{"providers": []map[string]any{{
		"name":             whoamiProvider,
		"issuer":           issuer,
		"clientID":         client.ID,
		"clientSecretName": "idp_client_secret",
		"scopes":           Scopes,
	}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.ProvidersFile, providers, 0o600))
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	require.NoError(t, os.WriteFile(cfg.KeyFile, []byte("k1 "+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600))
}

// process is a child process of the scenario: exited is closed once it has exited; log holds its
// output. The scenario's worker (this test binary in worker mode) and its consent endpoint
// (`toolgate worker --oauth-providers`) are processes.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    *testbin.SyncBuffer
}

// newProcess is a process of cmd, not started.
func newProcess(cmd *exec.Cmd) *process {
	return &process{cmd: cmd, exited: make(chan struct{}), log: &testbin.SyncBuffer{}}
}

// kill sends SIGKILL and waits until the process has exited (nothing when it has already).
func (p *process) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// startWorker starts a worker process for cfg and returns once it printed "ready".
func startWorker(t *testing.T, cfg workerConfig) *process {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	w := newProcess(exec.Command(self))
	w.cmd.Env = testbin.ChildEnv(envWorker + "=" + string(raw))
	w.cmd.Stderr = w.log
	stdout, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && sc.Text() == "ready" {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		_ = w.cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("worker stderr:\n%s", testbin.Tail(w.log.String(), 6000))
		}
	})
	select {
	case ok := <-ready:
		require.True(t, ok, "the worker exited before it was ready:\n%s", testbin.Tail(w.log.String(), 4000))
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "the worker was not ready", testbin.Tail(w.log.String(), 4000))
	}
	return w
}

// startConsentWorker starts toolgate worker with the scenario's providers, store, keys and
// secrets, its consent endpoint on cfg.ConsentListen (its own task queue: it runs no whoami),
// and returns once the endpoint's /readyz answers 200.
func startConsentWorker(t *testing.T, bin string, cfg workerConfig) *process {
	t.Helper()
	w := newProcess(exec.Command(bin, "worker",
		"--address", cfg.Address, "--namespace", cfg.Namespace, "--task-queue", cfg.TaskQueue+"-consent",
		"--oauth-providers", cfg.ProvidersFile, "--consent-listen", cfg.ConsentListen,
		"--credentials-dir", cfg.StoreDir, "--codec-key", cfg.KeyFile, "--secrets-dir", cfg.SecretsDir))
	w.cmd.Env = testbin.ChildEnv()
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	require.NoError(t, w.cmd.Start())
	go func() { _ = w.cmd.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() {
			t.Logf("toolgate worker (consent endpoint):\n%s", testbin.Tail(w.log.String(), 6000))
		}
	})
	ready := func() bool {
		select {
		case <-w.exited:
			return true // reported below
		default:
		}
		resp, err := http.Get("http://" + cfg.ConsentListen + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	require.Eventually(t, ready, 2*time.Minute, 50*time.Millisecond, "the consent endpoint never got ready:\n%s", w.log)
	select {
	case <-w.exited:
		require.FailNow(t, "toolgate worker exited", testbin.Tail(w.log.String(), 4000))
	default:
	}
	return w
}

// toolgateCLI runs toolgate commands against the scenario's server and queue.
type toolgateCLI struct {
	t   *testing.T
	ctx context.Context
	bin string
	cfg workerConfig
}

// run runs toolgate args (with the server's address, namespace and task queue for the commands
// that take them), requires exit code want and returns stdout.
func (c *toolgateCLI) run(want int, args ...string) string {
	c.t.Helper()
	if args[0] != "credentials" {
		// The workers encrypt payloads with the store's codec key (--codec-key serves both).
		args = append(args, "--address", c.cfg.Address, "--namespace", c.cfg.Namespace, "--codec-key", c.cfg.KeyFile)
	}
	if args[0] == "call" {
		args = append(args, "--task-queue", c.cfg.TaskQueue)
	}
	cmd := exec.CommandContext(c.ctx, c.bin, args...)
	cmd.Env = testbin.ChildEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		require.NoError(c.t, err, "toolgate %v: %s", args, stderr.String())
	}
	require.Equal(c.t, want, code, "toolgate %v: stdout %s stderr %s", args, stdout.String(), stderr.String())
	return stdout.String()
}

// start starts whoami for principal as call id, detached.
func (c *toolgateCLI) start(id, principal string) string {
	c.t.Helper()
	return strings.TrimSpace(c.run(0, "call", "whoami", "{}", "--detach", "--id", id, "--as", principal))
}

// statusOf is what toolgate status --json says of the call.
type statusOf struct {
	State   string             `json:"state"`
	Result  *toolcore.Result   `json:"result"`
	Consent *wire.ConsentState `json:"consent"`
}

// outcome polls toolgate status --json until the call has a result or waits for consent with
// a URL.
func (c *toolgateCLI) outcome(workflowID string) statusOf {
	c.t.Helper()
	last := ""
	for {
		var st statusOf
		last = c.run(0, "status", workflowID, "--json")
		require.NoError(c.t, json.Unmarshal([]byte(last), &st))
		if st.Result != nil || (st.Consent != nil && st.Consent.Waiting && st.Consent.Request.URL != "") {
			return st
		}
		require.Equal(c.t, "running", st.State, "call %s ended without a result: %s", workflowID, last)
		select {
		case <-c.ctx.Done():
			require.FailNow(c.t, "no outcome", "call %s: %v; last status: %s", workflowID, c.ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startAwaitingConsent starts whoami for principal and returns the authorization URL the call
// waits on (awaiting consent, as toolgate status --json shows it).
func (c *toolgateCLI) startAwaitingConsent(id, principal string) string {
	c.t.Helper()
	wf := c.start(id, principal)
	st := c.outcome(wf)
	require.Nil(c.t, st.Result, "the call of %s completed without consent: %+v", principal, st.Result)
	assert.Equal(c.t, whoamiProvider, st.Consent.Request.Provider)
	return st.Consent.Request.URL
}

// completesWithoutConsent starts whoami for principal and returns its output; the call may not
// wait for consent.
func (c *toolgateCLI) completesWithoutConsent(id, principal string) whoamiOutput {
	c.t.Helper()
	wf := c.start(id, principal)
	st := c.outcome(wf)
	require.NotNil(c.t, st.Result, "the call of %s waits for consent: %+v", principal, st.Consent)
	return c.result(wf)
}

// consent follows authURL through srv as user, granting, and lets the browser land on the
// worker's consent endpoint.
func (c *toolgateCLI) consent(srv Server, authURL, user string) {
	c.t.Helper()
	c.authorize(srv, authURL, user, true)
}

// authorize follows authURL through srv as user, granting or refusing, and lets the browser land
// on the worker's consent endpoint.
func (c *toolgateCLI) authorize(srv Server, authURL, user string, grant bool) {
	c.t.Helper()
	b := NewBrowser()
	back, err := srv.Authorize(c.ctx, b, authURL, user, grant)
	require.NoError(c.t, err)
	require.Equal(c.t, c.cfg.RedirectURL, back.Scheme+"://"+back.Host+back.Path, "the provider sent %s to another place", user)
	page, err := b.Get(c.ctx, back.String())
	require.NoError(c.t, err)
	require.Equal(c.t, 200, page.Status, "the consent endpoint: %s", page.Body)
	want := "Consent recorded"
	if !grant {
		want = "Consent refused"
	}
	assert.Contains(c.t, page.Body, want)
}

// result waits for the call's result and decodes whoami's output.
func (c *toolgateCLI) result(workflowID string) whoamiOutput {
	c.t.Helper()
	var msg struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(c.run(0, "result", workflowID)), &msg))
	require.False(c.t, msg.IsError, "whoami failed: %s", msg.Content)
	var out whoamiOutput
	require.NoError(c.t, json.Unmarshal([]byte(msg.Content), &out), "content %s", msg.Content)
	return out
}

// errorResult waits for the call's result, requires it to be an error (toolgate result exits 1)
// and returns its content.
func (c *toolgateCLI) errorResult(workflowID string) string {
	c.t.Helper()
	var msg struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(c.run(1, "result", workflowID)), &msg))
	require.True(c.t, msg.IsError)
	return msg.Content
}

// storedToken reads principal's token at whoamiProvider from the scenario's store, with its key.
func storedToken(t *testing.T, ctx context.Context, cfg workerConfig, principal string) credentials.Token {
	t.Helper()
	keys, err := codec.LoadKeyring(cfg.KeyFile, nil)
	require.NoError(t, err)
	store := &credentials.FileStore{Dir: cfg.StoreDir, Keyring: keys}
	tok, found, err := store.Get(ctx, principal, whoamiProvider)
	require.NoError(t, err)
	require.True(t, found, "no stored token of %s", principal)
	return tok
}
