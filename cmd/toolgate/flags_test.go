package main

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// parseConn parses args into connection options with env, as a command would.
func parseConn(t *testing.T, args []string, env map[string]string) (connOptions, error) {
	t.Helper()
	var o connOptions
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	addConnFlags(cmd, &o)
	require.NoError(t, cmd.ParseFlags(args))
	err := applyEnv(cmd, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return o, err
}

func TestConnFlagsPrecedence(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		wantAddress   string
		wantNamespace string
	}{
		{name: "defaults", wantAddress: "127.0.0.1:7233", wantNamespace: "default"},
		{
			name:          "environment over default",
			env:           map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "prod"},
			wantAddress:   "temporal:7233",
			wantNamespace: "prod",
		},
		{
			name:          "flag over environment",
			args:          []string{"--address", "flag:7233", "-n", "flagged"},
			env:           map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "prod"},
			wantAddress:   "flag:7233",
			wantNamespace: "flagged",
		},
		{
			name:          "empty environment variable is unset",
			env:           map[string]string{"TEMPORAL_ADDRESS": ""},
			wantAddress:   "127.0.0.1:7233",
			wantNamespace: "default",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseConn(t, tt.args, tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAddress, o.address)
			assert.Equal(t, tt.wantNamespace, o.namespace)
		})
	}
}

func TestTLSConfig(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		env          map[string]string
		wantTLS      bool
		wantDisabled bool
		wantServer   string
		wantInsecure bool
		wantErr      string
	}{
		{name: "plaintext by default"},
		{name: "api key alone leaves TLS to the SDK", env: map[string]string{"TEMPORAL_API_KEY": "k"}},
		{name: "--tls", args: []string{"--tls"}, wantTLS: true},
		{name: "TEMPORAL_TLS", env: map[string]string{"TEMPORAL_TLS": "true"}, wantTLS: true},
		{name: "server name implies TLS", args: []string{"--tls-server-name", "ns.tmprl.cloud"}, wantTLS: true, wantServer: "ns.tmprl.cloud"},
		{name: "host verification off implies TLS", env: map[string]string{"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "true"}, wantTLS: true, wantInsecure: true},
		{name: "--tls=false turns off the API key's TLS", args: []string{"--tls=false", "--api-key", "k"}, wantDisabled: true},
		{name: "TEMPORAL_TLS=false too", env: map[string]string{"TEMPORAL_TLS": "false", "TEMPORAL_API_KEY": "k"}, wantDisabled: true},
		{name: "cert without key", args: []string{"--tls-cert-path", "c.pem"}, wantErr: "go together"},
		{name: "unreadable CA", args: []string{"--tls-ca-path", "/does/not/exist.pem"}, wantErr: "read CA certificates"},
		{name: "--tls=false with certificates", args: []string{"--tls=false", "--tls-ca-path", "ca.pem"}, wantErr: "contradicts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseConn(t, tt.args, tt.env)
			require.NoError(t, err)
			cfg, disabled, err := o.tlsConfig()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantDisabled, disabled)
			require.Equal(t, tt.wantTLS, cfg != nil)
			if cfg != nil {
				assert.Equal(t, tt.wantServer, cfg.ServerName)
				assert.Equal(t, tt.wantInsecure, cfg.InsecureSkipVerify)
				assert.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)
			}
		})
	}
}

func TestClientOptionsCarryAPIKey(t *testing.T) {
	o, err := parseConn(t, nil, map[string]string{"TEMPORAL_API_KEY": "secret", "TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233"})
	require.NoError(t, err)
	opts, err := o.clientOptions(nil)
	require.NoError(t, err)
	assert.Equal(t, "ns.acct.tmprl.cloud:7233", opts.HostPort)
	assert.NotNil(t, opts.Credentials)
	assert.NotNil(t, opts.Logger)
}

// Over loopback the client sends gRPC messages uncompressed; anywhere else it keeps the SDK's gzip.
func TestClientOptionsNoGzipOnLoopback(t *testing.T) {
	for address, loopback := range map[string]bool{
		"127.0.0.1:7233":           true,
		"localhost:7233":           true,
		"[::1]:7233":               true,
		"ns.acct.tmprl.cloud:7233": false,
		"10.0.0.7:7233":            false,
		"127.0.0.1":                false, // not host:port: the SDK will refuse it anyway
	} {
		o, err := parseConn(t, nil, map[string]string{"TEMPORAL_ADDRESS": address})
		require.NoError(t, err)
		opts, err := o.clientOptions(nil)
		require.NoError(t, err)
		if loopback {
			assert.IsType(t, &client.GrpcCompressionNone{}, opts.ConnectionOptions.GrpcCompression, address)
		} else {
			assert.Nil(t, opts.ConnectionOptions.GrpcCompression, address)
		}
	}
}

func TestInvalidEnvValue(t *testing.T) {
	_, err := parseConn(t, nil, map[string]string{"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "sometimes"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "$TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"), err.Error())
}

func TestDefaultDataDir(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "XDG_DATA_HOME", env: map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, want: "/x/toolgate"},
		{name: "relative XDG_DATA_HOME is ignored", env: map[string]string{"XDG_DATA_HOME": "x", "HOME": "/h"}, want: "/h/.local/share/toolgate"},
		{name: "HOME", env: map[string]string{"HOME": "/h"}, want: "/h/.local/share/toolgate"},
		{name: "nothing", want: ".toolgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := defaultDataDir(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWorkflowIDTarget(t *testing.T) {
	tests := []struct {
		name    string
		give    targetOptions
		args    []string
		want    string
		wantErr bool
	}{
		{name: "workflow ID", args: []string{"toolcall-a"}, want: "toolcall-a"},
		{name: "call ID", give: targetOptions{callID: "a"}, want: "toolcall-a"},
		{name: "call ID in a scope", give: targetOptions{callID: "a", scope: "run-7"}, want: "run-7/toolcall-a"},
		{name: "neither", wantErr: true},
		{name: "blank", args: []string{" "}, wantErr: true},
		{name: "both", give: targetOptions{callID: "a"}, args: []string{"toolcall-a"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.give.workflowID(tt.args)
			if tt.wantErr {
				code, _ := classify(err)
				assert.Equal(t, ExitUsage, code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
