package e2e

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/devtest"
)

func TestMain(m *testing.M) {
	os.Exit(devtest.Main(m))
}
