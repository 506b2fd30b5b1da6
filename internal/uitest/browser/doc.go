// Package browser finds the headless Chromium that the Web UI tests drive. Only test code
// imports it.
//
// # Installation
//
// Chromium comes from Debian's `chromium` package, installed by `make setup` (which `make test`
// runs first). [Find] returns the path of an executable Chromium; when there is none it fails
// with a message naming `make setup`. Tests never install or download a browser themselves.
//
// # Flags
//
// [Args] holds the flags this workplace's closed network needs: without the background-networking
// flags Chromium keeps trying to reach Google's hosts.
package browser
