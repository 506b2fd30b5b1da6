package callbacks_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/callbacks"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// A worker whose tools hand out callback URLs, and the endpoint that serves them: the signing key
// is the file /run/secrets/callback_key (one key a line, at least 32 bytes), the public URL a
// reverse proxy's that forwards to :8251.
func Example() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	endpoint, err := callbacks.New(ctx, callbacks.Options{
		URL:    "https://hooks.example.com/callback",
		Keys:   &secrets.Dir{Path: "/run/secrets"},
		Client: c,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(endpoint.Path()+"/", endpoint)
	srv := &http.Server{Addr: ":8251", Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { log.Print(srv.ListenAndServe()) }()

	reg, err := toolcore.NewRegistry( /* tools that call toolcore.Callback */ )
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(c, "default", reg, worker.Options{Callbacks: endpoint})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
