package pgstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// sslModes are the sslmode values libpq (and lib/pq, the server's driver) take.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// connectParams are the URL parameters a toolgate database URL passes to the driver, as libpq
// names them; anything else is refused so that a typo is not silently ignored.
var connectParams = []string{
	"sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni",
	"ssl_min_protocol_version", "ssl_max_protocol_version",
	"connect_timeout", "application_name",
}

// tlsFileParams name files (or, for sslrootcert, the word "system").
var tlsFileParams = []string{"sslrootcert", "sslcert", "sslkey"}

// connectAttributes checks the parameters of a database URL and returns them as the store's
// connect attributes (what the server's driver appends to its DSN). It reads the certificate
// files they name, so that a missing or malformed file is an error naming it here rather than
// an opaque connection failure later (see [Ping]).
func connectAttributes(query url.Values) (map[string]string, error) {
	attrs := make(map[string]string, len(query))
	for key, values := range query {
		if !slices.Contains(connectParams, key) {
			return nil, fmt.Errorf("unsupported parameter %q (want %s)", key, strings.Join(connectParams, ", "))
		}
		if len(values) != 1 || values[0] == "" {
			return nil, fmt.Errorf("parameter %q wants one non-empty value", key)
		}
		attrs[key] = values[0]
	}
	mode, hasMode := attrs["sslmode"]
	if !hasMode {
		for _, p := range tlsFileParams {
			if _, ok := attrs[p]; ok {
				return nil, fmt.Errorf("%s without sslmode: add sslmode=verify-full (or verify-ca, require)", p)
			}
		}
		return attrs, nil // sslmode=disable: the server's driver adds it to the DSN
	}
	if !slices.Contains(sslModes, mode) {
		return nil, fmt.Errorf("sslmode %q (want %s)", mode, strings.Join(sslModes, ", "))
	}
	if mode == "disable" || mode == "allow" {
		for _, p := range tlsFileParams {
			if _, ok := attrs[p]; ok {
				return nil, fmt.Errorf("%s with sslmode=%s, which verifies nothing: use sslmode=verify-full", p, mode)
			}
		}
	}
	if ca, ok := attrs["sslrootcert"]; ok && ca != "system" {
		if err := checkRootCert(ca); err != nil {
			return nil, err
		}
	}
	cert, hasCert := attrs["sslcert"]
	key, hasKey := attrs["sslkey"]
	switch {
	case hasCert != hasKey:
		return nil, errors.New("sslcert and sslkey go together (a client certificate and its key)")
	case hasCert:
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			return nil, fmt.Errorf("load client certificate sslcert=%s sslkey=%s: %w", cert, key, err)
		}
	}
	return attrs, nil
}

// checkRootCert reads a PEM file of CA certificates and requires at least one.
func checkRootCert(path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read sslrootcert: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return fmt.Errorf("sslrootcert %s holds no PEM certificate", path)
	}
	return nil
}
