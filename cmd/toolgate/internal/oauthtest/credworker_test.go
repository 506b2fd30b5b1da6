package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// The scenario's tool worker is this test binary run again with $OAUTHTEST_WORKER set to a
// workerConfig (JSON): TestMain then runs runWorker instead of the tests. The whoami tool exists
// only here. The consent endpoint is `toolgate worker --oauth-providers` (another process
// sharing the credentials store), as in a fleet where one worker serves the endpoint and every
// worker's calls wait on it. The tests kill both (SIGKILL) and start them again.

// envWorker selects the worker mode of the test binary; its value is a workerConfig.
const envWorker = "OAUTHTEST_WORKER"

// workerConfig is what the worker process is given: addresses and paths only (the client secret
// is a file in SecretsDir, the keys a file; neither is in the environment or argv).
type workerConfig struct {
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	TaskQueue string `json:"taskQueue"`
	// ProvidersFile is the credentials.LoadProviders file naming provider "idp".
	ProvidersFile string `json:"providersFile"`
	// SecretsDir holds the client secret the providers file names (secrets.Dir).
	SecretsDir string `json:"secretsDir"`
	// StoreDir is the credentials.FileStore's directory, KeyFile its codec keyring.
	StoreDir string `json:"storeDir"`
	KeyFile  string `json:"keyFile"`
	// ConsentListen is the consent endpoint's host:port (toolgate worker --consent-listen);
	// RedirectURL its URL (the client's redirect URI at the provider), the same across restarts.
	ConsentListen string `json:"consentListen"`
	RedirectURL   string `json:"redirectURL"`
	// Userinfo is the provider's userinfo endpoint, which whoami asks with the token.
	Userinfo string `json:"userinfo"`
}

// whoamiProvider is the provider whoami's credential names.
const whoamiProvider = "idp"

// whoamiOutput is whoami's result: the subject the provider's userinfo endpoint answered for the
// token the tool was given, and a fingerprint of that token (the first 8 bytes of its SHA-256,
// in hex: it tells tokens apart and reveals nothing of them).
type whoamiOutput struct {
	Subject string `json:"subject"`
	Token   string `json:"token"`
}

// whoamiTool asks userinfo who the calling principal's token at "idp" belongs to.
func whoamiTool(userinfo string) (toolcore.Tool, error) {
	httpc := &http.Client{Timeout: 30 * time.Second}
	return toolcore.Define(toolcore.Definition[struct{}]{
		Name:        "whoami",
		Description: "Says whose token at the identity provider the calling principal's call was given.",
		Options: toolcore.Options{
			SideEffect:  toolcore.ReadOnly,
			Credentials: []toolcore.Credential{{Provider: whoamiProvider, Scopes: Scopes}},
		},
		Execute: func(ctx context.Context, _ struct{}) (any, error) {
			token, err := toolcore.AccessToken(ctx, whoamiProvider)
			if err != nil {
				return nil, err
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, userinfo, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := httpc.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("userinfo answered %d", resp.StatusCode)
			}
			var info struct {
				Sub string `json:"sub"`
			}
			if err := json.Unmarshal(body, &info); err != nil {
				return nil, fmt.Errorf("userinfo: %w", err)
			}
			return whoamiOutput{Subject: info.Sub, Token: fingerprint(token)}, nil
		},
	})
}

// runWorker is the tool worker process: the whoami tool on cfg's task queue, with the OAuth
// client over a FileStore of cfg.StoreDir, as toolgate worker --oauth-providers sets them up
// (without the consent endpoint: toolgate worker serves it on the same store). It prints "ready"
// once it polls, and runs until SIGINT, SIGTERM or SIGKILL.
func runWorker(raw string) error {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("%s: %w", envWorker, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger, err := zap.NewProduction() // JSON lines on stderr
	if err != nil {
		return err
	}
	keys, err := codec.LoadKeyring(cfg.KeyFile, nil)
	if err != nil {
		return err
	}
	store := &credentials.FileStore{Dir: cfg.StoreDir, Keyring: keys}
	if err := store.Init(); err != nil {
		return err
	}
	providers, err := credentials.LoadProviders(cfg.ProvidersFile)
	if err != nil {
		return err
	}
	oauth, err := credentials.NewOAuth(credentials.OAuthOptions{
		Providers:   providers,
		Store:       store,
		Secrets:     &secrets.Dir{Path: cfg.SecretsDir},
		RedirectURL: cfg.RedirectURL,
	})
	if err != nil {
		return err
	}
	// Payloads are encrypted with the same keys, as toolgate worker --codec-key does: the consent
	// endpoint's signal and every client of the calls use them.
	converter := codec.DataConverter(keys)
	sdk, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: cfg.Address, Namespace: cfg.Namespace,
		DataConverter: converter, Logger: logging.Temporal(logger)})
	if err != nil {
		return err
	}
	defer sdk.Close()
	tool, err := whoamiTool(cfg.Userinfo)
	if err != nil {
		return err
	}
	reg, err := toolcore.NewRegistry(tool)
	if err != nil {
		return err
	}
	w, err := worker.New(sdk, cfg.Namespace, reg, worker.Options{TaskQueue: cfg.TaskQueue, Logger: logger, Credentials: oauth, DataConverter: converter})
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	w.Stop()
	return nil
}

// fingerprint tells tokens apart without revealing them: the first 8 bytes of the SHA-256, hex.
func fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}
