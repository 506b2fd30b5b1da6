package uitest

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/testbin"
)

// TestMain removes the binaries testbin built once the package's tests are done: not after each
// test, as testbin.Toolgate hands every test of the process the binary it built first.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
