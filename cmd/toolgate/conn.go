package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// connOptions are the Temporal connection flags, named as in the Temporal CLI, with its
// environment variables.
type connOptions struct {
	address                    string
	namespace                  string
	apiKey                     string
	tls                        bool
	tlsCertPath                string
	tlsKeyPath                 string
	tlsCAPath                  string
	tlsServerName              string
	tlsDisableHostVerification bool
	// tlsSet records that --tls (or $TEMPORAL_TLS) was given, so --tls=false can turn off the
	// TLS an API key would otherwise imply.
	tlsSet func() bool
	// metrics receives the SDK's and toolgate's metrics (not a flag: set from --metrics-listen by
	// the commands that run a worker). Optional: default nil, no metrics.
	metrics client.MetricsHandler
	// codecKey is --codec-key: the payload encryption keys, "" for none.
	codecKey string
	// keys is the process's keyring of codecKey, shared by the copies of these options (set by
	// addConnFlags). Optional: default nil, the keys are read once per client.
	keys *codecKeys
	// tracer, when set (not a flag: from --otlp-endpoint, otel.go), traces the client's calls:
	// the Temporal client carries toolgate's client tracing interceptor and toolgate's client
	// makes its call spans with it. Optional: default nil, no client spans.
	tracer trace.TracerProvider
}

func addConnFlags(cmd *cobra.Command, o *connOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.address, "address", "127.0.0.1:7233", "Temporal frontend host:port")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "Temporal namespace")
	fs.StringVar(&o.apiKey, "api-key", "", "API key sent as a bearer token (turns TLS on unless --tls=false); set $TEMPORAL_API_KEY instead, the command line is world-readable")
	fs.BoolVar(&o.tls, "tls", false, "use TLS (on by default when an API key or any other TLS option is given)")
	fs.StringVar(&o.tlsCertPath, "tls-cert-path", "", "client certificate (PEM) for mTLS")
	fs.StringVar(&o.tlsKeyPath, "tls-key-path", "", "client private key (PEM) for mTLS")
	fs.StringVar(&o.tlsCAPath, "tls-ca-path", "", "CA certificates (PEM) to verify the server with, instead of the system pool")
	fs.StringVar(&o.tlsServerName, "tls-server-name", "", "server name to verify the server certificate against (SNI)")
	fs.BoolVar(&o.tlsDisableHostVerification, "tls-disable-host-verification", false, "do not verify the server's certificate (testing only)")
	for flag, env := range map[string]string{
		"address":                       "TEMPORAL_ADDRESS",
		"namespace":                     "TEMPORAL_NAMESPACE",
		"api-key":                       "TEMPORAL_API_KEY",
		"tls":                           "TEMPORAL_TLS",
		"tls-cert-path":                 "TEMPORAL_TLS_CERT_PATH",
		"tls-key-path":                  "TEMPORAL_TLS_KEY_PATH",
		"tls-ca-path":                   "TEMPORAL_TLS_CA_PATH",
		"tls-server-name":               "TEMPORAL_TLS_SERVER_NAME",
		"tls-disable-host-verification": "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION",
	} {
		bindEnv(fs, flag, env)
	}
	o.tlsSet = func() bool { return fs.Changed("tls") }
	addCodecKeyFlag(cmd, &o.codecKey)
	o.keys = new(codecKeys)
}

// tlsConfig returns the TLS configuration the options ask for, nil for plaintext, and whether TLS
// was explicitly turned off (which also stops an API key from implying it).
func (o connOptions) tlsConfig() (cfg *tls.Config, disabled bool, err error) {
	explicit := o.tlsSet != nil && o.tlsSet()
	if explicit && !o.tls {
		if o.tlsCertPath != "" || o.tlsKeyPath != "" || o.tlsCAPath != "" {
			return nil, false, fmt.Errorf("--tls=false contradicts the TLS certificate options")
		}
		return nil, true, nil
	}
	wanted := o.tls || o.tlsCertPath != "" || o.tlsKeyPath != "" || o.tlsCAPath != "" ||
		o.tlsServerName != "" || o.tlsDisableHostVerification
	if !wanted {
		// An API key alone turns TLS on inside the SDK (plain tls.Config{}).
		return nil, false, nil
	}
	cfg = &tls.Config{
		ServerName:         o.tlsServerName,
		InsecureSkipVerify: o.tlsDisableHostVerification, //nolint:gosec // opt-in, documented as testing only
		MinVersion:         tls.VersionTLS12,
	}
	if (o.tlsCertPath == "") != (o.tlsKeyPath == "") {
		return nil, false, fmt.Errorf("--tls-cert-path and --tls-key-path go together")
	}
	if o.tlsCertPath != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCertPath, o.tlsKeyPath)
		if err != nil {
			return nil, false, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if o.tlsCAPath != "" {
		pem, err := os.ReadFile(o.tlsCAPath)
		if err != nil {
			return nil, false, fmt.Errorf("read CA certificates: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("read CA certificates: no PEM certificate in %s", o.tlsCAPath)
		}
		cfg.RootCAs = pool
	}
	return cfg, false, nil
}

// clientOptions builds the SDK client options; the SDK logs into logger.
func (o connOptions) clientOptions(logger *zap.Logger) (client.Options, error) {
	cfg, disabled, err := o.tlsConfig()
	if err != nil {
		return client.Options{}, badInput(err)
	}
	dc, err := o.dataConverter(logger)
	if err != nil {
		return client.Options{}, err
	}
	opts := client.Options{
		DataConverter:  dc,
		HostPort:       o.address,
		Namespace:      o.namespace,
		Logger:         logging.Temporal(logger),
		MetricsHandler: o.metrics,
		ConnectionOptions: client.ConnectionOptions{
			TLS:         cfg,
			TLSDisabled: disabled,
			// Lets a worker answer a call another client started with a non-ASCII workflow ID.
			DialOptions: []grpc.DialOption{worker.DialOption()},
		},
	}
	if o.metrics != nil {
		// toolgate_billable_actions_total: what this process's client costs on Temporal Cloud.
		opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, worker.NewActionCounter(o.metrics).DialOption())
	}
	if o.apiKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(o.apiKey)
	}
	if o.tracer != nil {
		opts.Interceptors = append(opts.Interceptors, tgclient.TracingInterceptor(o.tracer))
	}
	if loopback.Address(o.address) {
		// The SDK gzips every gRPC message; over loopback that costs about 5 % of a call's CPU
		// (BENCHMARKS.md) and saves nothing. The server answers uncompressed requests uncompressed.
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	return opts, nil
}

// dial connects to the frontend and checks it answers.
func (o connOptions) dial(ctx context.Context, logger *zap.Logger) (client.Client, error) {
	opts, err := o.clientOptions(logger)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", o.address, o.namespace, err)
	}
	return c, nil
}

// addTaskQueueFlag adds --task-queue ($TOOLGATE_TASK_QUEUE).
func addTaskQueueFlag(cmd *cobra.Command, taskQueue *string) {
	fs := cmd.Flags()
	fs.StringVar(taskQueue, "task-queue", wire.DefaultTaskQueue, "task queue the worker polls and calls are started on")
	bindEnv(fs, "task-queue", "TOOLGATE_TASK_QUEUE")
}

// defaultWorkflowCache is the default of --workflow-cache.
const defaultWorkflowCache = 256

// addWorkflowCacheFlag adds --workflow-cache: the SDK's sticky workflow cache, which every worker
// of the process shares.
func addWorkflowCacheFlag(cmd *cobra.Command, size *int) {
	cmd.Flags().IntVar(size, "workflow-cache", defaultWorkflowCache,
		"workflows kept in memory between their tasks, for all workers of the process; beyond it the least recently used are evicted and replayed from history at their next task")
}

// applyWorkflowCache sizes the sticky workflow cache; it must run before the first worker starts.
func applyWorkflowCache(size int) error {
	if size < 1 {
		return badInput(fmt.Errorf("--workflow-cache %d: want at least 1", size))
	}
	sdkworker.SetStickyWorkflowCacheSize(size)
	return nil
}

// toolgate returns the agent-facing client over c for these connection options.
// Its data converter must be the one c was dialed with (the recorded call and progress are
// decoded with it).
func (o connOptions) toolgate(c client.Client, taskQueue, scope string) *tgclient.Client {
	return tgclient.New(c, o.toolgateOptions(taskQueue, scope))
}

// toolgateOptions are the options of toolgate's client, for a caller that adds its own.
func (o connOptions) toolgateOptions(taskQueue, scope string) tgclient.Options {
	dc, _ := o.dataConverter(nil) // dial has loaded the same keys without error
	return tgclient.Options{TaskQueue: taskQueue, Scope: scope, Namespace: o.namespace, DataConverter: dc, TracerProvider: o.tracer}
}

// dataConverter is the converter of --codec-key: the process's reloading keyring when the options
// came from addConnFlags (its toolgate_codec_keys gauge on o.metrics), else keys read once.
func (o connOptions) dataConverter(logger *zap.Logger) (converter.DataConverter, error) {
	if o.keys == nil {
		keys, err := loadKeyring(o.codecKey)
		return dataConverter(keys), err
	}
	dc, err := o.keys.dataConverter(o.codecKey, logger)
	if err == nil && o.codecKey != "" {
		o.keys.report(o.metrics)
	}
	return dc, err
}
