// Package helmcheck holds no code: its tests render the Helm chart in deploy/helm/toolgate with
// Helm's own engine (helm.sh/helm/v3's chart loader, value coalescing and template engine, what
// `helm template` runs) and check every rendered object, since CI can neither run a cluster nor
// download the schemas a validator such as kubeconform needs.
//
// # What is checked
//
// Each value set (the chart's defaults and the files in testdata) passes the chart's
// values.schema.json (a misspelt or mistyped value fails there, as with helm), renders, and
// every object decodes strictly into its Kubernetes API type (k8s.io/api: an unknown or
// misspelt field, or a value of the wrong type, fails), which stands in for schema validation.
// Then the rules a schema cannot express: probes on /healthz and /readyz at declared container
// ports; Services, PodDisruptionBudgets and the HorizontalPodAutoscaler pointing at rendered
// Deployments and their ports; secrets reaching processes only as files of Secret volumes (no
// secret in an argument or an environment value; the one exception, TEMPORAL_API_KEY, only
// from a secretKeyRef); non-root, read-only containers with resources; and the worker's
// terminationGracePeriodSeconds longer than its --stop-timeout and the drain's report; every
// flag and TOOLGATE_*/TEMPORAL_* variable the chart gives a command named by that command's
// --help (the toolgate binary of this build, $TOOLGATE_BIN). Value sets the chart must refuse
// fail to render with the reason.
//
// The package is in the cmd/toolgate module, whose graph already holds the Kubernetes API types
// (the Temporal server's client-go), so the library's go.mod stays light; make test runs it
// with the packages that link the server, without the race detector (scripts/packages), whose
// non-race compile of those types it shares. Measured on 2 cores: its test binary compiles 30
// packages beyond what bin/toolgate compiles (Helm's chart, loader, chartutil and engine, the
// apiextensions types, glob, toml, gojsonschema), 11 CPU-s; from an empty build cache, standard
// library and Kubernetes types included, 198 CPU-s.
package helmcheck
