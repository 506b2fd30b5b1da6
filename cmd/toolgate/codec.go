package main

import (
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/codec"
)

// addCodecKeyFlag adds --codec-key ($TOOLGATE_CODEC_KEY): where the payload encryption keys are.
func addCodecKeyFlag(cmd *cobra.Command, source *string) {
	fs := cmd.Flags()
	fs.StringVar(source, "codec-key", "", `encrypt and decrypt payloads (AES-256-GCM) with the keys in this file, or in $NAME with "env:NAME" (empty: no encryption)`)
	bindEnv(fs, "codec-key", "TOOLGATE_CODEC_KEY")
}

// loadKeyring reads the keys --codec-key names; nil when it is empty.
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
