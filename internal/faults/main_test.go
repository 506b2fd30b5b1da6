package faults_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	soak       = flag.Bool("soak", false, "run the long form of every fault scenario (make soak)")
	reportPath = flag.String("faults.report", "", "append one JSON line of figures per scenario to this file")
	binDir     = flag.String("faults.bindir", "", "use the toolgate and faultworker binaries in this directory instead of building them")
)

// scale sizes the scenarios: the short form runs in make test, the long form with -soak.
type scale struct {
	workerKillCalls  int // per side-effect class, per round
	workerKillRounds int
	serverKillCalls  int // per round
	serverKillRounds int
	agentKillCalls   int
	cancelCalls      int
	loadCalls        int
	loadConcurrency  int
}

func sizes() scale {
	if *soak {
		return scale{
			workerKillCalls: 30, workerKillRounds: 5,
			serverKillCalls: 150, serverKillRounds: 3,
			agentKillCalls: 150,
			cancelCalls:    600,
			loadCalls:      2000, loadConcurrency: 64,
		}
	}
	return scale{
		workerKillCalls: 8, workerKillRounds: 1,
		serverKillCalls: 24, serverKillRounds: 1,
		agentKillCalls: 24,
		cancelCalls:    60,
		loadCalls:      110, loadConcurrency: 32,
	}
}

// Ceilings against hangs; never waits for progress.
const (
	buildTimeout   = 15 * time.Minute
	readyTimeout   = 2 * time.Minute
	outcomeTimeout = 3 * time.Minute
)

// binaries are built once per test binary, on first use.
var binaries struct {
	once        sync.Once
	dir         string
	toolgate    string
	faultworker string
	err         error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	stopSharedDev()
	if binaries.dir != "" {
		_ = os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// built returns the paths of the toolgate and faultworker binaries, building them the first time.
// The process scenarios skip under -short.
func built(t *testing.T) (toolgate, faultworker string) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault scenario: builds binaries and runs real processes")
	}
	binaries.once.Do(func() {
		if *binDir != "" {
			binaries.toolgate = filepath.Join(*binDir, "toolgate")
			binaries.faultworker = filepath.Join(*binDir, "faultworker")
			return
		}
		binaries.dir, binaries.err = os.MkdirTemp("", "toolgate-faults-")
		if binaries.err != nil {
			return
		}
		binaries.toolgate = filepath.Join(binaries.dir, "toolgate")
		binaries.faultworker = filepath.Join(binaries.dir, "faultworker")
		for _, b := range []struct{ out, pkg string }{
			{binaries.toolgate, "../../cmd/toolgate"},
			{binaries.faultworker, "./cmd/faultworker"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
			out, err := exec.CommandContext(ctx, "go", "build", "-o", b.out, b.pkg).CombinedOutput()
			cancel()
			if err != nil {
				binaries.err = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return binaries.toolgate, binaries.faultworker
}
