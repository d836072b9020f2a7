package charts

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// registeredMetrics lists the names of the metrics the product's code
// declares: every Name of a prometheus *Opts literal under controllers/,
// cmd/ and internal/ (tests and test support aside). A histogram adds its
// _bucket, _sum and _count series.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, root := range []string{"controllers", "cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(testenv.RepoRoot(), root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "test" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if name, histogram, ok := promtextMetric(n); ok {
					addMetric(names, name, histogram)
					return true
				}
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				sel, ok := lit.Type.(*ast.SelectorExpr)
				if !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") {
					return true
				}
				for _, e := range lit.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if key, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || key.Name != "Name" {
						continue
					}
					if v, ok := kv.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
						name, _ := strconv.Unquote(v.Value)
						addMetric(names, name, sel.Sel.Name == "HistogramOpts")
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !names["loadout_workspace_reconciles_total"] || !names["loadout_hostd_requests_total"] {
		t.Fatalf("found %d metric names in the code, not the manager's and hostd's: the scan is broken", len(names))
	}
	return names
}

// promtextMetric reads a metric hostd declares with internal/promtext: a
// call promtext.NewX("name", ...), a histogram if X says so.
func promtextMetric(n ast.Node) (name string, histogram, ok bool) {
	call, isCall := n.(*ast.CallExpr)
	if !isCall || len(call.Args) == 0 {
		return "", false, false
	}
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel || !strings.HasPrefix(sel.Sel.Name, "New") {
		return "", false, false
	}
	if pkg, isIdent := sel.X.(*ast.Ident); !isIdent || pkg.Name != "promtext" {
		return "", false, false
	}
	v, isLit := call.Args[0].(*ast.BasicLit)
	if !isLit || v.Kind != token.STRING {
		return "", false, false
	}
	name, err := strconv.Unquote(v.Value)
	return name, strings.Contains(sel.Sel.Name, "Histogram"), err == nil
}

// addMetric records a metric's name, and a histogram's three series.
func addMetric(names map[string]bool, name string, histogram bool) {
	names[name] = true
	if histogram {
		names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
	}
}

// metricsOf parses a PromQL expression and returns the metric names it reads.
func metricsOf(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := metricsql.Parse(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	var out []string
	metricsql.VisitAll(e, func(e metricsql.Expr) {
		if me, ok := e.(*metricsql.MetricExpr); ok {
			for _, lfs := range me.LabelFilterss {
				for _, lf := range lfs {
					if lf.Label == "__name__" {
						out = append(out, lf.Value)
					}
				}
			}
		}
	})
	if len(out) == 0 {
		t.Errorf("%s: %q reads no metric", where, expr)
	}
	return out
}

// TestMonitoring_QueriesNameRegisteredMetricsAndParse renders the chart
// with its dashboard and alert rules on and checks every query of both:
// it parses as PromQL and names only metrics that the manager or hostd
// registers, so a renamed metric fails here instead of leaving a blank
// panel or an alert that never fires.
func TestMonitoring_QueriesNameRegisteredMetricsAndParse(t *testing.T) {
	known := registeredMetrics(t)
	objs := render(t, "loadout", "--set", "monitoring.dashboard.enabled=true", "--set", "monitoring.alerts.enabled=true")
	queries := map[string]string{}

	dash := find(objs, "ConfigMap", "loadout-dashboard")
	if dash == nil {
		t.Fatal("monitoring.dashboard.enabled renders no ConfigMap loadout-dashboard")
	}
	if dash.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap has labels %v: the Grafana sidecar loads only grafana_dashboard: \"1\"", dash.GetLabels())
	}
	raw, _, _ := unstructured.NestedString(dash.Object, "data", "loadout.json")
	var board struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(raw), &board); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	for _, p := range board.Panels {
		for i, tg := range p.Targets {
			queries["dashboard panel "+strconv.Quote(p.Title)+" target "+strconv.Itoa(i)] = tg.Expr
		}
	}

	rule := find(objs, "PrometheusRule", "loadout")
	if rule == nil {
		t.Fatal("monitoring.alerts.enabled renders no PrometheusRule loadout")
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			if r["alert"] == nil || r["expr"] == nil {
				t.Errorf("rule %v has no alert name or expr", r)
				continue
			}
			queries["alert "+r["alert"].(string)] = r["expr"].(string)
		}
	}
	if len(queries) < 15 {
		t.Fatalf("found %d queries: want the dashboard's panels and the alert rules", len(queries))
	}
	for _, where := range slices.Sorted(func(yield func(string) bool) {
		for k := range queries {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, m := range metricsOf(t, where, queries[where]) {
			if !known[m] {
				t.Errorf("%s reads %s, which no code of Loadout registers", where, m)
			}
		}
	}

	// Off by default: neither renders.
	for _, o := range render(t, "loadout") {
		if k := o.GetKind(); k == "PrometheusRule" || (k == "ConfigMap" && o.GetName() == "loadout-dashboard") {
			t.Errorf("the chart renders %s %s by default", k, o.GetName())
		}
	}
}
