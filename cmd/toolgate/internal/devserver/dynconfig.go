package devserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/server/common/dynamicconfig"
)

// ParseDynamicConfigValue parses KEY=VALUE, the form of the Temporal CLI's
// --dynamic-config-value: VALUE is JSON (strings need quotes: 'k="v"'), checked against the
// server's setting of that key.
func ParseDynamicConfigValue(s string) (key string, value any, err error) {
	key, raw, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", nil, fmt.Errorf("dynamic config value %q: want KEY=VALUE, VALUE in JSON", s)
	}
	if err := json.Unmarshal([]byte(raw), &value); err != nil {
		return "", nil, fmt.Errorf("dynamic config value %s: VALUE is not JSON (strings need quotes): %w", key, err)
	}
	if _, err := checkDynamicConfigValue(key, value); err != nil {
		return "", nil, err
	}
	return key, value, nil
}

// checkDynamicConfigValue returns value as the server's dynamic config holds it (the server's
// own loader converts it), or an error when the server does not know key or the setting refuses
// the value. The server itself only warns about both and runs with its default.
func checkDynamicConfigValue(key string, value any) (any, error) {
	text, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("dynamic config value %s: %w", key, err)
	}
	var lr dynamicconfig.YamlLoader
	k := dynamicconfig.MakeKey(key)
	lr.LoadValue(k, fmt.Appendf(nil, `[{"value": %s}]`, text)) // JSON is YAML
	if problems := append(lr.Errors, lr.Warnings...); len(problems) > 0 {
		return nil, fmt.Errorf("dynamic config value %s=%s: %w", key, text, errors.Join(problems...))
	}
	return lr.Map[k][0].Value, nil
}
