package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// describeMachine says where the figures are taken.
func describeMachine(now time.Time) Machine {
	m := Machine{
		Date:       now.Format(time.RFC3339),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel:   cpuModel("/proc/cpuinfo"),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			switch dep.Path {
			case "go.temporal.io/sdk":
				m.SDK = dep.Version
			case "go.temporal.io/server":
				m.ServerVersion = dep.Version
			}
		}
	}
	return m
}

// cpuModel is the first "model name" of a /proc/cpuinfo file, or "unknown".
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			if v := strings.TrimSpace(value); v != "" {
				return v
			}
		}
	}
	return "unknown"
}
