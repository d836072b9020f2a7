package controllers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Pure tests of the Workspace status setters: no API server is involved.

// cond is a condition as a table states it: status/reason, "" when absent.
func cond(ws *v1alpha1.Workspace, t string) string {
	c := meta.FindStatusCondition(ws.Status.Conditions, t)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s", c.Status, c.Reason)
}

func statusWorkspace(generation, observed int64, conds ...metav1.Condition) *v1alpha1.Workspace {
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dev", Generation: generation}}
	ws.Status.ObservedGeneration = observed
	ws.Status.Conditions = conds
	return ws
}

func c(t string, ok bool, reason string, gen int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: reason + " message", ObservedGeneration: gen}
}

func TestSummarize_KstatusConditionsAndObservedGeneration(t *testing.T) {
	allTrue := func(gen int64) []metav1.Condition {
		return []metav1.Condition{c(string(vocab.ConditionCatalogResolved), true, string(vocab.ReasonResolved), gen),
			c(string(vocab.ConditionExtensionsLoaded), true, string(vocab.ReasonLoaded), gen),
			c(string(vocab.ConditionContextPublished), true, string(vocab.ReasonPublished), gen)}
	}
	for _, tc := range []struct {
		name                               string
		ws                                 *v1alpha1.Workspace
		transient                          error
		wantObserved                       int64
		wantReady, wantReconciling, wantSt string
	}{
		{name: "published: Ready, generation observed, nothing in progress",
			ws:           statusWorkspace(2, 1, append(allTrue(2), c(string(vocab.ConditionStalled), true, string(vocab.ReasonDuplicateName), 1))...),
			wantObserved: 2, wantReady: "True/Reconciled"},
		{name: "invalid input: Stalled with the first failing reason",
			ws: statusWorkspace(3, 2, c(string(vocab.ConditionCatalogResolved), false, string(vocab.ReasonDuplicateName), 3),
				c(string(vocab.ConditionExtensionsLoaded), false, string(vocab.ReasonExtensionRejected), 3),
				c(string(vocab.ConditionContextPublished), false, string(vocab.ReasonDuplicateName), 3)),
			wantObserved: 3, wantReady: "False/DuplicateName", wantSt: "True/DuplicateName"},
		{name: "a stale failure of an earlier generation does not explain this pass",
			ws: statusWorkspace(4, 3, c(string(vocab.ConditionCatalogResolved), false, string(vocab.ReasonResolved), 3),
				c(string(vocab.ConditionExtensionsLoaded), false, string(vocab.ReasonExtensionRejected), 3),
				c(string(vocab.ConditionCatalogResolved), false, string(vocab.ReasonRootNotPermitted), 4),
				c(string(vocab.ConditionContextPublished), false, string(vocab.ReasonRootNotPermitted), 4)),
			wantObserved: 4, wantReady: "False/RootNotPermitted", wantSt: "True/RootNotPermitted"},
		{name: "first pass fails transiently: in progress, not failed, generation not observed",
			ws: statusWorkspace(1, 0), transient: errors.New("connection refused"),
			wantObserved: 0, wantReady: "False/Retrying", wantReconciling: "True/Retrying"},
		{name: "transient failure after a good pass keeps the last observed generation",
			ws: statusWorkspace(5, 4, allTrue(4)...), transient: errors.New("timeout"),
			wantObserved: 4, wantReady: "False/Retrying", wantReconciling: "True/Retrying"},
		{name: "a failed apply reads as PublishFailed while retrying",
			ws: statusWorkspace(2, 2, c(string(vocab.ConditionContextPublished), false, string(vocab.ReasonPublishFailed), 2),
				c(string(vocab.ConditionStalled), true, string(vocab.ReasonNotOwned), 2)),
			transient:    errors.New("apply: conflict"),
			wantObserved: 2, wantReady: "False/PublishFailed", wantReconciling: "True/PublishFailed"},
		{name: "a completed pass ends Reconciling",
			ws:           statusWorkspace(2, 1, append(allTrue(2), c(string(vocab.ConditionReconciling), true, string(vocab.ReasonRetrying), 2))...),
			wantObserved: 2, wantReady: "True/Reconciled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summarize(tc.ws, tc.transient)
			if tc.ws.Status.ObservedGeneration != tc.wantObserved {
				t.Errorf("observedGeneration %d, want %d", tc.ws.Status.ObservedGeneration, tc.wantObserved)
			}
			for _, check := range []struct{ t, want string }{
				{string(vocab.ConditionReady), tc.wantReady},
				{string(vocab.ConditionReconciling), tc.wantReconciling},
				{string(vocab.ConditionStalled), tc.wantSt},
			} {
				if got := cond(tc.ws, check.t); got != check.want {
					t.Errorf("%s = %q, want %q", check.t, got, check.want)
				}
			}
		})
	}
}

func TestKeepLastGood_NamesTheHashThatStaysPublished(t *testing.T) {
	for _, tc := range []struct {
		name    string
		context *v1alpha1.ContextStatus
		want    string
	}{
		{name: "nothing published yet", want: "bad input"},
		{name: "a good context", context: &v1alpha1.ContextStatus{Hash: "sha256:aa"}, want: "bad input; the last good context sha256:aa stays published"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := statusWorkspace(1, 1)
			ws.Status.Context = tc.context
			keepLastGood(ws, vocab.ReasonDuplicateName, "bad input")
			got := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionContextPublished))
			if got.Status != metav1.ConditionFalse || got.Reason != string(vocab.ReasonDuplicateName) || got.Message != tc.want || got.ObservedGeneration != 1 {
				t.Errorf("ContextPublished %+v, want False/DuplicateName %q", got, tc.want)
			}
		})
	}
}

func TestSetResolvedStatus_ConditionPerPhase(t *testing.T) {
	plan := &workspace.Plan{Input: resources.Input{Roots: make([]resources.Root, 2)}}
	rejected := []exthost.Outcome{{Extension: "guard", Namespace: "ns", State: vocab.ExtensionRejected, Message: "bad CEL"}}
	for _, tc := range []struct {
		name                                 string
		res                                  *workspace.Resolution
		wantCatalog, wantExtensions, wantPub string
	}{
		{name: "publishable", res: &workspace.Resolution{Plan: plan},
			wantCatalog: "True/Resolved", wantExtensions: "True/Loaded"},
		{name: "gather failure: extensions not looked at",
			res:         &workspace.Resolution{Failure: &workspace.Failure{Phase: workspace.PhaseGather, Reason: vocab.ReasonRootNotPermitted, Err: errors.New("x")}},
			wantCatalog: "False/RootNotPermitted", wantPub: "False/RootNotPermitted"},
		{name: "resolve failure",
			res:         &workspace.Resolution{Plan: plan, Failure: &workspace.Failure{Phase: workspace.PhaseResolve, Reason: vocab.ReasonDuplicateName, Err: errors.New("x")}},
			wantCatalog: "False/DuplicateName", wantExtensions: "True/Loaded", wantPub: "False/DuplicateName"},
		{name: "render failure: the catalog resolved",
			res:         &workspace.Resolution{Plan: plan, Failure: &workspace.Failure{Phase: workspace.PhaseRender, Reason: vocab.ReasonContextTooLarge, Err: errors.New("x")}},
			wantCatalog: "True/Resolved", wantExtensions: "True/Loaded", wantPub: "False/ContextTooLarge"},
		{name: "rejected extension holds",
			res: &workspace.Resolution{Plan: plan, Extensions: rejected,
				Failure: &workspace.Failure{Phase: workspace.PhaseLoad, Reason: vocab.ReasonExtensionRejected, Err: errors.New("x")}},
			wantCatalog: "True/Resolved", wantExtensions: "False/ExtensionRejected", wantPub: "False/ExtensionRejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := statusWorkspace(1, 0)
			setResolvedStatus(ws, tc.res)
			for _, check := range []struct{ t, want string }{
				{string(vocab.ConditionCatalogResolved), tc.wantCatalog},
				{string(vocab.ConditionExtensionsLoaded), tc.wantExtensions},
				{string(vocab.ConditionContextPublished), tc.wantPub},
			} {
				if got := cond(ws, check.t); got != check.want {
					t.Errorf("%s = %q, want %q", check.t, got, check.want)
				}
			}
		})
	}
}

func TestSetExtensionsStatus_ListCappedTotalsNot(t *testing.T) {
	n := vocab.MaxStatusListItems + 10
	outcomes := make([]exthost.Outcome, n)
	for i := range outcomes {
		outcomes[i] = exthost.Outcome{Extension: fmt.Sprintf("e%03d", i), Namespace: "ns", State: vocab.ExtensionLoaded, Message: strings.Repeat("m", 2000)}
	}
	ws := statusWorkspace(1, 0)
	setExtensionsStatus(ws, nil, outcomes)
	if len(ws.Status.Extensions) != vocab.MaxStatusListItems || len(ws.Status.Extensions[0].Message) > 1024 {
		t.Errorf("%d extensions listed (message %d bytes), want %d and messages within 1024", len(ws.Status.Extensions), len(ws.Status.Extensions[0].Message), vocab.MaxStatusListItems)
	}
	if got := cond(ws, string(vocab.ConditionExtensionsLoaded)); got != "True/Loaded" {
		t.Errorf("ExtensionsLoaded %s", got)
	}
	outcomes[n-1].State = vocab.ExtensionRejected // past the cap, still reported
	setExtensionsStatus(ws, nil, outcomes)
	if got := cond(ws, string(vocab.ConditionExtensionsLoaded)); got != "False/ExtensionRejected" {
		t.Errorf("a rejection past the list cap: ExtensionsLoaded %s, want False/ExtensionRejected", got)
	}
}

// CatalogCounts are totals, as documented: the extension count is every
// visible extension, not the capped status list.
func TestSetPublishedStatus_CountsAreTotalsListsCapped(t *testing.T) {
	n := vocab.MaxStatusListItems + 5
	outcomes := make([]exthost.Outcome, n)
	tools := make([]contract.Tool, n)
	for i := range outcomes {
		outcomes[i] = exthost.Outcome{Extension: fmt.Sprintf("e%03d", i), State: vocab.ExtensionLoaded}
		tools[i] = contract.Tool{Name: fmt.Sprintf("t%03d", i)}
	}
	res := &resources.Result{Hash: "sha256:aa", Bytes: 10, Manifest: contract.Manifest{
		Catalog: []contract.CatalogEntry{{Kind: resources.KindSkill, Name: "a"}, {Kind: resources.KindTemplate, Name: "b"}}}}
	ws := statusWorkspace(1, 0)
	setExtensionsStatus(ws, nil, outcomes)
	setPublishedStatus(ws, &workspace.Resolution{Result: res, Extensions: outcomes, Registry: contract.Registry{Tools: tools}})
	counts := ws.Status.Catalog
	if counts.Extensions != int32(n) || counts.Tools != int32(n) || counts.Skills != 1 || counts.Templates != 1 {
		t.Errorf("counts %+v, want %d extensions and tools, 1 skill, 1 template", counts, n)
	}
	if len(ws.Status.Tools) != vocab.MaxStatusListItems || len(ws.Status.Extensions) != vocab.MaxStatusListItems {
		t.Errorf("lists of %d tools and %d extensions, want both capped at %d", len(ws.Status.Tools), len(ws.Status.Extensions), vocab.MaxStatusListItems)
	}
	if ws.Status.Context == nil || ws.Status.Context.Hash != "sha256:aa" || ws.Status.Context.ConfigMapName != "dev-context" {
		t.Errorf("context %+v", ws.Status.Context)
	}
	if got := cond(ws, string(vocab.ConditionContextPublished)); got != "True/Published" {
		t.Errorf("ContextPublished %s", got)
	}
}

// CommandsOffered names a command with tool steps as not offered to Claude
// Code, and says Codex has no commands; a catalog without such a command is
// True (R-TPL-6).
func TestSetCommandsStatus_ToolStepCommandNotOfferedToClaudeCode_RTPL6(t *testing.T) {
	catalog := func(templates ...resources.Template) *resources.Catalog {
		for i := range templates {
			templates[i].Origin = resources.Origin{Root: "r"}
		}
		cat, err := resources.BuildCatalog([]resources.Root{{Name: "r", Templates: templates}})
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	ws := statusWorkspace(1, 0)
	setCommandsStatus(ws, catalog(resources.Template{Name: "hello", Body: "Say hello."},
		resources.Template{Name: "ship", Body: "Ship {{summary}}", Steps: []contract.TemplateStep{{Tool: "review_note", Arguments: []byte(`{"text":"{{note}}"}`)}, {Render: true}}}))
	c := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionCommandsOffered))
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(vocab.ReasonCommandsNotOffered) ||
		!strings.Contains(c.Message, "ship is not offered to claude-code: its tool steps") || !strings.Contains(c.Message, "codex") {
		t.Fatalf("CommandsOffered %+v", c)
	}
	setCommandsStatus(ws, catalog(resources.Template{Name: "hello", Body: "Say hello."}))
	if got := cond(ws, string(vocab.ConditionCommandsOffered)); got != "True/CommandsOffered" {
		t.Fatalf("CommandsOffered %s", got)
	}
}
