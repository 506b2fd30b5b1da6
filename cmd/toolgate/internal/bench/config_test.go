package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{Address: "127.0.0.1:7233"}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultNamespace, cfg.Namespace)
	assert.Equal(t, "127.0.0.1:7233", cfg.Server)
	assert.Equal(t, DefaultSubjects(), cfg.Subjects)
	assert.Equal(t, DefaultCalls, cfg.Calls)
	assert.Equal(t, DefaultInFlight, cfg.InFlight)
	assert.Equal(t, DefaultInProcessTime, cfg.InProcessTime)
	assert.NotNil(t, cfg.Logger)
	assert.NotNil(t, cfg.Progress)
}

func TestShortKeepsEveryPhase(t *testing.T) {
	short := Short()
	short.Address = "x:1"
	cfg, err := short.withDefaults()
	require.NoError(t, err)
	for name, v := range map[string]int{
		"Calls": cfg.Calls, "Warmup": cfg.Warmup, "Block": cfg.Block, "Concurrency": cfg.Concurrency,
		"ThroughputCalls": cfg.ThroughputCalls, "ThroughputBlocks": cfg.ThroughputBlocks,
		"InFlight": cfg.InFlight, "Probes": cfg.Probes, "BreakdownSample": cfg.BreakdownSample,
	} {
		assert.Positive(t, v, name)
	}
	assert.Less(t, cfg.InFlight, DefaultInFlight)
	assert.Less(t, cfg.Calls, DefaultCalls)
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    Config
		wantErr string
	}{
		{name: "no address", give: Config{}, wantErr: "no frontend address"},
		{name: "unknown subject", give: Config{Address: "x:1", Subjects: []string{"toolgate", "fast"}}, wantErr: `unknown subject "fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.give.withDefaults()
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestCheckSubjects(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want []string
	}{
		{name: "default", give: nil, want: []string{SubjectToolgate, SubjectBare, SubjectBareEager, SubjectToolgateLocal}},
		{name: "baseline added", give: []string{SubjectToolgateNoEager}, want: []string{SubjectToolgateNoEager, SubjectBare}},
		{name: "duplicates dropped, order kept", give: []string{SubjectBare, SubjectToolgate, SubjectBare}, want: []string{SubjectBare, SubjectToolgate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkSubjects(tt.give)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
