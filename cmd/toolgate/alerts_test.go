package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/workflows"
)

// The alert rules and the dashboard shipped in deploy/ (docs/operations.md, "Alerts and
// dashboard").
const (
	alertRulesFile = "../../deploy/prometheus/toolgate-alerts.yml"
	dashboardFile  = "../../deploy/grafana/toolgate.json"
)

// seriesNotScraped are the series the rules and the dashboard may name although a scrape of a
// healthy `toolgate dev` does not show them: Prometheus registers a counter on its first
// increment, and these count only faults.
var seriesNotScraped = map[string]string{
	workflows.MetricHeartbeatTimeouts:  "toolgate: a call's attempt lost its worker",
	workflows.MetricApprovalsRequested: "toolgate: a call of a tool that requires approval (the metrics package's TestApprovalMetrics scrapes it)",
	workflows.MetricApprovalsDecided:   "toolgate: an approval decided (TestApprovalMetrics scrapes it)",
	"visibility_persistence_errors":    "Temporal server: visibility store errors",
	"task_terminal_failures":           "Temporal server: history tasks sent to the DLQ",
}

// TestAlertRulesAndDashboard: the rules parse and validate with Prometheus's own rule parser
// (what `promtool check rules` runs, templates included); every dashboard query parses as
// PromQL. TestEncryptedDevWithMetrics checks the series they name against a real scrape.
func TestAlertRulesAndDashboard(t *testing.T) {
	rules := alertRuleExprs(t)
	assert.GreaterOrEqual(t, len(rules), 10)
	dashboard := dashboardExprs(t)
	assert.GreaterOrEqual(t, len(dashboard), 15)
	names := referencedSeries(t)
	for _, want := range []string{"toolgate_calls_running", "toolgate_calls_awaiting_approval", "toolgate_calls_stuck", workflows.MetricToolCalls, "task_latency_queue_bucket"} {
		assert.Contains(t, names, want)
	}
	// Several workers export the same call gauges: every query of them aggregates with max.
	for _, expr := range append(rules, dashboard...) {
		if strings.Contains(expr, "toolgate_calls_") && strings.Contains(expr, "(") && !strings.Contains(expr, "absent(") {
			assert.Contains(t, expr, "max by", "call gauges are aggregated with max: %s", expr)
		}
	}
}

// alertRuleExprs parses the rules file and returns its expressions.
func alertRuleExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(alertRulesFile)
	require.NoError(t, err)
	groups, errs := rulefmt.Parse(data, false)
	require.Empty(t, errs, "%s", alertRulesFile)
	var exprs []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert.Value, "every rule is an alert")
			require.NotEmpty(t, r.Labels["severity"], "%s has a severity", r.Alert.Value)
			require.NotEmpty(t, r.Annotations["summary"], "%s has a summary", r.Alert.Value)
			exprs = append(exprs, r.Expr.Value)
		}
	}
	return exprs
}

// grafanaVariables are the dashboard's template variables as Grafana fills them in before a
// query reaches Prometheus.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$task_queue", ".*")

// dashboardExprs returns the dashboard's queries, each checked to parse as PromQL, and its
// variables' label_values(series, label) queries as the series selector.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(data, &d))
	require.NotEmpty(t, d.UID)
	var exprs []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has queries", p.Title)
		for _, target := range p.Targets {
			expr := grafanaVariables.Replace(target.Expr)
			_, err := parser.ParseExpr(expr)
			require.NoError(t, err, "panel %q: %s", p.Title, target.Expr)
			exprs = append(exprs, expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*), *[a-zA-Z_][a-zA-Z0-9_]*\)$`)
	for _, v := range d.Templating.List {
		q, ok := v.Query.(map[string]any)
		if v.Type != "query" || !ok {
			continue
		}
		m := labelValues.FindStringSubmatch(q["query"].(string))
		require.NotNil(t, m, "variable %s: want label_values(series, label)", v.Name)
		exprs = append(exprs, m[1])
	}
	return exprs
}

// referencedSeries returns the series names the rules and the dashboard select, sorted.
func referencedSeries(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, expr := range append(alertRuleExprs(t), dashboardExprs(t)...) {
		e, err := parser.ParseExpr(expr)
		require.NoError(t, err, expr)
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				name := vs.Name
				for _, m := range vs.LabelMatchers {
					if m.Name == "__name__" {
						name = m.Value
					}
				}
				require.NotEmpty(t, name, "a selector without a metric name: %s", expr)
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
			return nil
		})
	}
	slices.Sort(names)
	return names
}

// missingSeries returns the names of referenced that the scrape's families do not have: a
// histogram family X has X_bucket, X_count and X_sum; seriesNotScraped are allowed.
func missingSeries(referenced []string, families map[string]bool) []string {
	var missing []string
	for _, name := range referenced {
		base := name
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && families[b] {
				base = b
			}
		}
		if !families[base] && seriesNotScraped[name] == "" {
			missing = append(missing, name)
		}
	}
	return missing
}
