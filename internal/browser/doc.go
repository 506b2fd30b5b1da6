// Package browser finds (and, when missing, installs) the headless Chromium that the Web UI tests
// drive. Only test code imports it.
//
// # Installation
//
// Chromium comes from Debian's `chromium` package. [Ensure] returns the path of an executable
// Chromium; when none is on the machine and the process runs as root with apt-get available (CI
// and developer machines here), it installs the package first. Anything else is an error that says
// what to install: tests never download a browser build of their own.
//
// # Flags
//
// [Args] holds the flags this workplace's closed network needs: without the background-networking
// flags Chromium keeps trying to reach Google's hosts.
package browser
