package sandbox

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserTasksCountsThreads(t *testing.T) {
	threads, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, userTasks(os.Getuid()), len(threads), "at least this process's threads")
}
