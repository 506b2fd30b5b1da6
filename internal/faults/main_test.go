package faults_test

import (
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testbin"
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
	agentRoundCalls  int // per side-effect class, in the round that is held
	cancelCalls      int
	loadCalls        int
	loadConcurrency  int
	drainHeldCalls   int // held across every roll of TestRollingRestartDrains
}

func sizes() scale {
	if *soak {
		return scale{
			workerKillCalls: 30, workerKillRounds: 5,
			serverKillCalls: 150, serverKillRounds: 3,
			agentKillCalls: 150, agentRoundCalls: 10,
			cancelCalls: 600,
			loadCalls:   2000, loadConcurrency: 64,
			drainHeldCalls: 50,
		}
	}
	return scale{
		workerKillCalls: 8, workerKillRounds: 1,
		serverKillCalls: 24, serverKillRounds: 1,
		agentKillCalls: 24, agentRoundCalls: 2,
		cancelCalls: 60,
		loadCalls:   110, loadConcurrency: 32,
		drainHeldCalls: 8,
	}
}

// Ceilings against hangs; never waits for progress.
const (
	readyTimeout   = 2 * time.Minute
	outcomeTimeout = 3 * time.Minute
)

// binaries are built once per test binary, on first use.
var binaries struct {
	once        sync.Once
	toolgate    string
	faultworker string
	err         error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	stopSharedDev()
	testbin.Cleanup()
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
		// toolgate is linked once per test run: $TOOLGATE_BIN (make test) or one build per
		// process, shared with the other suites through testbin.
		if binaries.toolgate, binaries.err = testbin.Toolgate(); binaries.err != nil {
			return
		}
		binaries.faultworker, binaries.err = testbin.Build("./internal/faults/cmd/faultworker", "faultworker")
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return binaries.toolgate, binaries.faultworker
}
