package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image           string                       `yaml:"image"`
	Build           *composeBuild                `yaml:"build"`
	DependsOn       map[string]map[string]string `yaml:"depends_on"`
	Environment     map[string]string            `yaml:"environment"`
	Ports           []string                     `yaml:"ports"`
	Entrypoint      []string                     `yaml:"entrypoint"`
	Command         []string                     `yaml:"command"`
	Volumes         []string                     `yaml:"volumes"`
	Healthcheck     *composeHealthcheck          `yaml:"healthcheck"`
	Restart         string                       `yaml:"restart"`
	StopGracePeriod string                       `yaml:"stop_grace_period"`
}

type composeHealthcheck struct {
	Test     []string `yaml:"test"`
	Interval string   `yaml:"interval"`
	Timeout  string   `yaml:"timeout"`
	Retries  int      `yaml:"retries"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	require.NoError(t, err)
	var f composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true) // a misspelt key is an error, as docker compose would report
	require.NoError(t, dec.Decode(&f))
	return f
}

var pinnedImage = regexp.MustCompile(`^[a-z0-9./-]+:[0-9][A-Za-z0-9._-]*$`)

func TestComposeServices(t *testing.T) {
	f := loadCompose(t)
	names := make([]string, 0, len(f.Services))
	for name := range f.Services {
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"postgresql", "temporal-schema", "temporal", "temporal-namespace", "temporal-ui", "toolgate-worker"}, names)
}

func TestComposeImagesPinned(t *testing.T) {
	for name, s := range loadCompose(t).Services {
		if s.Build != nil {
			continue // built from this repository
		}
		assert.Regexp(t, pinnedImage, s.Image, "service %s must pin a versioned image", name)
	}
}

func TestComposeDependsOnIsAcyclic(t *testing.T) {
	f := loadCompose(t)
	for name, s := range f.Services {
		for dep, cond := range s.DependsOn {
			require.Contains(t, f.Services, dep, "service %s depends on unknown %s", name, dep)
			if cond["condition"] == "service_healthy" {
				assert.NotNil(t, f.Services[dep].Healthcheck, "%s waits for %s to be healthy but it has no healthcheck", name, dep)
			}
		}
	}
	// Depth-first search for a cycle.
	state := map[string]int{} // 0 unseen, 1 on path, 2 done
	var visit func(string) bool
	visit = func(n string) bool {
		switch state[n] {
		case 1:
			return false
		case 2:
			return true
		}
		state[n] = 1
		for dep := range f.Services[n].DependsOn {
			if !visit(dep) {
				return false
			}
		}
		state[n] = 2
		return true
	}
	for name := range f.Services {
		assert.True(t, visit(name), "depends_on cycle through %s", name)
	}
}

func TestComposePortsOnLoopback(t *testing.T) {
	for name, s := range loadCompose(t).Services {
		for _, p := range s.Ports {
			assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "service %s publishes %s beyond loopback", name, p)
		}
	}
}

func TestComposeWorkerWiring(t *testing.T) {
	f := loadCompose(t)
	w := f.Services["toolgate-worker"]
	require.NotNil(t, w.Build, "the worker is built from this repository")
	assert.FileExists(t, filepath.Join(repoRoot(t), w.Build.Context, w.Build.Dockerfile))
	assert.Equal(t, "worker", w.Command[0])
	assert.Contains(t, w.Command, "--setup")

	host, port, ok := strings.Cut(w.Environment["TEMPORAL_ADDRESS"], ":")
	require.True(t, ok, "TEMPORAL_ADDRESS must be host:port")
	require.Contains(t, f.Services, host)
	assert.Contains(t, w.DependsOn, host)
	assert.Equal(t, "7233", port)

	// The grace period must outlast the worker's graceful stop of in-flight tools (30 s default).
	grace, err := time.ParseDuration(w.StopGracePeriod)
	require.NoError(t, err)
	assert.Greater(t, grace, 30*time.Second)

	for _, v := range w.Volumes {
		assert.True(t, strings.HasSuffix(v, ":ro"), "tool roots are mounted read-only: %s", v)
	}
}

func TestDockerfilePinsGo(t *testing.T) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	require.NotNil(t, goLine)

	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllSubmatch(df, -1)
	require.Len(t, froms, 2, "a build stage and a runtime stage")
	assert.Regexp(t, `^golang:`+regexp.QuoteMeta(string(goLine[1]))+`\.\d+-`, string(froms[0][1]))
	for _, m := range froms {
		image := string(m[1])
		assert.NotContains(t, image, ":latest")
		assert.Contains(t, image, ":", "base image %s must be pinned", image)
	}
	assert.Contains(t, string(df), "CGO_ENABLED=0", "the binary must be static for distroless")
}
