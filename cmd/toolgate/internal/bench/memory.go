package bench

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sources of the peak RSS figure.
const (
	peakFromHWM     = "VmHWM"
	peakFromSamples = "sampled VmRSS"
	peakFromGo      = "Go runtime Sys (no /proc)"
)

// memStatus is the process's resident set, in bytes: now and its peak (high-water mark), and
// the part of it that maps files or shared memory (RssFile + RssShmem: the executable's pages,
// a file-backed SQLite store's WAL index; 0 where the kernel does not say).
type memStatus struct {
	rss, hwm, mapped int64
}

// readMem reads /proc/self/status; without it (not Linux) it falls back to the Go runtime's
// idea of the memory it holds from the OS, which leaves out non-Go memory.
func readMem() (memStatus, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		if st, err := parseStatus(data); err == nil {
			return st, true
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memStatus{rss: int64(ms.Sys), hwm: int64(ms.Sys)}, false
}

// parseStatus reads VmRSS and VmHWM (kB) from the text of /proc/<pid>/status, and RssFile and
// RssShmem when present (Linux >= 4.5).
func parseStatus(data []byte) (memStatus, error) {
	var st memStatus
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM" && key != "RssFile" && key != "RssShmem") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return memStatus{}, errors.New("parse " + key + ": " + err.Error())
		}
		switch key {
		case "VmRSS":
			st.rss = kb << 10
			found++
		case "VmHWM":
			st.hwm = kb << 10
			found++
		default:
			st.mapped += kb << 10
		}
	}
	if found != 2 {
		return memStatus{}, errors.New("parse status: VmRSS or VmHWM missing")
	}
	return st, nil
}

// resetPeak resets the kernel's high-water mark of the process's RSS (Linux >= 4.0), so VmHWM
// measures from now on.
func resetPeak() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// rssSampler samples the RSS every interval until stop and keeps the highest.
type rssSampler struct {
	mu   sync.Mutex
	max  int64
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startSampler(interval time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *rssSampler) sample() {
	st, _ := readMem()
	s.mu.Lock()
	s.max = max(s.max, st.rss)
	s.mu.Unlock()
}

// stop ends the sampling (once; later calls only read) and returns the highest RSS seen.
func (s *rssSampler) stop() int64 {
	s.once.Do(func() {
		close(s.done)
		s.wg.Wait()
		s.sample()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// mib is bytes in MiB, rounded to 0.1.
func mib(b int64) float64 { return round(float64(b)/(1<<20), 1) }
