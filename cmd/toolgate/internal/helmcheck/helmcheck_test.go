package helmcheck

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart deploy/helm/toolgate, through a symbolic link inside this module: go
// test's result cache rechecks only the files a test reads inside its module, so a chart read
// at ../../../../deploy would leave a cached pass in place after the chart changed.
const chartDir = "testdata/chart"

// Health paths the toolgate listeners serve (worker: --metrics-listen; mcp: --listen; codec
// server: --listen).
const (
	livenessPath  = "/healthz"
	readinessPath = "/readyz"
)

// drainReportWait is how long a worker waits, after --stop-timeout, for the tools it interrupted
// to return (docs/operations.md, "Deploys drain").
const drainReportWait = 10 * time.Second

// objects is one rendering: every object by kind and name.
type objects struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	pdbs        map[string]*policyv1.PodDisruptionBudget
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
	accounts    map[string]*corev1.ServiceAccount
}

// render renders the chart as `helm template tg deploy/helm/toolgate -n tools -f valuesFile`
// would ("" for the defaults): values checked against values.schema.json, the engine in strict mode (a reference to a missing value
// fails, as with `helm lint --strict`).
func render(t *testing.T, valuesFile string) (map[string]string, error) {
	t.Helper()
	chrt, err := loader.LoadFiles(chartFiles(t))
	require.NoError(t, err)
	vals := chartutil.Values{}
	if valuesFile != "" {
		vals, err = chartutil.ReadValuesFile(valuesFile)
		require.NoError(t, err)
	}
	// ToRenderValues validates the values against values.schema.json, as helm does.
	rv, err := chartutil.ToRenderValues(chrt, vals,
		chartutil.ReleaseOptions{Name: "tg", Namespace: "tools", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(chrt, rv)
}

// chartFiles reads the chart's files for Helm's loader (loader.Load would walk them the same
// way, but resolves the link first, out of the module).
func chartFiles(t *testing.T) []*loader.BufferedFile {
	t.Helper()
	var files []*loader.BufferedFile
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(filepath.Join(chartDir, dir))
		require.NoError(t, err)
		for _, e := range entries {
			name := path.Join(dir, e.Name())
			if e.IsDir() {
				walk(name)
				continue
			}
			data, err := os.ReadFile(filepath.Join(chartDir, name))
			require.NoError(t, err)
			files = append(files, &loader.BufferedFile{Name: name, Data: data})
		}
	}
	walk("")
	return files
}

// documentSeparator splits a rendered file into its YAML documents.
var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decode decodes every rendered document strictly into its API type.
func decode(t *testing.T, rendered map[string]string) objects {
	t.Helper()
	o := objects{
		deployments: map[string]*appsv1.Deployment{},
		services:    map[string]*corev1.Service{},
		pdbs:        map[string]*policyv1.PodDisruptionBudget{},
		hpas:        map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		accounts:    map[string]*corev1.ServiceAccount{},
	}
	for _, file := range slices.Sorted(maps.Keys(rendered)) {
		if !strings.HasSuffix(file, ".yaml") {
			continue
		}
		for i, doc := range documentSeparator.Split(rendered[file], -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			where := fmt.Sprintf("%s, document %d", file, i)
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &head), where)
			var obj any
			switch head.APIVersion + " " + head.Kind {
			case "apps/v1 Deployment":
				obj = put(o.deployments, head.Metadata.Name)
			case "v1 Service":
				obj = put(o.services, head.Metadata.Name)
			case "policy/v1 PodDisruptionBudget":
				obj = put(o.pdbs, head.Metadata.Name)
			case "autoscaling/v2 HorizontalPodAutoscaler":
				obj = put(o.hpas, head.Metadata.Name)
			case "v1 ServiceAccount":
				obj = put(o.accounts, head.Metadata.Name)
			default:
				t.Fatalf("%s: unexpected %s %s", where, head.APIVersion, head.Kind)
			}
			require.NotEmpty(t, head.Metadata.Name, where)
			// UnmarshalStrict: unknown fields and duplicate keys are errors.
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "%s: %s %s", where, head.Kind, head.Metadata.Name)
		}
	}
	return o
}

// put adds a new *T under name and returns it.
func put[T any](m map[string]*T, name string) *T {
	v := new(T)
	m[name] = v
	return v
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestChartRenders: the chart renders with its defaults and with each value set in testdata;
// every object decodes strictly into its API type and keeps the rules of the package doc.
func TestChartRenders(t *testing.T) {
	sets, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, sets)
	for _, set := range append([]string{""}, sets...) {
		name := cmp(set == "", "defaults", filepath.Base(set))
		t.Run(name, func(t *testing.T) {
			rendered, err := render(t, set)
			require.NoError(t, err)
			o := decode(t, rendered)
			require.NotEmpty(t, o.deployments)
			for _, d := range o.deployments {
				checkDeployment(t, d)
			}
			checkReferences(t, o)
		})
	}
}

// cmp is the ternary the test tables need.
func cmp[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// TestChartDefaults: the chart admits Kubernetes from 1.23 (autoscaling/v2, policy/v1) to the
// API version its objects are checked against; the defaults run two workers and two MCP fronts (a static token from the
// Secret toolgate-mcp), no codec server, no autoscaler; the production value set adds the codec
// server and the autoscaler on the queue's backlog.
func TestChartDefaults(t *testing.T) {
	chrt, err := loader.LoadFiles(chartFiles(t))
	require.NoError(t, err)
	for _, v := range []string{"v1.23.0", "v1.35.4"} {
		assert.True(t, chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, v), "kubeVersion %s admits %s", chrt.Metadata.KubeVersion, v)
	}

	rendered, err := render(t, "")
	require.NoError(t, err)
	o := decode(t, rendered)
	assert.ElementsMatch(t, []string{"tg-toolgate-worker", "tg-toolgate-mcp"}, slices.Collect(maps.Keys(o.deployments)))
	assert.Equal(t, int32(2), *o.deployments["tg-toolgate-worker"].Spec.Replicas)
	assert.Empty(t, o.hpas)
	assert.Contains(t, o.accounts, "tg-toolgate")

	rendered, err = render(t, "testdata/production.yaml")
	require.NoError(t, err)
	o = decode(t, rendered)
	assert.Contains(t, o.deployments, "tg-toolgate-codec")
	w := o.deployments["tg-toolgate-worker"]
	assert.Nil(t, w.Spec.Replicas, "the autoscaler owns the replica count")
	hpa := o.hpas["tg-toolgate-worker"]
	require.NotNil(t, hpa)
	require.Len(t, hpa.Spec.Metrics, 1)
	ext := hpa.Spec.Metrics[0].External
	require.NotNil(t, ext)
	assert.Equal(t, "temporal_approximate_backlog_count", ext.Metric.Name)
	assert.Equal(t, map[string]string{"exported_namespace": "tools", "taskqueue": "tools"}, ext.Metric.Selector.MatchLabels)
	assert.Equal(t, autoscalingv2.AverageValueMetricType, ext.Target.Type)
	args := w.Spec.Template.Spec.Containers[0].Args
	assert.Contains(t, args, "--deployment-name=tools")
	assert.Contains(t, args, "--build-id=2026.12.1")
}

// TestChartRefuses: value sets that would deploy something broken or open fail to render,
// naming the reason.
func TestChartRefuses(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "grace period not beyond the drain", give: "worker: {stopTimeoutSeconds: 60, terminationGracePeriodSeconds: 70}",
			wantErr: "must exceed worker.stopTimeoutSeconds (60) + 10 s"},
		{name: "MCP front without authentication", give: `mcp: {tokenSecret: ""}`, wantErr: "mcp needs authentication"},
		{name: "codec server without keys", give: "codecServer: {enabled: true, tokenSecret: t}", wantErr: "needs codecKeys.secretName"},
		{name: "codec server without a token", give: "codecKeys: {secretName: k}\ncodecServer: {enabled: true}", wantErr: "needs codecServer.tokenSecret"},
		{name: "deployment without a build ID", give: "worker: {deploymentName: tools}", wantErr: "needs worker.buildId"},
		{name: "misspelt value", give: "worker: {replica: 3}", wantErr: "replica is not allowed"},
		{name: "value of the wrong type", give: "worker: {stopTimeoutSeconds: 30s}", wantErr: "stopTimeoutSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "values.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tt.give), 0o600))
			_, err := render(t, file)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// checkDeployment checks one Deployment's pod: selector, probes, security, resources, secrets
// and the drain's grace period (--stop-timeout plus the drain's report).
func checkDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	require.NotNil(t, d.Spec.Selector, d.Name)
	assert.True(t, subset(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels), "%s: the selector matches the pod's labels", d.Name)
	require.NotNil(t, spec.SecurityContext, d.Name)
	assert.True(t, deref(spec.SecurityContext.RunAsNonRoot), "%s: runAsNonRoot", d.Name)
	assert.NotZero(t, deref(spec.SecurityContext.RunAsUser), "%s: a non-root uid", d.Name)
	assert.False(t, deref(spec.AutomountServiceAccountToken), "%s: no service account token", d.Name)
	assert.NotEmpty(t, spec.ServiceAccountName, d.Name)

	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	require.Len(t, spec.Containers, 1, d.Name)
	c := spec.Containers[0]
	where := d.Name + "/" + c.Name
	require.NotNil(t, c.SecurityContext, where)
	assert.True(t, deref(c.SecurityContext.ReadOnlyRootFilesystem), "%s: read-only root", where)
	assert.False(t, deref(c.SecurityContext.AllowPrivilegeEscalation), "%s: no privilege escalation", where)
	assert.False(t, c.Resources.Requests.Cpu().IsZero(), "%s: a CPU request", where)
	assert.False(t, c.Resources.Limits.Memory().IsZero(), "%s: a memory limit", where)
	assert.NotEmpty(t, c.Image, where)

	// Probes: HTTP GET on the health paths at a declared port.
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, livenessPath}, {c.ReadinessProbe, readinessPath}} {
		require.NotNil(t, p.probe, "%s: a probe on %s", where, p.path)
		require.NotNil(t, p.probe.HTTPGet, where)
		assert.Equal(t, p.path, p.probe.HTTPGet.Path, where)
		assert.True(t, hasPort(c, p.probe.HTTPGet.Port), "%s: probe port %s is a container port", where, p.probe.HTTPGet.Port.String())
	}

	// Secrets: file flags and path variables point into Secret volumes; nothing secret is an
	// argument or an environment value.
	secretMount := func(path string) bool {
		for _, m := range c.VolumeMounts {
			if v, ok := volumes[m.Name]; ok && v.Secret != nil && strings.HasPrefix(path, m.MountPath+"/") {
				return m.ReadOnly
			}
		}
		return false
	}
	for _, a := range c.Args {
		assert.NotRegexp(t, `^--(api-key|token|auth-token)(=|$)`, a, "%s: a secret on the command line", where)
		if flag, path, ok := strings.Cut(a, "="); ok && slices.Contains([]string{"--token-file", "--auth-token-file", "--codec-key"}, flag) {
			assert.True(t, secretMount(path), "%s: %s is a file of a read-only Secret volume", where, a)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.Name == "TEMPORAL_API_KEY":
			assert.True(t, e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil, "%s: TEMPORAL_API_KEY from a Secret", where)
		case e.Name == "TOOLGATE_CODEC_KEY" || strings.HasSuffix(e.Name, "_PATH") || strings.HasSuffix(e.Name, "_FILE"):
			assert.True(t, secretMount(e.Value), "%s: %s=%s is a file of a read-only Secret volume", where, e.Name, e.Value)
		default:
			assert.NotRegexp(t, `(?i)(key|token|password|secret)`, e.Name, "%s: %s carries a secret as a value", where, e.Name)
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			require.NotNil(t, v.Secret.DefaultMode, where)
			assert.Zero(t, *v.Secret.DefaultMode&0o007, "%s: Secret volume %s not world-readable", where, v.Name)
		}
	}

	// The worker drains within its grace period.
	if slices.Contains(c.Args, "worker") {
		var stop time.Duration
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--stop-timeout="); ok {
				var err error
				stop, err = time.ParseDuration(v)
				require.NoError(t, err, where)
			}
		}
		require.NotZero(t, stop, "%s: an explicit --stop-timeout", where)
		require.NotNil(t, spec.TerminationGracePeriodSeconds, where)
		assert.Greater(t, time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second, stop+drainReportWait,
			"%s: terminationGracePeriodSeconds beyond --stop-timeout and the drain's report", where)
	}
}

// checkReferences checks what points at a Deployment: Services (selector and target ports),
// PodDisruptionBudgets and the autoscaler, and the pods' service account.
func checkReferences(t *testing.T, o objects) {
	t.Helper()
	selects := func(sel map[string]string) []*appsv1.Deployment {
		var ds []*appsv1.Deployment
		for _, d := range o.deployments {
			if len(sel) > 0 && subset(sel, d.Spec.Template.Labels) {
				ds = append(ds, d)
			}
		}
		return ds
	}
	for name, s := range o.services {
		ds := selects(s.Spec.Selector)
		require.Len(t, ds, 1, "service %s selects one Deployment", name)
		for _, p := range s.Spec.Ports {
			assert.True(t, hasPort(ds[0].Spec.Template.Spec.Containers[0], p.TargetPort), "service %s: target port %s", name, p.TargetPort.String())
		}
	}
	for name, p := range o.pdbs {
		require.NotNil(t, p.Spec.Selector, name)
		assert.Len(t, selects(p.Spec.Selector.MatchLabels), 1, "PodDisruptionBudget %s selects one Deployment", name)
	}
	for name, h := range o.hpas {
		assert.Equal(t, "Deployment", h.Spec.ScaleTargetRef.Kind, name)
		assert.Contains(t, o.deployments, h.Spec.ScaleTargetRef.Name, "autoscaler %s scales a rendered Deployment", name)
		assert.GreaterOrEqual(t, h.Spec.MaxReplicas, deref(h.Spec.MinReplicas), name)
	}
	for name, d := range o.deployments {
		sa := d.Spec.Template.Spec.ServiceAccountName
		if len(o.accounts) > 0 {
			assert.Contains(t, o.accounts, sa, "%s: its service account is rendered", name)
		}
	}
}

// hasPort reports whether c declares port (by name or number).
func hasPort(c corev1.Container, port intstr.IntOrString) bool {
	for _, p := range c.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return true
		}
	}
	return false
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
