package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/demo"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// demoBinaries builds the manager, the loadout CLI and the samples'
// review-notes as `make demo` does.
func demoBinaries(t *testing.T) (manager, loadout, reviewNotes string) {
	t.Helper()
	dir := t.TempDir()
	return testenv.GoBuild(t, dir, "./cmd/manager"), testenv.GoBuild(t, dir, "./cmd/loadout"), testenv.GoBuild(t, dir, "./samples/review-notes")
}

// syncBuffer is an output buffer the demo writes while the test reads it.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	watch string
	seen  chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.seen != nil && strings.Contains(b.buf.String(), b.watch) {
		close(b.seen)
		b.seen = nil
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// removedDir is the work directory the demo reports it removed.
var removedDir = regexp.MustCompile(`removed (\S+)`)

func TestDemo_SamplesReadyOrdinaryNoteAllowedSecretNoteDenied(t *testing.T) { // fixed example, R-HK-2, R-APV-2, R-APV-3, R-EXT-6
	manager, loadout, reviewNotes := demoBinaries(t)
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The Pi step needs integrations/pi's node_modules, which `make test`
	// installs (make test-pi) before the Go tests run.
	piDir := filepath.Join(testenv.RepoRoot(), "integrations", "pi")
	withPi := true
	if _, err := os.Stat(filepath.Join(piDir, "node_modules", "@mariozechner", "pi-coding-agent")); err != nil {
		t.Logf("integrations/pi is not npm-installed (run make test-pi): the demo runs without its Pi step")
		piDir, withPi = "", false
	}
	res, err := demo.Run(ctx, demo.Options{
		RepoRoot: testenv.RepoRoot(), Assets: assets, Manager: manager, Loadout: loadout, ReviewNotes: reviewNotes,
		Out: &out, NoKubectl: true, Pi: piDir,
	})
	if err != nil {
		t.Fatalf("demo: %v\noutput:\n%s", err, out.String())
	}
	shown := out.String()

	if !res.Allowed.Allowed || res.Allowed.Result != nil {
		t.Errorf("ordinary review_note: got %+v, want {allowed: true}", res.Allowed)
	}
	d := res.Denied
	if d.Allowed || d.Result == nil {
		t.Fatalf("SECRET review_note: got %+v, want a denial with a paired result", d)
	}
	if d.Result.ToolCallID != res.DeniedCall.ID || d.Result.ToolName != "review_note" || !d.Result.IsError {
		t.Errorf("SECRET review_note: result %+v is not paired with call %s", d.Result, res.DeniedCall.ID)
	}
	if d.Result.Details["hook"] != "deny-secrets" || d.Result.Details["extension"] != "review-extension" {
		t.Errorf("SECRET review_note: details %v do not name review-extension's deny-secrets hook", d.Result.Details)
	}
	if len(d.Result.Content) != 1 || d.Result.Content[0].Text != "review notes must not contain secrets" {
		t.Errorf("SECRET review_note: content %+v, want the hook's message", d.Result.Content)
	}
	if len(d.Diagnostics) != 0 {
		t.Errorf("a denial is a policy decision, not a diagnostic: %+v", d.Diagnostics)
	}

	// The manager ran as its ServiceAccount with config/rbac, on an API
	// server that enforces owner-reference permissions, and was elected.
	if res.LeaseHolder == "" {
		t.Error("the manager holds no leader election Lease")
	}
	if !strings.Contains(shown, "manager ready as "+demo.ManagerUser) {
		t.Errorf("demo output does not say the manager runs as %s:\n%s", demo.ManagerUser, shown)
	}

	if !strings.HasPrefix(res.ContextHash, "sha256:") {
		t.Errorf("context hash %q", res.ContextHash)
	}
	for _, want := range []string{"PROJECT-REVIEW-BODY", "No buffer outlives its owner.", "review_note: Record a review note."} {
		if !strings.Contains(res.SystemPrompt, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, res.SystemPrompt)
		}
	}
	if strings.Contains(res.SystemPrompt, "PLATFORM-REVIEW-BODY") {
		t.Error("the shadowed platform skill's body reached the system prompt")
	}
	if len(res.Tools) != 2 || res.Tools[0].Name != "analytics_run_query" || res.Tools[0].Extension != "analytics" || !res.Tools[0].Runnable ||
		res.Tools[1].Name != "review_note" || res.Tools[1].Extension != "review-extension" || !res.Tools[1].Runnable {
		t.Errorf("status.tools = %+v, want the runnable analytics_run_query from the MCP server's analytics and review_note from review-extension", res.Tools)
	}

	// hostd ran review_note itself against the sample Service (a real
	// process): the ordinary note was recorded, the SECRET note never reached it.
	if r := res.ToolRun; !r.Executed || r.Result.IsError || len(r.Result.Content) != 1 || r.Result.Content[0].Text != "note 1 recorded" {
		t.Errorf("POST /v1/tools/review_note (ordinary): %+v, want the Service's \"note 1 recorded\"", r)
	}
	if r := res.SecretToolRun; r.Executed || r.Result.Details["hook"] != "deny-secrets" {
		t.Errorf("POST /v1/tools/review_note (SECRET): %+v, want denied by deny-secrets before the Service", r)
	}
	if len(res.RecordedNotes) != 1 || res.RecordedNotes[0].CallID != res.ToolCall.ID {
		t.Errorf("the Service recorded %+v, want only call %s", res.RecordedNotes, res.ToolCall.ID)
	}

	// The tour's ask: the headless terraform apply became an Approval, its
	// requester was refused by admission, alice's approval let it run as asked.
	if res.ApprovalName == "" || !strings.Contains(res.RequesterRefused, "asked for it and may not decide it") {
		t.Errorf("the tour's Approval %q; the requester's loadout approve printed %q, want admission's refusal", res.ApprovalName, res.RequesterRefused)
	}
	if !res.Approved.Allowed || res.Approved.Arguments != nil {
		t.Errorf("the approved terraform apply: %+v, want allowed exactly as asked", res.Approved)
	}
	// The tour's MCP server: one query ran on it, the payroll query was
	// denied by the Extension's hook before it.
	if r := res.MCPRun; !r.Executed || r.Result.IsError {
		t.Errorf("analytics_run_query (orders): %+v, want run by the MCP server", r)
	}
	if r := res.MCPDeniedRun; r.Executed || r.Result.Details["hook"] != "no-payroll" || r.Result.Details["extension"] != "analytics" {
		t.Errorf("analytics_run_query (payroll): %+v, want denied by analytics/no-payroll", r)
	}
	if len(res.MCPServerSaw) != 1 || strings.Contains(res.MCPServerSaw[0], "payroll") {
		t.Errorf("the MCP server received %q, want only the orders query", res.MCPServerSaw)
	}

	// What the user sees: the kubectl-style table, the prompt, the registry,
	// both hostd answers, and the Deployment explained rather than applied.
	for _, want := range []string{
		"workspace.loadout.dev/dev", "skill.loadout.dev/review", "extension.loadout.dev/review-extension", "CONTEXT HASH",
		"# Active skill: review",
		`"allowed": true`, `"allowed": false`, `"toolCallId": "call-2"`,
		"skipped Deployment team-a/agent", "no kubelet", "skipped Deployment team-a/review-notes",
		"POST /v1/tools/review_note", `"text": "note 1 recorded"`,
		// The tour: the other agents' layouts, the ledger, a weakened guard caught.
		"CLAUDE.md", "managed-settings.json", "requirements.toml", "hooks.json",
		"loadout audit verify", "records in", "WEAKENED", "recursive delete", "Next steps",
		// The tour: an Approval someone else approves, an MCP server's tool behind a hook.
		"kubectl get approvals", "Pending", "apply-needs-approval", "Approved by alice", "may not decide it",
		"An MCP server's tool behind a hook", "server analytics 1.0.0 at https://127.0.0.1:", "POST /v1/tools/analytics_run_query", "the payroll tables are not for agents", "run_query SELECT count(*) FROM orders",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("demo output lacks %q:\n%s", want, shown)
		}
	}
	for _, want := range []string{`review_note +extension review-extension`, `analytics_run_query +extension analytics`, `(?m)bash-\S+ +Approved .* alice$`} {
		if !regexp.MustCompile(want).MatchString(shown) {
			t.Errorf("demo output does not match %q:\n%s", want, shown)
		}
	}
	if withPi {
		for _, want := range []string{"The model is SCRIPTED", "Pi's own skill list", "  review: team-a's review method",
			"tool bash -> BLOCKED: platform policy: recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)"} {
			if !strings.Contains(shown, want) {
				t.Errorf("demo output lacks the Pi session's %q:\n%s", want, shown)
			}
		}
	}
	if _, err := os.Stat(res.WorkDir); !os.IsNotExist(err) {
		t.Errorf("work directory %s still exists after the demo (stat: %v)", res.WorkDir, err)
	}
}

func TestDemo_InterruptStopsEverythingAndRemovesWorkDir(t *testing.T) {
	manager, loadout, reviewNotes := demoBinaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt once the manager is up and the samples are being applied.
	out := &syncBuffer{watch: "==> Applying config/samples", seen: make(chan struct{})}
	seen := out.seen
	go func() {
		select {
		case <-seen:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := demo.Run(ctx, demo.Options{
		RepoRoot: testenv.RepoRoot(), Assets: assets, Manager: manager, Loadout: loadout, ReviewNotes: reviewNotes,
		Out: out, NoKubectl: true,
	})
	shown := out.String()
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("an interrupted demo returned %v, want an interrupted error\noutput:\n%s", err, shown)
	}
	m := removedDir.FindStringSubmatch(shown)
	if m == nil {
		t.Fatalf("the demo did not report cleaning up:\n%s", shown)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("work directory %s still exists after the interrupt (stat: %v)", m[1], err)
	}
	probe := regexp.MustCompile(`probes (http://\S+/readyz)`).FindStringSubmatch(shown)
	if probe == nil {
		t.Fatalf("the demo did not report the manager's probe address:\n%s", shown)
	}
	if resp, err := (&http.Client{Timeout: time.Second}).Get(probe[1]); err == nil {
		resp.Body.Close()
		t.Errorf("the manager still answers on %s after the interrupt", probe[1])
	}
}
