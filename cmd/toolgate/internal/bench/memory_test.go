package bench

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		want    memStatus
		wantErr string
	}{
		{
			name: "linux status",
			give: "Name:\ttoolgate\nVmPeak:\t 2000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n",
			want: memStatus{rss: 100 << 20, hwm: 200 << 20},
		},
		{
			name: "mapped files and shared memory",
			give: "VmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t   90000 kB\nRssFile:\t    8192 kB\nRssShmem:\t    4208 kB\n",
			want: memStatus{rss: 100 << 20, hwm: 200 << 20, mapped: 12400 << 10},
		},
		{name: "garbage RssFile", give: "VmRSS:\t 1 kB\nVmHWM:\t 1 kB\nRssFile:\t x kB\n", wantErr: "parse RssFile"},
		{name: "missing HWM", give: "VmRSS:\t 1 kB\n", wantErr: "missing"},
		{name: "garbage number", give: "VmRSS:\t x kB\nVmHWM:\t 1 kB\n", wantErr: "parse VmRSS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.give))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReadMem(t *testing.T) {
	st, fromProc := readMem()
	assert.Equal(t, runtime.GOOS == "linux", fromProc)
	assert.Positive(t, st.rss)
	assert.GreaterOrEqual(t, st.hwm, st.rss)
}

func TestSampler(t *testing.T) {
	s := startSampler(sampleInterval)
	first := s.stop()
	assert.Positive(t, first)
	assert.Equal(t, first, s.stop(), "a second stop only reads")
}

func TestMiB(t *testing.T) {
	assert.Equal(t, 1.5, mib(3<<19))
}
