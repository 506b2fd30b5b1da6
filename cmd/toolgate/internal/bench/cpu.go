package bench

import (
	"bytes"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Components a CPU sample is charged to, in the order the rules try them (see component).
const (
	CompSQLite   = "server: SQLite persistence"
	CompServer   = "server: everything else"
	CompToolgate = "toolgate code"
	CompBench    = "bench harness"
	CompSDK      = "Temporal SDK (workers, clients)"
	CompGRPC     = "gRPC transport (either side)"
	CompRuntime  = "Go runtime and std (GC, scheduler, network)"
	CompOther    = "other"
)

// CPU is where the process's CPU went during the latency phase.
type CPU struct {
	// WallSeconds the profile covered, CPUSeconds sampled in it, and Cores = CPU / wall.
	WallSeconds float64 `json:"wallSeconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	Cores       float64 `json:"cores"`
	// Components by share of the samples, largest first.
	Components []CPUShare `json:"components"`
	// GzipPercent is the share of samples inside compress/flate or compress/gzip (the SDK
	// compresses its gRPC requests by default), whatever component they are charged to.
	GzipPercent float64 `json:"gzipPercent"`
	// Error says why there is no profile (another CPU profile was running).
	Error string `json:"error,omitempty"`
}

// CPUShare is one component's share of the samples.
type CPUShare struct {
	Component  string  `json:"component"`
	Percent    float64 `json:"percent"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

// cpuRecorder profiles the process into memory (and a copy into tee, when not nil).
type cpuRecorder struct {
	buf   bytes.Buffer
	tee   io.Writer
	began time.Time
}

// startCPU starts the process's CPU profile.
func startCPU(tee io.Writer) (*cpuRecorder, error) {
	r := &cpuRecorder{tee: tee, began: time.Now()}
	if err := pprof.StartCPUProfile(&r.buf); err != nil {
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return r, nil
}

// stop stops the profile, copies it to the tee and summarizes it.
func (r *cpuRecorder) stop() (CPU, error) {
	pprof.StopCPUProfile()
	wall := time.Since(r.began)
	if r.tee != nil {
		if _, err := r.tee.Write(r.buf.Bytes()); err != nil {
			return CPU{}, fmt.Errorf("write CPU profile: %w", err)
		}
	}
	p, err := profile.Parse(&r.buf)
	if err != nil {
		return CPU{}, fmt.Errorf("parse CPU profile: %w", err)
	}
	return summarizeCPU(p, wall), nil
}

// summarizeCPU charges every sample of p to a component.
func summarizeCPU(p *profile.Profile, wall time.Duration) CPU {
	value := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if value < 0 {
		value = len(p.SampleType) - 1
	}
	byComp := map[string]int64{}
	var total, gzip int64
	for _, s := range p.Sample {
		if value < 0 || value >= len(s.Value) {
			continue
		}
		v := s.Value[value]
		funcs := sampleFuncs(s)
		byComp[component(funcs)] += v
		total += v
		if slices.ContainsFunc(funcs, func(f string) bool {
			return strings.HasPrefix(f, "compress/flate.") || strings.HasPrefix(f, "compress/gzip.")
		}) {
			gzip += v
		}
	}
	cpu := CPU{
		WallSeconds: round(wall.Seconds(), 2),
		CPUSeconds:  round(time.Duration(total).Seconds(), 2),
	}
	if wall > 0 {
		cpu.Cores = round(float64(total)/float64(wall), 2)
	}
	for comp, v := range byComp {
		cpu.Components = append(cpu.Components, CPUShare{
			Component:  comp,
			Percent:    round(100*float64(v)/float64(max(total, 1)), 1),
			CPUSeconds: round(time.Duration(v).Seconds(), 2),
		})
	}
	slices.SortFunc(cpu.Components, func(a, b CPUShare) int {
		if a.CPUSeconds != b.CPUSeconds {
			if a.CPUSeconds > b.CPUSeconds {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Component, b.Component)
	})
	cpu.GzipPercent = round(100*float64(gzip)/float64(max(total, 1)), 1)
	return cpu
}

// sampleFuncs returns the function names of a sample's stack, leaf first.
func sampleFuncs(s *profile.Sample) []string {
	var funcs []string
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil {
				funcs = append(funcs, line.Function.Name)
			}
		}
	}
	return funcs
}

// component charges a stack (leaf first) to a component:
//
//  1. anything under the SQLite driver is server persistence; 2. anything else under the server
//     is the server;
//  3. if the leaf-most non-standard-library frame is toolgate's (or the bench's) the sample is
//     toolgate's code (the bench's), wherever it was called from (workflow code runs under the
//     SDK);
//  4. under the SDK: the SDK; 5. gRPC or HTTP/2 goroutines not attributable to a side: gRPC;
//  6. nothing but the standard library: the Go runtime; 7. anything else: other.
func component(funcs []string) string {
	has := func(prefixes ...string) bool {
		return slices.ContainsFunc(funcs, func(f string) bool {
			for _, p := range prefixes {
				if strings.HasPrefix(f, p) {
					return true
				}
			}
			return false
		})
	}
	switch {
	case has("modernc.org/"):
		return CompSQLite
	case has("go.temporal.io/server/"):
		return CompServer
	}
	if i := slices.IndexFunc(funcs, isModuleFunc); i >= 0 {
		switch {
		case strings.HasPrefix(funcs[i], "github.com/toolgate/toolgate/cmd/toolgate/internal/bench."):
			return CompBench
		case strings.HasPrefix(funcs[i], "github.com/toolgate/toolgate/"):
			return CompToolgate
		}
	}
	switch {
	case has("go.temporal.io/sdk/"):
		return CompSDK
	case has("google.golang.org/grpc", "golang.org/x/net/http2"):
		return CompGRPC
	case !slices.ContainsFunc(funcs, isModuleFunc):
		return CompRuntime
	}
	return CompOther
}

// isModuleFunc reports whether a function name belongs to a module (its import path has a
// first element with a dot, like github.com/...), not to the standard library (runtime.x,
// encoding/json.x).
func isModuleFunc(name string) bool {
	first, _, found := strings.Cut(name, "/")
	return found && strings.Contains(first, ".")
}
