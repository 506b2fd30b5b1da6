package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComponent(t *testing.T) {
	tests := []struct {
		name  string
		stack []string // leaf first
		want  string
	}{
		{name: "sqlite under the server", stack: []string{"modernc.org/sqlite/lib._sqlite3VdbeExec", "go.temporal.io/server/common/persistence/sql.(*x).y", "runtime.goexit"}, want: CompSQLite},
		{name: "server proto marshal", stack: []string{"google.golang.org/protobuf/proto.Marshal", "go.temporal.io/server/service/history.(*h).Start"}, want: CompServer},
		{name: "workflow code under the SDK", stack: []string{"encoding/json.Unmarshal", "github.com/toolgate/toolgate/toolcore.ParseToolCall", "go.temporal.io/sdk/internal.(*w).run"}, want: CompToolgate},
		{name: "toolgate client calling the SDK", stack: []string{"google.golang.org/grpc.invoke", "go.temporal.io/sdk/client.(*c).ExecuteWorkflow", "github.com/toolgate/toolgate/client.(*Client).Execute"}, want: CompSDK},
		{name: "bench bookkeeping", stack: []string{"runtime.mallocgc", "github.com/toolgate/toolgate/cmd/toolgate/internal/bench.summarize"}, want: CompBench},
		{name: "transport goroutine", stack: []string{"syscall.Syscall", "golang.org/x/net/http2.(*Framer).ReadFrame", "google.golang.org/grpc/internal/transport.(*http2Client).reader"}, want: CompGRPC},
		{name: "garbage collector", stack: []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, want: CompRuntime},
		{name: "a logger", stack: []string{"go.uber.org/zap.(*Logger).Info", "main.main"}, want: CompOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, component(tt.stack))
		})
	}
}

func TestIsModuleFunc(t *testing.T) {
	for name, want := range map[string]bool{
		"runtime.mallocgc":                 false,
		"encoding/json.Marshal":            false,
		"github.com/toolgate/toolgate/x.F": true,
		"gopkg.in/yaml.v3.(*parser).parse": true,
		"main.main":                        false,
	} {
		assert.Equal(t, want, isModuleFunc(name), name)
	}
}

// fakeProfile builds a CPU profile with one sample per stack (leaf first), each worth ms.
func fakeProfile(ms int64, stacks ...[]string) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	for _, stack := range stacks {
		var locs []*profile.Location
		for _, name := range stack {
			fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
			p.Function = append(p.Function, fn)
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, ms * int64(time.Millisecond)}})
	}
	return p
}

func TestSummarizeCPU(t *testing.T) {
	p := fakeProfile(100,
		[]string{"modernc.org/sqlite/lib.x", "go.temporal.io/server/a.b"},
		[]string{"modernc.org/sqlite/lib.y", "go.temporal.io/server/a.b"},
		[]string{"compress/flate.(*compressor).reset", "go.temporal.io/sdk/internal.x"},
		[]string{"runtime.gcBgMarkWorker"},
	)
	cpu := summarizeCPU(p, time.Second)
	assert.Equal(t, 0.4, cpu.CPUSeconds)
	assert.Equal(t, 0.4, cpu.Cores)
	assert.Equal(t, 25.0, cpu.GzipPercent)
	require.NotEmpty(t, cpu.Components)
	assert.Equal(t, CPUShare{Component: CompSQLite, Percent: 50, CPUSeconds: 0.2}, cpu.Components[0], "largest first")
	var sum float64
	for _, c := range cpu.Components {
		sum += c.Percent
	}
	assert.InDelta(t, 100, sum, 0.01)
}

func TestCPURecorder(t *testing.T) {
	var tee bytes.Buffer
	r, err := startCPU(&tee)
	require.NoError(t, err)
	_, err = startCPU(nil)
	assert.Error(t, err, "one CPU profile at a time")
	cpu, err := r.stop()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cpu.CPUSeconds, 0.0)
	assert.Positive(t, tee.Len(), "the profile is copied to the tee")
	_, err = profile.Parse(&tee)
	assert.NoError(t, err)
}
