package main

import (
	"context"
	"sync"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
)

// codecKeysGauge is the gauge of the keys a process holds: 1 for each key ID and role it holds
// now, 0 for a pair it held before a reload.
const codecKeysGauge = "toolgate_codec_keys"

// addCodecKeyFlag adds --codec-key ($TOOLGATE_CODEC_KEY): where the payload encryption keys are.
func addCodecKeyFlag(cmd *cobra.Command, source *string) {
	fs := cmd.Flags()
	fs.StringVar(source, "codec-key", "", `encrypt and decrypt payloads (AES-256-GCM) with the keys in this file, reloaded when it changes, or in $NAME with "env:NAME" (empty: no encryption)`)
	bindEnv(fs, "codec-key", "TOOLGATE_CODEC_KEY")
}

// loadKeyring reads the keys --codec-key names once; nil when it is empty.
func loadKeyring(source string) (*codec.Keyring, error) {
	if source == "" {
		return nil, nil
	}
	keys, err := codec.LoadKeyring(source, nil)
	if err != nil {
		return nil, badInput(err)
	}
	return keys, nil
}

// dataConverter is the SDK's default converter, with the codec of keys when not nil.
func dataConverter(keys *codec.Keyring) converter.DataConverter {
	if keys == nil {
		return converter.GetDefaultDataConverter()
	}
	return codec.DataConverter(keys)
}

// codecKeys is the keyring of one command's --codec-key, shared by every client and server of
// the process: loaded at its first use, then following its file (codec.KeyringWatcher) for as
// long as the process runs.
type codecKeys struct {
	mu      sync.Mutex // guards watcher
	watcher *codec.KeyringWatcher

	gaugeMu  sync.Mutex // guards gauge and reported (taken inside the watcher's OnLoad)
	gauge    client.MetricsHandler
	reported map[codec.KeyInfo]bool
}

// open returns the watcher of source (nil for ""), starting it at the first call; later calls
// return the same one whatever their source.
func (k *codecKeys) open(source string, logger *zap.Logger) (*codec.KeyringWatcher, error) {
	if source == "" {
		return nil, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.watcher != nil {
		return k.watcher, nil
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	// The watcher lives as long as the process: every client of it decodes with its keys.
	w, err := codec.WatchKeyring(context.Background(), source, codec.WatchOptions{Logger: logger.Named("codec"), OnLoad: k.onLoad})
	if err != nil {
		return nil, badInput(err)
	}
	k.watcher = w
	logger.Info("codec keys loaded", zap.String("source", source), zap.String("encryptKeyId", w.Keyring().CurrentKeyID()), zap.Any("keys", w.Keyring().Keys()))
	return w, nil
}

// dataConverter is the SDK's default converter, with the codec of source's keys when it is set.
func (k *codecKeys) dataConverter(source string, logger *zap.Logger) (converter.DataConverter, error) {
	w, err := k.open(source, logger)
	if err != nil || w == nil {
		return converter.GetDefaultDataConverter(), err
	}
	return codec.DataConverter(w), nil
}

// report sets the toolgate_codec_keys gauge on h from now on (the first h only: a process has
// one metrics endpoint).
func (k *codecKeys) report(h client.MetricsHandler) {
	if h == nil {
		return
	}
	k.gaugeMu.Lock()
	first := k.gauge == nil
	if first {
		k.gauge, k.reported = h, map[codec.KeyInfo]bool{}
	}
	k.gaugeMu.Unlock()
	k.mu.Lock()
	w := k.watcher
	k.mu.Unlock()
	if first && w != nil {
		k.onLoad(w.Keyring())
	}
}

// onLoad sets the gauge to the keys of ring: 1 for each held, 0 for those held before.
func (k *codecKeys) onLoad(ring *codec.Keyring) {
	k.gaugeMu.Lock()
	defer k.gaugeMu.Unlock()
	if k.gauge == nil {
		return
	}
	held := map[codec.KeyInfo]bool{}
	for _, key := range ring.Keys() {
		held[key] = true
	}
	for key := range k.reported {
		if !held[key] {
			k.gauge.WithTags(map[string]string{"key_id": key.ID, "role": key.Role}).Gauge(codecKeysGauge).Update(0)
		}
	}
	for key := range held {
		k.gauge.WithTags(map[string]string{"key_id": key.ID, "role": key.Role}).Gauge(codecKeysGauge).Update(1)
		k.reported[key] = true
	}
}
