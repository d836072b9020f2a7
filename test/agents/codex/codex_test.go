package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// guardReason is the samples' platform-guard message.
const guardReason = "recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)"

// The Workspace's winning skills, its instructions, the always-active skill
// with its file and the extension's prompt guide reach the model next to
// Codex's own system skills; the platform's shadowed skill does not.
func TestCodex_WorkspaceSkillsAndInstructionsReachTheModel_RAG5(t *testing.T) {
	s := newSession(t)
	text := s.firstRequest(t, "hello")
	for _, want := range []string{
		"- review: ",                                  // the Workspace's review skill, listed
		filepath.Join(s.home, "skills"),               // from the skills directory in CODEX_HOME
		"review/SKILL.md",                             // with the path Codex reads it from
		"You work on team-a's parser",                 // the Workspace's instructions (SessionStart context)
		"skill-creator",                               // Codex's own system skills still there
		"PROJECT-REVIEW-BODY",                         // the active skill's body (SessionStart context)
		"No buffer outlives its owner.",               // the active skill's requested file
		"Record each review finding with review_note", // the extension's prompt guide
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the first model request lacks %q", want)
		}
	}
	if strings.Contains(text, "PLATFORM-REVIEW-BODY") {
		t.Error("the shadowed platform skill's body reached the model")
	}
	agenttest.FileLeft(t, filepath.Join(s.home, "skills", ".system"), "Codex's system skills", "")
	agenttest.FileLeft(t, filepath.Join(s.home, "skills", "review", "checklist.md"), "the review skill's file", "")
}

// The platform's guard denies rm -rf: the command never runs and the model
// reads why; an allowed command runs.
func TestCodex_PlatformGuardDeniesRecursiveDeleteAndAllowsTheRest_RAG4(t *testing.T) {
	s := newSession(t)
	marker := agenttest.BuildMarker(t, s.work)
	model := responses.Start(t, responses.Shell("c1", "rm -rf build"), responses.Shell("c2", "sh -c 'rm -r --force build'"),
		responses.Shell("c3", "touch allowed.txt"), responses.Say("done"))
	out := s.run(t, model, "clean up")

	agenttest.FileLeft(t, marker, "rm -rf build ran", out)
	agenttest.FileLeft(t, filepath.Join(s.work, "allowed.txt"), "the allowed command did not run", out)
	// Codex refuses some spellings of rm -rf itself; the reason shows that
	// Loadout's guard decided.
	model.MustHaveGot(t, "c1", guardReason, out)
	model.MustHaveGot(t, "c2", guardReason, out)
}

// The runnable review_note tool works through hostd's MCP server; a note
// with SECRET is denied by the Workspace's hook and never reaches the Service.
func TestCodex_ReviewNoteThroughMCPAndSecretNeverReachesTheService_RAG4(t *testing.T) {
	s := newSession(t)
	var tool string
	call := func(id, text string) responses.Turn {
		return func(r responses.Request) []any {
			if tool = toolNamed(r, "review_note"); tool == "" {
				return []any{responses.Message("no review_note tool offered: " + strings.Join(r.ToolNames(), ","))}
			}
			return []any{responses.FunctionCall(id, tool, map[string]any{"text": text})}
		}
	}
	model := responses.Start(t, call("n1", "parser.go:42 drops an error"), call("n2", "the SECRET is 42"), responses.Say("done"))
	out := s.run(t, model, "record the review notes")

	if tool == "" {
		t.Fatalf("Codex offered no review_note tool\n%s", out)
	}
	notes := s.notes.Notes(t)
	if len(notes) != 1 || notes[0] != "parser.go:42 drops an error" {
		t.Errorf("the Service recorded %q, want only the first note\n%s", notes, out)
	}
	model.MustHaveGot(t, "n2", "review notes must not contain secrets", out)
}

// With hostd down nothing runs: the managed UserPromptSubmit hook refuses the
// prompt before the model is asked, or, where a call is reached, it is
// blocked and the model reads that Loadout could not decide.
func TestCodex_HostdDownBlocksEveryCall_RAG3(t *testing.T) {
	s := newSession(t)
	s.hostd.Stop()
	model := responses.Start(t, responses.Shell("c1", "touch ran.txt"), responses.Say("done"))
	out := s.run(t, model, "try")

	agenttest.NoFileLeft(t, filepath.Join(s.work, "ran.txt"), "a command ran with hostd down", out)
	if len(model.Requests()) == 0 {
		if !strings.Contains(out, "UserPromptSubmit Blocked") {
			t.Errorf("the model was never asked, but Codex does not say the prompt was blocked\n%s", out)
		}
		return
	}
	model.MustHaveGot(t, "c1", "could not get a policy decision from hostd", out)
	if name := toolNamed(model.Requests()[0], "review_note"); name != "" {
		t.Errorf("hostd's MCP tool %s was offered with hostd down", name)
	}
}

// The managed install is the platform's: a user who disables Loadout's hook
// in config.toml, deletes hooks.json and brings a hook of their own, run
// without trust review, still gets rm -rf denied, and their hook never runs.
func TestCodex_UserCannotOverrideTheManagedHooks_RAG4(t *testing.T) {
	if !managedInstall() {
		t.Skip("no private /etc/codex here (unshare --mount refused): the managed install cannot be tested")
	}
	s := newSession(t)
	if err := os.Remove(filepath.Join(s.home, "hooks.json")); err != nil {
		t.Fatal(err)
	}
	userHookRan := filepath.Join(t.TempDir(), "user-hook-ran")
	s.user = responses.CodexUserHookOverride(userHookRan)
	s.args = []string{"--dangerously-bypass-hook-trust"}
	marker := agenttest.BuildMarker(t, s.work)
	model := responses.Start(t, responses.Shell("c1", "rm -r --force build"), responses.Say("done"))
	out := s.run(t, model, "clean up")

	agenttest.FileLeft(t, marker, "rm -r --force build ran", out)
	agenttest.NoFileLeft(t, userHookRan, "the user's own hook ran next to the managed ones", out)
	model.MustHaveGot(t, "c1", guardReason, out)
}

// Codex 0.169 has no custom prompts: the binary holds no /prompts: command,
// and `codex exec` sends "/prompts:review a b" to the model as typed, with
// CODEX_HOME/prompts/review.md in place. The Workspace's templates do not
// reach Codex as commands (docs/agents.md#codex); this test tells when a
// Codex upgrade changes that.
func TestCodex_ExecSendsATemplateCommandAsTyped(t *testing.T) {
	s := newSession(t)
	if _, err := os.Stat(filepath.Join(s.home, "prompts", "review.md")); err != nil {
		t.Fatal(err)
	}
	text := s.firstRequest(t, "/prompts:review parser.go runtime")
	if !strings.Contains(text, "/prompts:review parser.go runtime") || strings.Contains(text, "Review parser.go for runtime") {
		t.Errorf("Codex expanded the template: docs/agents.md#codex and the Codex layout need its prompt syntax\n%s", text)
	}
}

// firstRequest runs prompt against a model that only answers, and returns
// Codex's first request to it.
func (s *session) firstRequest(t *testing.T, prompt string) string {
	t.Helper()
	model := responses.Start(t, responses.Say("done"))
	s.run(t, model, prompt)
	reqs := model.Requests()
	if len(reqs) == 0 {
		t.Fatal("Codex sent no model request")
	}
	return reqs[0].Text()
}
