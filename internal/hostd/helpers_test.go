package hostd

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// fixedRegistry is the registry of the fixed example (docs/rules.md) as the controller publishes it.
func fixedRegistry() contract.Registry {
	return contract.Registry{
		Tools: []contract.Tool{
			{Name: "bash", Builtin: true},
			{Name: "review_note", Description: "Leave a review note", Extension: "review-extension", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		Hooks: []contract.Hook{
			{Extension: "review-extension", Name: "no-secrets", Event: contract.EventBeforeToolCall, Tools: []string{"review_note"}, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "!has(call.arguments.text) || !call.arguments.text.contains('SECRET')", Message: "notes must not contain secrets"}},
			{Extension: "review-extension", Name: "observe", Event: contract.EventAfterToolResult, TimeoutSeconds: 10,
				CEL: &contract.CELHook{Expression: "!result.isError", Message: "tool failed"}},
		},
		MessageTypes: []contract.MessageType{{Extension: "review-extension", Type: "review/note", InContext: true}},
		PromptGuides: []contract.PromptGuide{{Extension: "review-extension", Text: "Use review_note."}},
		Extensions:   []string{"review-extension"},
		Deny:         []string{"bash"},
	}
}

// contextData encodes the four keys of a context around reg, with a valid hash.
func contextData(t testing.TB, reg contract.Registry) map[string]string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	m := contract.Manifest{
		APIVersion: contract.APIVersion, Kind: contract.ManifestKind,
		Workspace: contract.WorkspaceRef{Name: "ws", Namespace: "team-a"},
		Templates: []contract.TemplateInfo{{Name: "review", Variables: []string{"file", "owner"}}},
		Registry:  reg,
		// The prompt's one instruction, the platform's.
		Instructions: []string{"configmap/loadout-system/org/AGENTS.md"},
		InstructionSources: []contract.InstructionSource{{Origin: "configmap/loadout-system/org/AGENTS.md", Length: len("# Instructions"),
			Provenance: contract.Provenance{Authority: contract.AuthorityPlatform, Namespace: "loadout-system", Kind: contract.ProvenanceConfigMap, Name: "org", Key: "AGENTS.md"}}},
		InstructionsLength: len("# Instructions"),
	}
	data := map[string]string{
		contract.KeySystemPrompt: "# Instructions\n",
		contract.KeySkills: enc(contract.Skills{Skills: []contract.SkillDoc{{Name: "review", Description: "Review code", Origin: "project",
			Body: "Project review body", Files: []contract.FileDoc{{Path: "checklist.md", Content: "- tests"}}}}}),
		contract.KeyTemplates: enc(contract.Templates{Templates: []contract.TemplateDoc{{Name: "review", Origin: "project",
			Body: "Review {{file}} for {{owner}}. Focus on {{file}}.", Variables: []string{"file", "owner"}}}}),
		contract.KeyManifest: enc(m),
	}
	m.Hash = resources.ContextHash(data)
	data[contract.KeyManifest] = enc(m)
	return data
}

// newTestServer serves a context directory holding reg.
func newTestServer(t testing.TB, reg contract.Registry) (*Server, *httptest.Server, string) {
	t.Helper()
	return serveContext(t, contextData(t, reg), Options{Now: func() time.Time { return time.UnixMilli(42) }})
}

// loadContext writes data to a fresh context directory and loads it into a
// server made with opts, whose ContextDir it sets; its Logger drops hostd's
// lines unless opts names one. It returns the server and the directory.
func loadContext(t testing.TB, data map[string]string, opts Options) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, data)
	opts.ContextDir = dir
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	s := New(opts)
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// reloadWith writes data over s's context directory dir, as the kubelet
// updates a mounted ConfigMap, and reloads s, which must take it.
func reloadWith(t testing.TB, s *Server, dir string, data map[string]string) {
	t.Helper()
	resourcestest.WriteConfigMapDir(t, dir, data)
	if err := s.Reload(context.Background(), false); err != nil {
		t.Fatal(err)
	}
}

// rehash sets the hash manifest.json carries to that of data as it now is,
// after edit (if any) changed the manifest, and returns the hash.
func rehash(t testing.TB, data map[string]string, edit func(*contract.Manifest)) string {
	t.Helper()
	var m contract.Manifest
	if err := json.Unmarshal([]byte(data[contract.KeyManifest]), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&m)
	}
	enc := func() string {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	data[contract.KeyManifest] = enc()
	m.Hash = resources.ContextHash(data) // the hash blanks manifest.json's own "hash"
	data[contract.KeyManifest] = enc()
	return m.Hash
}

// withKey sets data's key to v as JSON and rehashes it.
func withKey(t testing.TB, data map[string]string, key string, v any) map[string]string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	data[key] = string(b)
	rehash(t, data, nil)
	return data
}

// serveContext is loadContext, its API served until the test ends.
func serveContext(t testing.TB, data map[string]string, opts Options) (*Server, *httptest.Server, string) {
	t.Helper()
	s, dir := loadContext(t, data, opts)
	return s, testnet.ServeHandler(t, s.Handler()), dir
}

// loadAndServe loads s's first context and serves its API and its probe
// listener, for the tests that watch /readyz and the metrics while policy
// changes.
func loadAndServe(t *testing.T, s *Server) (api, probes *httptest.Server) {
	t.Helper()
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	return serveOnly(t, s)
}

// post sends body as JSON and decodes the answer into out; it returns the
// status. The hostd tests call it on every route.
var post = testnet.PostJSON

// quietLogger drops hostd's log lines.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mustRefuseReload reloads s, which must fail, and checks that the good
// context (served hash good) is still the one served and still enforced: a
// refused or broken context never replaces a working one.
func mustRefuseReload(t *testing.T, s *Server, ts *httptest.Server, good string) {
	t.Helper()
	if err := s.Reload(context.Background(), false); err == nil {
		t.Fatal("the refused context loaded")
	}
	if servedHash(s) != good {
		t.Fatal("the refused context replaced the good one")
	}
	var resp BeforeResponse
	post(t, ts.URL+"/v1/before", callBody("1", "review_note", "SECRET"), &resp)
	if resp.Allowed {
		t.Fatal("the good context's policy no longer holds")
	}
}

// tenantHookText is text a hook of extension ext (no namespace in the
// registry) added, as hostd labels it (exthost.RenderHookText).
func tenantHookText(ext, text string) string {
	return exthost.RenderHookText([]exthost.HookText{{Extension: ext, Text: text}})
}
