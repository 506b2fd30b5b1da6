package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/codec"
)

// codecKeysTimeout bounds one metrics scrape of toolgate codec keys.
const codecKeysTimeout = 10 * time.Second

// maxScrapeBytes bounds one metrics page read by toolgate codec keys.
const maxScrapeBytes = 16 << 20

func newCodecCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "codec",
		Short: "Inspect payload encryption keys (see codec-server to serve them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_ = cmd.Help()
			return badInput(errors.New("missing subcommand"))
		},
	}
	cmd.AddCommand(newCodecKeysCommand(a))
	return cmd
}

type codecKeysOptions struct {
	codecKey string
	metrics  []string
}

func newCodecKeysCommand(a *app) *cobra.Command {
	var o codecKeysOptions
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Show a key file's key IDs and roles, and which keys running processes hold",
		Long: `Print the key IDs of --codec-key with their role ("encrypt": the one key that encrypts;
"decrypt": every other key), never key material. With --metrics, also read the
toolgate_codec_keys gauge of each running process (toolgate worker, dev, mcp and codec-server
serve it on their --metrics-listen endpoint) and print the keys each holds.

It exits 0 when every process holds every key of the file in the file's role, and 1 (naming what
differs) when one lacks a key, encrypts with another, or cannot be read: run it between the two
phases of a rotation (docs/operations.md, Encrypted payloads) and start phase 2 only once it
exits 0 with the new key marked decrypt-only in the file. Processes reload the file within 2 s
of a change; a Kubernetes Secret reaches its pods within about a minute.

Output, one line each:

  file keys.txt: 2027-01 decrypt, 2026-12 encrypt
  http://10.0.0.5:9464/metrics: 2027-01 decrypt, 2026-12 encrypt
  http://10.0.0.6:9464/metrics: 2026-12 encrypt (lacks 2027-01)`,
		Example: `  toolgate codec keys --codec-key keys.txt
  toolgate codec keys --codec-key keys.txt --metrics http://10.0.0.5:9464/metrics --metrics http://10.0.0.6:9464/metrics`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCodecKeys(cmd.Context(), a, o)
		},
	}
	addCodecKeyFlag(cmd, &o.codecKey)
	cmd.Flags().StringArrayVar(&o.metrics, "metrics", nil, "a process's metrics URL (http://host:port/metrics) to read its toolgate_codec_keys from (repeat for several)")
	return cmd
}

func runCodecKeys(ctx context.Context, a *app, o codecKeysOptions) error {
	if o.codecKey == "" {
		return badInput(errors.New("--codec-key is required"))
	}
	ring, err := loadKeyring(o.codecKey)
	if err != nil {
		return err
	}
	want := ring.Keys()
	var b strings.Builder
	fmt.Fprintf(&b, "file %s: %s\n", o.codecKey, formatKeys(want))
	differ := 0
	for _, url := range o.metrics {
		held, err := scrapeCodecKeys(ctx, url)
		switch {
		case err != nil:
			differ++
			fmt.Fprintf(&b, "%s: unknown (%v)\n", url, err)
		case len(held) == 0:
			differ++
			fmt.Fprintf(&b, "%s: no toolgate_codec_keys (no --codec-key, or not a toolgate process)\n", url)
		default:
			orderLike(want, held)
			diff := keyDifference(want, held)
			if diff != "" {
				differ++
				diff = " (" + diff + ")"
			}
			fmt.Fprintf(&b, "%s: %s%s\n", url, formatKeys(held), diff)
		}
	}
	if _, err := io.WriteString(a.out, b.String()); err != nil {
		return fmt.Errorf("print keys: %w", err)
	}
	if differ > 0 {
		return &exitError{code: ExitErrorResult, err: fmt.Errorf("%d of %d processes do not hold the file's keys in its roles", differ, len(o.metrics))}
	}
	return nil
}

func formatKeys(keys []codec.KeyInfo) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.ID + " " + k.Role
	}
	return strings.Join(parts, ", ")
}

// orderLike sorts held in the order of want, keys want lacks last.
func orderLike(want, held []codec.KeyInfo) {
	pos := func(k codec.KeyInfo) int {
		if i := slices.IndexFunc(want, func(w codec.KeyInfo) bool { return w.ID == k.ID }); i >= 0 {
			return i
		}
		return len(want)
	}
	slices.SortStableFunc(held, func(x, y codec.KeyInfo) int { return pos(x) - pos(y) })
}

// keyDifference says how held differs from want ("" when it holds every key in its role).
func keyDifference(want, held []codec.KeyInfo) string {
	var lacks, roles []string
	for _, w := range want {
		i := slices.IndexFunc(held, func(h codec.KeyInfo) bool { return h.ID == w.ID })
		switch {
		case i < 0:
			lacks = append(lacks, w.ID)
		case held[i].Role != w.Role:
			roles = append(roles, fmt.Sprintf("%s is %s here, %s in the file", w.ID, held[i].Role, w.Role))
		}
	}
	var out []string
	if len(lacks) > 0 {
		out = append(out, "lacks "+strings.Join(lacks, ", "))
	}
	return strings.Join(append(out, roles...), "; ")
}

// codecKeysSample is one series of the gauge in the Prometheus text format.
var codecKeysSample = regexp.MustCompile(`^` + codecKeysGauge + `\{([^}]*)\}\s+(\S+)`)

var labelPair = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// scrapeCodecKeys reads the keys a process holds (toolgate_codec_keys series at 1) from its
// metrics page at url.
func scrapeCodecKeys(ctx context.Context, url string) ([]codec.KeyInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, codecKeysTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, badInput(fmt.Errorf("--metrics %s: %w", url, err))
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: %s", resp.Status)
	}
	var held []codec.KeyInfo
	sc := bufio.NewScanner(io.LimitReader(resp.Body, maxScrapeBytes))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := codecKeysSample.FindStringSubmatch(sc.Text())
		if m == nil || m[2] != "1" {
			continue
		}
		var k codec.KeyInfo
		for _, l := range labelPair.FindAllStringSubmatch(m[1], -1) {
			switch l[1] {
			case "key_id":
				k.ID = l[2]
			case "role":
				k.Role = l[2]
			}
		}
		if k.ID != "" {
			held = append(held, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	// Series come sorted by label; show them by role (encrypt first), then ID.
	slices.SortFunc(held, func(x, y codec.KeyInfo) int {
		if x.Role != y.Role {
			return strings.Compare(y.Role, x.Role)
		}
		return strings.Compare(x.ID, y.ID)
	})
	return held, nil
}
