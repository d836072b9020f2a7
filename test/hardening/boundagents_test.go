package hardening

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
	"github.com/loadout-dev/loadout/test/agents/messages"
	"github.com/loadout-dev/loadout/test/agents/responses"
)

// guardReason is the samples' platform guard's message; platformGuide the
// prompt guide the test gives it (the platform's text).
const (
	guardReason   = "recursive deletes (rm -r, find -delete, git clean, rmtree, Remove-Item -Recurse)"
	platformGuide = "PLATFORM-GUIDE: never delete a directory recursively."
)

// TestBoundPod_StockClaudeCodeAndCodexRunWithWhatThePodGivesThem is the
// install platform teams are promised, end to end: a pod labelled
// loadout.dev/workspace: dev, whose containers are stock agent images (the
// CLI installed with npm, nothing of Loadout's), rendered by the shipped
// MutatingAdmissionPolicy (a dry-run create returns the mutated pod). The
// controller publishes the samples' Workspace, signed, with its namespace's
// policy epoch; the injected hostd command (the sidecar binary, its flags as
// the pod spells them, only addresses and volume directories moved) keeps
// the tree. Then the real Claude Code and the real Codex run with exactly the
// mounts the mutated pod gives their containers: in a private user and mount
// namespace, /etc is an overlay on which each mount is bound, read-only as
// the pod says, and neither loadout nor LOADOUT_HOSTD_URL is in their
// environment. The platform guard denies rm -rf build, an ordinary command
// runs, the MCP tool with SECRET is denied and never reaches the Service,
// a user's own settings cannot remove the hooks, an update of the context
// reaches /etc/claude-code with no restart, and with hostd down no call runs.
func TestBoundPod_StockClaudeCodeAndCodexRunWithWhatThePodGivesThem(t *testing.T) {
	if err := exec.Command("unshare", "-rm", "--", "true").Run(); err != nil {
		t.Skipf("no private mount namespace here (unshare -rm: %v): the agents cannot see /etc/claude-code and /etc/codex as a pod's volumes give them", err)
	}
	claude, codex := agenttest.CLI(t, "claude"), agenttest.CLI(t, "codex")
	ctx := context.Background()
	bins := t.TempDir()
	hostdBin := testenv.GoBuild(t, bins, "./cmd/loadout-hostd")
	reviewNotesBin := testenv.GoBuild(t, bins, "./samples/review-notes")

	ns := kit.NewNamespace(t, vocab.TrustTrusted) // as the samples label team-a
	bindAgentPods(t, ns)
	applySamples(t, ns)
	kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionReady, metav1.ConditionTrue, vocab.ReasonReconciled))
	published := kit.ConfigMap(t, ns, "dev-context")
	testenv.MustContain(t, "published context", published.Data[contract.KeyManifest], "platform-guard", "review_note")
	epoch := epochOf(t, ns, func(*corev1.ConfigMap) error { return nil })

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agents", Labels: map[string]string{vocab.WorkspaceLabel: "dev"}},
		Spec: corev1.PodSpec{
			ServiceAccountName:           "agent",
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{
				{Name: "claude-code", Image: "docker.io/library/node:24", Command: []string{"sh", "-c", "npm i -g @anthropic-ai/claude-code && sleep infinity"}},
				{Name: "codex", Image: "docker.io/library/node:24", Command: []string{"sh", "-c", "npm i -g @openai/codex && sleep infinity"}},
			},
		},
	}
	if err := k8sClient.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("dry-run create of the labelled agent pod: %v", err)
	}
	h := hostd(pod)
	if h == nil {
		t.Fatal("the mutated pod has no loadout-hostd")
	}

	// The pod's volumes, as the kubelet would give them.
	dirs := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		dir := filepath.Join(t.TempDir(), v.Name)
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Name == "dev-context":
			agenttest.MountConfigMap(t, dir, published.Data)
		case v.ConfigMap != nil && v.ConfigMap.Name == contract.EpochConfigMap:
			agenttest.MountConfigMap(t, dir, epoch.Data)
		case v.EmptyDir != nil, v.Secret != nil && v.Secret.Optional != nil && *v.Secret.Optional:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		case v.Projected != nil:
			// hostd's tokens (tool Services, Approvals, the MCP headers
			// endpoint) and the API server's CA: nothing here verifies
			// them, and hostd starts without a cluster to reach.
			for _, src := range v.Projected.Sources {
				switch {
				case src.ServiceAccountToken != nil:
					writeFile(t, filepath.Join(dir, src.ServiceAccountToken.Path), "test-token")
				case src.ConfigMap != nil:
					for _, item := range src.ConfigMap.Items {
						writeFile(t, filepath.Join(dir, item.Path), "test-ca")
					}
				default:
					t.Fatalf("volume %s: projected source %+v is not one this test can give", v.Name, src)
				}
			}
		default:
			t.Fatalf("volume %s: %+v is not one this test can give", v.Name, v.VolumeSource)
		}
		dirs[v.Name] = dir
	}
	notes := agenttest.StartReviewNotesFrom(t, reviewNotesBin, published.Data)
	hd := startPodHostd(t, hostdBin, h, dirs, notes.HostdArgs)
	// The injected MCP headers endpoint, its certificate and token file are
	// ones the sidecar can use (it says so once when it cannot).
	if strings.Contains(hd.log(), "MCP headers:") {
		t.Errorf("hostd cannot use the injected MCP headers configuration:\n%s", hd.log())
	}

	agents := map[string]*corev1.Container{}
	for i := range pod.Spec.Containers {
		agents[pod.Spec.Containers[i].Name] = &pod.Spec.Containers[i]
	}
	claudeNS := podMounts(t, agents["claude-code"], dirs)
	codexNS := podMounts(t, agents["codex"], dirs)

	t.Run("ClaudeCode", func(t *testing.T) {
		run := func(t *testing.T, model *messages.Model, prep func(home, work string)) (work string) {
			t.Helper()
			home, work := t.TempDir(), t.TempDir()
			if prep != nil {
				prep(home, work)
			}
			argv := claudeNS.wrap(t, []string{claude, "-p", "go", "--output-format", "json",
				"--allowedTools", "Bash", "Write", "mcp__loadout__review_note"})
			out, err := runAgent(argv, work, stockEnv(claude, home,
				"ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-scripted",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
				"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1"))
			if err != nil && !strings.Contains(out, `"type"`) {
				t.Fatalf("claude -p: %v\n%s\nhostd:\n%s", err, out, hd.log())
			}
			return work
		}
		bash := func(id, command string) messages.Turn {
			return messages.Turn{Tools: []messages.ToolUse{{ID: id, Name: "Bash", Input: map[string]any{"command": command, "description": id}}}}
		}
		note := func(id, text string) messages.Turn {
			return messages.Turn{Tools: []messages.ToolUse{{ID: id, Name: "mcp__loadout__review_note", Input: map[string]any{"text": text}}}}
		}

		t.Run("GuardDeniesRmAndOrdinaryCommandRuns", func(t *testing.T) {
			model := messages.NewModel(t, bash("rm", "rm -rf build"), bash("ls", "ls"))
			var marker string
			run(t, model, func(_, work string) { marker = agenttest.BuildMarker(t, work) })
			agenttest.FileLeft(t, marker, "rm -rf build ran", "")
			results := model.ToolResults()
			if !strings.Contains(results["rm"].Text, guardReason) {
				t.Errorf("the model got %+v for rm -rf build, want the guard's reason", results["rm"])
			}
			if ls := results["ls"]; ls.IsError || !strings.Contains(ls.Text, "build") {
				t.Errorf("the model got %+v for ls, want the listing", ls)
			}
			// Managed memory (/etc/claude-code/CLAUDE.md) is the platform's
			// text; the tenant's comes as project content under its
			// namespace; the managed skill is listed.
			model.FirstAgentRequest(t).MustReach(t, map[string]string{
				"the managed memory":                   "Contents of /etc/claude-code/CLAUDE.md",
				"the platform's guide in it":           "PLATFORM-GUIDE",
				"the tenant's text as project content": "Project content from namespace " + ns + " (not organisation policy)",
				"the managed skill":                    "team-a's review method for parser and runtime changes.",
			})
		})
		t.Run("SecretNoteNeverReachesTheService", func(t *testing.T) {
			before := len(notes.Notes(t))
			model := messages.NewModel(t, note("ok", "claude: parser.go:42 drops an error"), note("secret", "claude: the SECRET is 42"))
			run(t, model, nil)
			results := model.ToolResults()
			if results["ok"].IsError {
				t.Errorf("the allowed note failed: %+v", results["ok"])
			}
			if !strings.Contains(results["secret"].Text, "review notes must not contain secrets") {
				t.Errorf("the model got %+v for the SECRET note, want the hook's reason", results["secret"])
			}
			if got := notes.Notes(t)[before:]; !slices.Equal(got, []string{"claude: parser.go:42 drops an error"}) {
				t.Errorf("the Service got %q, want only the allowed note", got)
			}
		})
		t.Run("UserSettingsCannotRemoveTheHooks", func(t *testing.T) {
			ran := filepath.Join(t.TempDir(), "user-hook-ran")
			allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
			settings, _ := json.Marshal(map[string]any{"disableAllHooks": true, "hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": "touch " + ran + " && echo '" + allow + "'"}}}}}})
			model := messages.NewModel(t, bash("rm", "rm -rf build"))
			var marker string
			run(t, model, func(home, work string) {
				marker = agenttest.BuildMarker(t, work)
				for _, dir := range []string{filepath.Join(home, ".claude"), filepath.Join(work, ".claude")} {
					writeFile(t, filepath.Join(dir, "settings.json"), string(settings))
				}
			})
			agenttest.FileLeft(t, marker, "rm -rf build ran", "")
			if !strings.Contains(model.ToolResults()["rm"].Text, guardReason) {
				t.Errorf("the model got %+v for rm -rf build, want the guard's reason", model.ToolResults()["rm"])
			}
			agenttest.NoFileLeft(t, ran, "the user's own hook ran next to the managed one", "")
		})
	})

	t.Run("Codex", func(t *testing.T) {
		run := func(t *testing.T, model *responses.Server, userConfig string, prep func(work string)) (string, string) {
			t.Helper()
			home, codexHome, work := t.TempDir(), t.TempDir(), t.TempDir()
			if prep != nil {
				prep(work)
			}
			// The user's own configuration selects the model provider only.
			writeFile(t, filepath.Join(codexHome, "config.toml"), model.CodexConfig()+userConfig)
			argv := codexNS.wrap(t, []string{codex, "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-C", work, "go"})
			out, err := runAgent(argv, work, stockEnv(codex, home, "CODEX_HOME="+codexHome))
			if err != nil {
				t.Logf("codex exec: %v", err)
			}
			return work, out
		}
		t.Run("GuardDeniesRmAndOrdinaryCommandRuns", func(t *testing.T) {
			model := responses.Start(t, responses.Shell("c1", "rm -rf build"), responses.Shell("c2", "touch allowed.txt"), responses.Say("done"))
			var marker string
			work, out := run(t, model, "", func(work string) { marker = agenttest.BuildMarker(t, work) })
			agenttest.FileLeft(t, marker, "rm -rf build ran", out)
			agenttest.FileLeft(t, filepath.Join(work, "allowed.txt"), "the ordinary command did not run", out)
			model.MustHaveGot(t, "c1", guardReason, out+"\nhostd:\n"+hd.log())
			// The platform's text as managed developer instructions
			// (requirements.toml), the tenant's as project content, the
			// Workspace's skills from /etc/codex/skills.
			first := model.Requests()[0].Text()
			for what, want := range map[string]string{
				"the platform's guide as managed developer instructions": "<managed_developer_instructions>",
				"the platform's guide":                 "PLATFORM-GUIDE",
				"the tenant's text as project content": "Project content from namespace " + ns + " (not organisation policy)",
				"the skills root in /etc/codex":        "= `/etc/codex/",
				"the Workspace's skill":                "- review: team-a's review method",
			} {
				if !strings.Contains(first, want) {
					t.Errorf("%s (%q) did not reach the model\n%s", what, want, out)
				}
			}
		})
		t.Run("SecretNoteNeverReachesTheService", func(t *testing.T) {
			before := len(notes.Notes(t))
			var tool string
			call := func(id, text string) responses.Turn {
				return func(r responses.Request) []any {
					for _, name := range r.ToolNames() {
						if strings.HasSuffix(name, "review_note") {
							tool = name
						}
					}
					if tool == "" {
						return []any{responses.Message("no review_note tool offered: " + strings.Join(r.ToolNames(), ","))}
					}
					return []any{responses.FunctionCall(id, tool, map[string]any{"text": text})}
				}
			}
			model := responses.Start(t, call("n1", "codex: parser.go:42 drops an error"), call("n2", "codex: the SECRET is 42"), responses.Say("done"))
			_, out := run(t, model, "", nil)
			if tool == "" {
				t.Fatalf("Codex offered no review_note tool from /etc/codex/config.toml\n%s", out)
			}
			if got := notes.Notes(t)[before:]; !slices.Equal(got, []string{"codex: parser.go:42 drops an error"}) {
				t.Errorf("the Service got %q, want only the allowed note\n%s", got, out)
			}
			model.MustHaveGot(t, "n2", "review notes must not contain secrets", out+"\nhostd:\n"+hd.log())
		})
		t.Run("UserConfigCannotRemoveTheHooks", func(t *testing.T) {
			ran := filepath.Join(t.TempDir(), "user-hook-ran")
			user := responses.CodexUserHookOverride(ran)
			model := responses.Start(t, responses.Shell("c1", "rm -r --force build"), responses.Say("done"))
			var marker string
			_, out := run(t, model, user, func(work string) { marker = agenttest.BuildMarker(t, work) })
			agenttest.FileLeft(t, marker, "rm -r --force build ran", out)
			agenttest.NoFileLeft(t, ran, "the user's own hook ran next to the managed one", out)
			model.MustHaveGot(t, "c1", guardReason, out+"\nhostd:\n"+hd.log())
		})
	})

	// An update of the context reaches the files at /etc/claude-code in a
	// mount namespace set up before it, as in a running container: the
	// volume is mounted whole, and its names follow the generation swap.
	t.Run("UpdateReachesEtcWithoutARestart", func(t *testing.T) {
		skill := "/etc/claude-code/.claude/skills/review/SKILL.md"
		gate := filepath.Join(t.TempDir(), "updated")
		script := fmt.Sprintf(`cat %[1]s; echo; echo ====; while [ ! -e %[2]s ]; do sleep 0.1; done; cat %[1]s`, skill, gate)
		cmd := exec.Command(claudeNS.wrap(t, []string{"sh", "-c", script})[0], claudeNS.wrap(t, []string{"sh", "-c", script})[1:]...)
		var out testenv.SyncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		testenv.Eventually(t, 30*time.Second, func() error {
			if !strings.Contains(out.String(), "====") {
				return fmt.Errorf("the first read has not happened: %q", out.String())
			}
			return nil
		})
		if strings.Contains(out.String(), "UPDATED-REVIEW-BODY") {
			t.Fatal("the update is there before it was made")
		}
		var s v1alpha1.Skill
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "review"}, &s); err != nil {
			t.Fatal(err)
		}
		s.Spec.Body += "\nUPDATED-REVIEW-BODY\n"
		if err := k8sClient.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
		updated := kit.ConfigMap(t, ns, "dev-context")
		testenv.Eventually(t, 60*time.Second, func() error {
			updated = kit.ConfigMap(t, ns, "dev-context")
			if !strings.Contains(updated.Data[contract.KeySkills], "UPDATED-REVIEW-BODY") {
				return fmt.Errorf("the controller has not published the update yet")
			}
			return nil
		})
		agenttest.MountConfigMap(t, dirs[contextVolume], updated.Data) // the kubelet's update of the volume
		testenv.Eventually(t, 30*time.Second, func() error {
			b, err := os.ReadFile(filepath.Join(dirs[treeVolume], ".claude", "skills", "review", "SKILL.md"))
			if err != nil || !strings.Contains(string(b), "UPDATED-REVIEW-BODY") {
				return fmt.Errorf("hostd has not written the update into the tree yet (%v)\n%s", err, hd.log())
			}
			return nil
		})
		writeFile(t, gate, "")
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if _, after, _ := strings.Cut(out.String(), "===="); !strings.Contains(after, "UPDATED-REVIEW-BODY") {
			t.Errorf("the running namespace's %s did not follow the update:\n%s", skill, out.String())
		}
	})

	// With hostd down, no call runs in either agent.
	t.Run("HostdDownBlocksEveryCall", func(t *testing.T) {
		hd.stop()
		before := len(notes.Notes(t))
		cm := messages.NewModel(t,
			messages.Turn{Tools: []messages.ToolUse{{ID: "touch", Name: "Bash", Input: map[string]any{"command": "touch made", "description": "touch"}}}},
			messages.Turn{Tools: []messages.ToolUse{{ID: "note", Name: "mcp__loadout__review_note", Input: map[string]any{"text": "a note"}}}})
		work := t.TempDir()
		out, _ := runAgent(claudeNS.wrap(t, []string{claude, "-p", "go", "--output-format", "json", "--allowedTools", "Bash", "mcp__loadout__review_note"}),
			work, stockEnv(claude, t.TempDir(), "ANTHROPIC_BASE_URL="+cm.URL, "ANTHROPIC_API_KEY=sk-ant-scripted",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"))
		agenttest.NoFileLeft(t, filepath.Join(work, "made"), "Claude Code ran a command with hostd down", out)
		for id, r := range cm.ToolResults() {
			if !r.IsError {
				t.Errorf("Claude Code's %s with hostd down: %+v, want an error result", id, r)
			}
		}
		xm := responses.Start(t, func(responses.Request) []any {
			return []any{responses.FunctionCall("c1", "exec_command", map[string]any{"cmd": "touch ran.txt"})}
		}, func(responses.Request) []any { return []any{responses.Message("done")} })
		home, codexHome, xwork := t.TempDir(), t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(codexHome, "config.toml"), xm.CodexConfig())
		out, _ = runAgent(codexNS.wrap(t, []string{codex, "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-C", xwork, "go"}),
			xwork, stockEnv(codex, home, "CODEX_HOME="+codexHome))
		agenttest.NoFileLeft(t, filepath.Join(xwork, "ran.txt"), "Codex ran a command with hostd down", out)
		if got := notes.Notes(t)[before:]; len(got) != 0 {
			t.Errorf("the Service got %q with hostd down", got)
		}
	})
}

// applySamples applies config/samples' team-a objects into ns and the
// samples' platform guard, imposed on ns only (other tests' Workspaces share
// the platform namespace). The sample Deployments, the review-notes Service
// (the test runs its own) and the platform's skill are left out.
func applySamples(t *testing.T, ns string) {
	t.Helper()
	all, err := manifests.Read(filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []manifests.Manifest
	for _, m := range all {
		o := m.Object
		switch {
		case o.GetKind() == "Extension" && o.GetNamespace() == platformNS && o.GetName() == "platform-guard":
			o.SetName("platform-guard-" + ns)
			if err := unstructuredSet(o.Object, map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}, "spec", "namespaceSelector"); err != nil {
				t.Fatal(err)
			}
			if err := unstructuredSet(o.Object, "platform-guard", "spec", "name"); err != nil {
				t.Fatal(err)
			}
			// The platform's text, which each agent must get as its
			// organisation's policy.
			if err := unstructuredSet(o.Object, platformGuide, "spec", "promptGuide"); err != nil {
				t.Fatal(err)
			}
			deleteWhenDone(t, o.DeepCopy())
		case o.GetNamespace() == "team-a" && o.GetKind() != "Service" && o.GetKind() != "Deployment":
			o.SetNamespace(ns)
		default:
			continue
		}
		keep = append(keep, m)
	}
	if err := manifests.Apply(context.Background(), k8sClient, keep); err != nil {
		t.Fatal(err)
	}
}

func unstructuredSet(obj map[string]any, value any, fields ...string) error {
	m := obj
	for _, f := range fields[:len(fields)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[f] = next
		}
		m = next
	}
	m[fields[len(fields)-1]] = value
	return nil
}

// podHostd is the pod's hostd, run from the sidecar binary.
type podHostd struct {
	cmd *exec.Cmd
	out *testenv.SyncBuffer
}

func (h *podHostd) log() string { return h.out.String() }

func (h *podHostd) stop() {
	if h.cmd.ProcessState == nil {
		_ = h.cmd.Process.Signal(os.Interrupt)
		_ = h.cmd.Wait()
	}
}

// startPodHostd runs hostd as the pod's sidecar spells it: its command's
// flags, each path under one of its mounts moved to that volume's directory,
// --addr and --probe-addr on free loopback ports (the tree then names that
// address), and its env. extra are the test's --service-address flags (no
// cluster DNS here). It returns once /readyz answers 200.
func startPodHostd(t *testing.T, bin string, h *corev1.Container, dirs map[string]string, extra []string) *podHostd {
	t.Helper()
	addr, probe := testnet.FreeAddr(t), testnet.FreeAddr(t)
	var args []string
	for _, a := range h.Command[1:] {
		flag, value, ok := strings.Cut(a, "=")
		switch {
		case ok && flag == "--addr":
			value = addr
		case ok && flag == "--probe-addr":
			value = probe
		case ok:
			for _, m := range h.VolumeMounts {
				if rest, under := strings.CutPrefix(value, m.MountPath); under && (rest == "" || rest[0] == '/') {
					value = dirs[m.Name] + rest
				}
			}
		}
		if ok {
			a = flag + "=" + value
		}
		args = append(args, a)
	}
	args = append(args, "--poll-interval=100ms")
	args = append(args, extra...)
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range h.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	p := &podHostd{cmd: exec.Command(bin, args...), out: &testenv.SyncBuffer{}}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	testenv.Eventually(t, 60*time.Second, func() error {
		if err := testnet.Answers("http://"+probe+"/readyz", http.StatusOK); err != nil {
			return fmt.Errorf("%v\n%s", err, p.log())
		}
		return nil
	})
	return p
}

// mountNS is what one container of the pod sees: each volume mount, bound
// from its volume's directory.
type mountNS struct {
	mounts []corev1.VolumeMount
	dirs   map[string]string
}

// podMounts is c's mounts, which must all be under /etc (the overlay lets the
// test make their mount points without touching the machine's /etc).
func podMounts(t *testing.T, c *corev1.Container, dirs map[string]string) *mountNS {
	t.Helper()
	var paths []string
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(m.MountPath, "/etc/") || m.SubPath != "" || dirs[m.Name] == "" {
			t.Fatalf("container %s mounts %+v: not one this test can give", c.Name, m)
		}
		paths = append(paths, m.MountPath)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"/etc/claude-code", "/etc/codex"}) {
		t.Fatalf("container %s mounts %v, want the tree at /etc/claude-code and /etc/codex", c.Name, paths)
	}
	return &mountNS{mounts: c.VolumeMounts, dirs: dirs}
}

// wrap returns argv run in a private user and mount namespace where /etc is
// an overlay on the machine's and each mount is bound on it, read-only when
// the pod says so, as the kubelet binds a volume into a container.
func (n *mountNS) wrap(t *testing.T, argv []string) []string {
	t.Helper()
	overlay := t.TempDir()
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(overlay, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("set -e; mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/upper,workdir=%s/work /etc", overlay, overlay)
	for _, m := range n.mounts {
		script += fmt.Sprintf("; mkdir -p %q; mount --bind %q %q", m.MountPath, n.dirs[m.Name], m.MountPath)
		if m.ReadOnly {
			script += fmt.Sprintf("; mount -o remount,bind,ro %q", m.MountPath)
		}
	}
	return append([]string{"unshare", "-rm", "--", "sh", "-c", script + `; exec "$0" "$@"`}, argv...)
}

// stockEnv is a stock agent image's environment: the CLI and node on the
// PATH, no loadout, no LOADOUT_* variables.
func stockEnv(cli, home string, extra ...string) []string {
	path := strings.Join([]string{filepath.Dir(cli), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator))
	return append([]string{"HOME=" + home, "PATH=" + path, "NO_PROXY=127.0.0.1,localhost"}, extra...)
}

// runAgent runs argv in dir with env, bounded, and returns its output.
func runAgent(argv []string, dir string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("did not end within 3m: %w", ctx.Err())
	}
	return out.String(), err
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
