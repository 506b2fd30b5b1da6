package codec_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/codec"
)

// keyFile is a key file as LoadKeyring reads it (these keys are examples: generate your own with
// `openssl rand -base64 32`).
const keyFile = `# newest first: it encrypts
2026-12 ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=
2026-11 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=
`

// Every client (worker, agent, CLI) gets the same data converter, in
// go.temporal.io/sdk/client.Options.DataConverter (and client.Options.DataConverter of toolgate's
// client): tool arguments and results reach the Temporal server as ciphertext.
func ExampleDataConverter() {
	keys, err := codec.ParseKeyring(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	dc := codec.DataConverter(keys)

	payload, err := dc.ToPayload(map[string]string{"card": "4111 1111 1111 1111"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(payload.Metadata[codec.MetadataEncoding]), string(payload.Metadata[codec.MetadataKeyID]))
	fmt.Println("plaintext stored:", bytes.Contains(payload.Data, []byte("4111")))

	var args map[string]string
	if err := dc.FromPayload(payload, &args); err != nil {
		log.Fatal(err)
	}
	fmt.Println(args["card"])
	// Output:
	// binary/encrypted 2026-12
	// plaintext stored: false
	// 4111 1111 1111 1111
}

// Keys rotate without rewriting history: the new key goes first and encrypts, the old one stays
// for as long as payloads encrypted with it are retained.
func ExampleNewKeyring() {
	old := codec.Key{ID: "2026-11", Secret: bytes.Repeat([]byte{1}, codec.KeySize)}
	current := codec.Key{ID: "2026-12", Secret: bytes.Repeat([]byte{2}, codec.KeySize)}
	before, err := codec.NewKeyring(old)
	if err != nil {
		log.Fatal(err)
	}
	after, err := codec.NewKeyring(current, old)
	if err != nil {
		log.Fatal(err)
	}
	recorded, err := codec.DataConverter(before).ToPayload("recorded before the rotation")
	if err != nil {
		log.Fatal(err)
	}

	var s string
	if err := codec.DataConverter(after).FromPayload(recorded, &s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(s)
	fmt.Println(after) // key IDs only, never key material
	// Output:
	// recorded before the rotation
	// codec.Keyring{current: "2026-12", keys: 2}
}

// The codec server lets the Temporal Web UI and CLI show encrypted payloads to operators who
// hold the keys. Here the SDK's remote codec, the CLI's side of the protocol, decodes a payload
// through it; a real one listens on loopback (or behind a Token) with the Web UI's origin in
// AllowedOrigins.
func ExampleHandler() {
	keys, err := codec.ParseKeyring(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	server := httptest.NewServer(codec.Handler(codec.New(keys), codec.HandlerOptions{
		AllowedOrigins: []string{"http://127.0.0.1:8233"},
	}))
	defer server.Close()

	encrypted, err := codec.DataConverter(keys).ToPayload("Oslo")
	if err != nil {
		log.Fatal(err)
	}
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: server.URL})
	decoded, err := remote.Decode([]*commonpb.Payload{encrypted})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(decoded[0].Metadata[codec.MetadataEncoding]), string(decoded[0].Data))
	// Output: json/plain "Oslo"
}

// A KeyringWatcher follows its key file, so keys rotate in two phases without a restart: first
// every process learns the new key (marked decrypt-only), then it encrypts. Reload reads the file
// at once; running processes do so every two seconds.
func ExampleWatchKeyring() {
	dir, err := os.MkdirTemp("", "keys")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "keys.txt")
	old := "2026-12 ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=\n"
	next := "2027-01 QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8="
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		log.Fatal(err)
	}
	keys, err := codec.WatchKeyring(context.Background(), path, codec.WatchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer keys.Close()
	dc := codec.DataConverter(keys) // every client's converter follows the file

	for _, phase := range []string{next + " decrypt-only\n" + old, next + "\n" + old} {
		if err := os.WriteFile(path, []byte(phase), 0o600); err != nil {
			log.Fatal(err)
		}
		if _, err := keys.Reload(); err != nil {
			log.Fatal(err)
		}
		p, err := dc.ToPayload("x")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(keys.Keyring().Keys(), "encrypts with", string(p.Metadata[codec.MetadataKeyID]))
	}
	// Output:
	// [{2027-01 decrypt} {2026-12 encrypt}] encrypts with 2026-12
	// [{2027-01 encrypt} {2026-12 decrypt}] encrypts with 2027-01
}
