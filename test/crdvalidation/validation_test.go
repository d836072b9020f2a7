package crdvalidation

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// object builds an unstructured Loadout object from a YAML spec, so that a
// case can hold shapes the Go types would refuse to express.
func object(t *testing.T, kind, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("bad spec in test case: %v", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "loadout.dev/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       s,
	}}
	return u
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crd-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), ns) })
	return ns.Name
}

const (
	validSkill     = "description: Reviews code.\nbody: Check every file.\n"
	validHookCEL   = "cel: {expression: 'true'}"
	validTemplate  = "body: Review {{file}}.\n"
	validExtension = "tools: [{name: review_note, description: Adds a review note.}]\n"
	// digest and commit are well-formed pins for source cases.
	digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	commit = "0123456789abcdef0123456789abcdef01234567"
)

type validationCase struct {
	name string
	kind string
	// objectName is metadata.name; spec.name is set by the spec when a case needs it.
	objectName string
	spec       string
	// wants are substrings the API server's error must contain; empty means the
	// object is valid and must be accepted.
	wants []string
}

// pemKey is a PEM public key as a YAML double-quoted scalar's content.
const pemKey = `-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfAKE\n-----END PUBLIC KEY-----\n`

func TestCRDValidation_RejectsInvalidAndAcceptsValidObjects(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []validationCase{
		// Skill: rule R-SK-1.
		{name: "skill valid", kind: "Skill", objectName: "review", spec: validSkill},
		{name: "skill valid with spec.name and files", kind: "Skill", objectName: "review.object", spec: "name: review\n" + validSkill + "files: [{path: checklist.md, content: x}, {path: docs/a.md, content: z}]\n"},
		{name: "skill name uppercase", kind: "Skill", objectName: "a", spec: "name: Review\n" + validSkill, wants: []string{"spec.name", "should match"}},
		{name: "skill name double hyphen", kind: "Skill", objectName: "a", spec: "name: code--review\n" + validSkill, wants: []string{"spec.name", "must not contain consecutive hyphens"}},
		{name: "skill name leading hyphen", kind: "Skill", objectName: "a", spec: "name: -review\n" + validSkill, wants: []string{"spec.name", "should match"}},
		{name: "skill name trailing hyphen", kind: "Skill", objectName: "a", spec: "name: review-\n" + validSkill, wants: []string{"spec.name", "should match"}},
		{name: "skill name too long", kind: "Skill", objectName: "a", spec: "name: " + long(65) + "\n" + validSkill, wants: []string{"spec.name", "64"}},
		{name: "skill metadata.name invalid without spec.name", kind: "Skill", objectName: "code--review", spec: validSkill, wants: []string{"metadata.name must be a valid skill name"}},
		{name: "skill metadata.name with dot without spec.name", kind: "Skill", objectName: "code.review", spec: validSkill, wants: []string{"metadata.name must be a valid skill name"}},
		{name: "skill description missing", kind: "Skill", objectName: "a", spec: "body: x\n", wants: []string{"spec.description", "Required"}},
		{name: "skill description blank", kind: "Skill", objectName: "a", spec: "description: '   '\nbody: x\n", wants: []string{"spec.description", "must not be blank"}},
		{name: "skill description too long", kind: "Skill", objectName: "a", spec: "description: " + long(1025) + "\nbody: x\n", wants: []string{"spec.description", "1024"}},
		{name: "skill file path absolute", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: /etc/passwd, content: x}]\n", wants: []string{"spec.files[0].path", "must be relative"}},
		{name: "skill file path traversal", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: ../secret.md, content: x}]\n", wants: []string{"spec.files[0].path", "'..' segment"}},
		{name: "skill file path inner traversal", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: docs/../../x.md, content: x}]\n", wants: []string{"'..' segment"}},
		{name: "skill file path backslash", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: 'docs\\x.md', content: x}]\n", wants: []string{"no backslash"}},
		{name: "skill file paths duplicate", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: a.md, content: x}, {path: a.md, content: z}]\n", wants: []string{"file paths must be unique"}},
		{name: "skill compatibility too long", kind: "Skill", objectName: "a", spec: validSkill + "compatibility: " + long(501) + "\n", wants: []string{"spec.compatibility", "500"}},
		// Skill: binary files and external sources.
		{name: "skill binary file", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: fonts/a.ttf, binaryContent: AAEC/w==}, {path: run.sh, content: 'echo', executable: true}]\n"},
		{name: "skill file with content and binaryContent", kind: "Skill", objectName: "a", spec: validSkill + "files: [{path: a.bin, content: x, binaryContent: AAEC}]\n", wants: []string{"spec.files[0]", "set content or binaryContent, not both"}},
		{name: "skill oci source", kind: "Skill", objectName: "docx", spec: "description: Edits documents.\nsource: {oci: {reference: 'ghcr.io/acme/skills/docx@sha256:" + digest + "'}}\n"},
		{name: "skill oci source with port", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: '127.0.0.1:5000/skills/docx@sha256:" + digest + "'}}\n"},
		{name: "skill git source", kind: "Skill", objectName: "pdf", spec: "description: Reads PDFs.\nsource: {git: {url: 'https://github.com/anthropics/skills', commit: '" + commit + "', path: skills/pdf}}\n"},
		{name: "skill body missing without source", kind: "Skill", objectName: "a", spec: "description: x\n", wants: []string{"spec.body", "body is required unless source is set"}},
		{name: "skill source with body", kind: "Skill", objectName: "a", spec: validSkill + "source: {oci: {reference: 'ghcr.io/a/b@sha256:" + digest + "'}}\n", wants: []string{"body and files must be unset when source is set"}},
		{name: "skill source with files", kind: "Skill", objectName: "a", spec: "description: x\nfiles: [{path: a.md, content: x}]\nsource: {oci: {reference: 'ghcr.io/a/b@sha256:" + digest + "'}}\n", wants: []string{"body and files must be unset when source is set"}},
		{name: "skill source empty", kind: "Skill", objectName: "a", spec: "description: x\nsource: {}\n", wants: []string{"exactly one of oci or git must be set"}},
		{name: "skill source oci and git", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: 'ghcr.io/a/b@sha256:" + digest + "'}, git: {url: 'https://x/y', commit: '" + commit + "'}}\n", wants: []string{"exactly one of oci or git must be set"}},
		{name: "skill oci source by tag", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: 'ghcr.io/acme/skills/docx:v1'}}\n", wants: []string{"spec.source.oci.reference", "must be pinned by digest"}},
		{name: "skill oci source with tag and digest", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: 'ghcr.io/acme/docx:v1@sha256:" + digest + "'}}\n", wants: []string{"must not name a tag next to its digest"}},
		{name: "skill oci source short digest", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: 'ghcr.io/acme/docx@sha256:abc'}}\n", wants: []string{"must be pinned by digest"}},
		{name: "skill oci source uppercase repository", kind: "Skill", objectName: "a", spec: "description: x\nsource: {oci: {reference: 'ghcr.io/Acme/docx@sha256:" + digest + "'}}\n", wants: []string{"lowercase repository path"}},
		{name: "skill git source branch", kind: "Skill", objectName: "a", spec: "description: x\nsource: {git: {url: 'https://x/y', commit: main}}\n", wants: []string{"spec.source.git.commit", "full 40-character"}},
		{name: "skill git source short commit", kind: "Skill", objectName: "a", spec: "description: x\nsource: {git: {url: 'https://x/y', commit: 'abc1234'}}\n", wants: []string{"full 40-character"}},
		{name: "skill git source plain http", kind: "Skill", objectName: "a", spec: "description: x\nsource: {git: {url: 'http://x/y', commit: '" + commit + "'}}\n", wants: []string{"spec.source.git.url", "https:// or ssh://"}},
		{name: "skill git source path traversal", kind: "Skill", objectName: "a", spec: "description: x\nsource: {git: {url: 'https://x/y', commit: '" + commit + "', path: ../etc}}\n", wants: []string{"spec.source.git.path", "'..' segment"}},
		{name: "skill git source absolute path", kind: "Skill", objectName: "a", spec: "description: x\nsource: {git: {url: 'https://x/y', commit: '" + commit + "', path: /etc}}\n", wants: []string{"spec.source.git.path", "must be relative"}},
		// Template.
		{name: "template valid", kind: "Template", objectName: "review", spec: validTemplate},
		{name: "template body missing", kind: "Template", objectName: "review", spec: "description: x\n", wants: []string{"spec.body", "Required"}},
		{name: "template name invalid", kind: "Template", objectName: "review", spec: "name: Review_It\n" + validTemplate, wants: []string{"spec.name", "should match"}},
		{name: "template metadata.name invalid without spec.name", kind: "Template", objectName: "re--view", spec: validTemplate, wants: []string{"metadata.name must be a valid template name"}},
		// Template steps (R-TPL-5).
		{name: "template steps valid", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- tool: bash\n  arguments: {command: \"git diff {{file}}\", timeout: 10}\n- render: true\n- template: other\n"},
		{name: "template step with two actions", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- tool: bash\n  render: true\n", wants: []string{"exactly one of tool, render or template"}},
		{name: "template step with no action", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- {}\n", wants: []string{"exactly one of tool, render or template"}},
		{name: "template step arguments without tool", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- render: true\n  arguments: {a: b}\n", wants: []string{"arguments belong to a tool step"}},
		{name: "template step render false", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- render: false\n", wants: []string{"render must be true"}},
		{name: "template step arguments not an object", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n- tool: bash\n  arguments: [1]\n", wants: []string{"spec.steps[0].arguments"}},
		{name: "template too many steps", kind: "Template", objectName: "review", spec: validTemplate + "steps:\n" + strings.Repeat("- render: true\n", 17), wants: []string{"spec.steps", "Too many"}},
		// Extension.
		{name: "extension valid", kind: "Extension", objectName: "review-extension", spec: validExtension + "hooks: [{name: deny-secret, event: BeforeToolCall, match: {tools: [review_note]}, cel: {expression: \"!call.arguments.text.contains('SECRET')\", message: no secrets}}, {name: audit, event: AfterToolResult, webhook: {service: {name: audit, port: 8080, path: /after}}}]\n"},
		{name: "extension duplicate tool names", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: x}, {name: t, description: w}]\n", wants: []string{"tool names must be unique within an extension"}},
		{name: "extension tool name invalid", kind: "Extension", objectName: "a", spec: "tools: [{name: 'bad name', description: x}]\n", wants: []string{"spec.tools[0].name", "should match"}},
		{name: "extension tool description blank", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: ' '}]\n", wants: []string{"spec.tools[0].description", "must not be blank"}},
		{name: "extension tool inputSchema not an object", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: x, inputSchema: [1, 2]}]\n", wants: []string{"spec.tools[0].inputSchema", "object"}},
		{name: "extension hook without cel or webhook", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall}]\n", wants: []string{"exactly one of cel or webhook must be set"}},
		{name: "extension hook with cel and webhook", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, cel: {expression: 'true'}, webhook: {service: {name: s}}}]\n", wants: []string{"exactly one of cel or webhook must be set"}},
		{name: "extension hook event unknown", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: DuringToolCall, " + validHookCEL + "}]\n", wants: []string{"spec.hooks[0].event", "Unsupported value", "BeforeToolCall"}},
		{name: "extension lifecycle events valid", kind: "Extension", objectName: "a", spec: "hooks: [{name: s, event: SessionStart, " + validHookCEL + "}, {name: u, event: UserInput, " + validHookCEL + "}, {name: b, event: BeforeAgentStart, " + validHookCEL + "}, {name: f, event: ToolFailure, match: {tools: [shell]}, " + validHookCEL + "}, {name: c, event: BeforeCompact, " + validHookCEL + "}, {name: e, event: SessionEnd, " + validHookCEL + "}]\n"},
		{name: "extension match on a session event", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: UserInput, match: {tools: [shell]}, " + validHookCEL + "}]\n", wants: []string{"match applies to tool events only"}},
		{name: "extension hook timeout zero", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, timeoutSeconds: 0, " + validHookCEL + "}]\n", wants: []string{"spec.hooks[0].timeoutSeconds", "greater than or equal to 1"}},
		{name: "extension hook timeout over 30", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, timeoutSeconds: 31, " + validHookCEL + "}]\n", wants: []string{"spec.hooks[0].timeoutSeconds", "less than or equal to 30"}},
		{name: "extension duplicate hook names", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, " + validHookCEL + "}, {name: h, event: AfterToolResult, " + validHookCEL + "}]\n", wants: []string{"hook names must be unique"}},
		{name: "extension webhook path relative", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, path: before}}}]\n", wants: []string{"spec.hooks[0].webhook.service.path", "must start with '/'"}},
		{name: "extension webhook port out of range", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, port: 70000}}}]\n", wants: []string{"spec.hooks[0].webhook.service.port"}},
		{name: "extension webhook plain HTTP declared", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, port: 8080, scheme: HTTP}}}]\n"},
		{name: "extension webhook HTTPS with caBundle", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, caBundle: TFMwdExTMHRDUW89}}}]\n"},
		{name: "extension webhook caBundle with plain HTTP", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, scheme: HTTP, caBundle: TFMwdExTMHRDUW89}}}]\n", wants: []string{"spec.hooks[0].webhook.service", "caBundle needs scheme HTTPS"}},
		{name: "extension webhook unknown scheme", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: s, scheme: FTP}}}]\n", wants: []string{"spec.hooks[0].webhook.service.scheme", "Unsupported value"}},
		// Extension sandbox (docs/security.md, "Sandbox").
		{name: "extension sandbox valid", kind: "Extension", objectName: "a", spec: "sandbox: {filesystem: {paths: [{path: /, access: [read, execute]}, {path: /workspace, access: [read, write, create]}]}, network: {connectPorts: [443]}, unsandboxedAgents: Refuse}\n"},
		{name: "extension sandbox relative path", kind: "Extension", objectName: "a", spec: "sandbox: {filesystem: {paths: [{path: workspace, access: [read]}]}}\n", wants: []string{"spec.sandbox.filesystem.paths[0].path", "must be an absolute path"}},
		{name: "extension sandbox unclean path", kind: "Extension", objectName: "a", spec: "sandbox: {filesystem: {paths: [{path: /workspace/../etc, access: [read]}]}}\n", wants: []string{"must be clean"}},
		{name: "extension sandbox unknown right", kind: "Extension", objectName: "a", spec: "sandbox: {filesystem: {paths: [{path: /w, access: [delete]}]}}\n", wants: []string{"spec.sandbox.filesystem.paths[0].access[0]", "Unsupported value"}},
		{name: "extension sandbox port out of range", kind: "Extension", objectName: "a", spec: "sandbox: {network: {connectPorts: [0]}}\n", wants: []string{"spec.sandbox.network.connectPorts[0]"}},
		{name: "extension optional with sandbox", kind: "Extension", objectName: "a", spec: "optional: true\nsandbox: {network: {}}\n", wants: []string{"no sandbox"}},
		{name: "extension runnable tool", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, implementation: {service: {name: s, port: 8080, path: /run, scheme: HTTP}, timeoutSeconds: 60}}]\n"},
		{name: "extension runnable tool timeout over 300", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, implementation: {service: {name: s}, timeoutSeconds: 301}}]\n", wants: []string{"spec.tools[0].implementation.timeoutSeconds"}},
		{name: "extension runnable tool without service", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, implementation: {timeoutSeconds: 5}}]\n", wants: []string{"spec.tools[0].implementation.service", "Required value"}},
		{name: "extension runnable tool caBundle with plain HTTP", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, implementation: {service: {name: s, scheme: HTTP, caBundle: TFMwdExTMHRDUW89}}}]\n", wants: []string{"spec.tools[0].implementation.service", "caBundle needs scheme HTTPS"}},
		{name: "extension webhook service name with dots", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, webhook: {service: {name: evil.example.com}}}]\n", wants: []string{"spec.hooks[0].webhook.service.name", "should match"}},
		{name: "extension cel expression empty", kind: "Extension", objectName: "a", spec: "hooks: [{name: h, event: BeforeToolCall, cel: {expression: ''}}]\n", wants: []string{"spec.hooks[0].cel.expression"}},
		// Extension tools: rule R-TL-1 (descriptions), R-TL-2 and R-TL-3 (output, executionMode).
		{name: "extension tool description points at the tool", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: Use this tool to record notes.}]\n", wants: []string{"spec.tools[0]", "never 'this tool' or 'use this'"}},
		{name: "extension tool description says call this", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: 'Notes. Call  this when done.'}]\n", wants: []string{"never 'this tool' or 'use this'"}},
		{name: "extension tool traits valid", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: Record a review note., destructive: false, idempotent: true, openWorld: true, output: {maxBytes: 4096, onOverflow: Refuse}, executionMode: Serial}]\n"},
		{name: "extension tool output too small", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, output: {maxBytes: 10}}]\n", wants: []string{"spec.tools[0].output.maxBytes", "greater than or equal to 256"}},
		{name: "extension tool output over 1 MiB", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, output: {maxBytes: 2000000}}]\n", wants: []string{"spec.tools[0].output.maxBytes", "less than or equal to 1048576"}},
		{name: "extension tool overflow unknown", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, output: {maxBytes: 4096, onOverflow: Drop}}]\n", wants: []string{"spec.tools[0].output.onOverflow", "Unsupported value"}},
		{name: "extension tool execution mode unknown", kind: "Extension", objectName: "a", spec: "tools: [{name: t, description: d, executionMode: Sometimes}]\n", wants: []string{"spec.tools[0].executionMode", "Unsupported value"}},
		{name: "extension duplicate message types", kind: "Extension", objectName: "a", spec: "messageTypes: [{type: note}, {type: note, inContext: true}]\n", wants: []string{"message types must be unique"}},
		{name: "extension message type with a template", kind: "Extension", objectName: "a", spec: "messageTypes: [{type: ci/status, inContext: true, template: 'CI: {{content}}'}]\n"},
		{name: "extension Stop and turn hooks", kind: "Extension", objectName: "a", spec: "hooks: [{name: s, event: Stop, cel: {expression: 'stop.active'}}, {name: t, event: TurnEnd, cel: {expression: 'true'}}, {name: m, event: BeforeModelRequest, cel: {expression: 'true'}}]\n"},
		{name: "extension paramRef", kind: "Extension", objectName: "a", spec: "paramRef: {name: guard-params, from: Extension, parameterNotFoundAction: Allow}\n"},
		{name: "extension paramRef unknown source", kind: "Extension", objectName: "a", spec: "paramRef: {name: guard-params, from: Cluster}\n", wants: []string{"spec.paramRef.from", "Unsupported value"}},
		{name: "extension paramRef unknown action", kind: "Extension", objectName: "a", spec: "paramRef: {name: guard-params, parameterNotFoundAction: Ignore}\n", wants: []string{"spec.paramRef.parameterNotFoundAction", "Unsupported value"}},
		{name: "extension paramRef name not a ConfigMap name", kind: "Extension", objectName: "a", spec: "paramRef: {name: Guard_Params}\n", wants: []string{"spec.paramRef.name", "should match"}},
		// Extension MCP server headers: rule R-EXT-7 (never in the clear).
		{name: "extension mcp headersFrom over HTTPS", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s}, tools: {allow: [x]}, headersFrom: {secretRef: {name: key}}}\n"},
		{name: "extension mcp headersFrom by url", kind: "Extension", objectName: "a", spec: "mcpServer: {url: 'https://mcp.example.com/mcp', tools: {allow: [x]}, headersFrom: {secretRef: {name: key}}}\n"},
		{name: "extension mcp headersFrom over plain HTTP", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s, scheme: HTTP}, tools: {allow: [x]}, headersFrom: {secretRef: {name: key}}}\n", wants: []string{"spec.mcpServer.headersFrom", "headersFrom needs HTTPS", "in the clear"}},
		{name: "extension mcp plain HTTP without headers", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s, scheme: HTTP}, tools: {allow: [x]}}\n"},
		// Extension MCP pins: rule R-TL-5.
		{name: "extension mcp pins", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s}, tools: {allow: [x], onDrift: BlockTool, pins: [{name: x, digest: 'sha256:" + strings.Repeat("ab", 32) + "'}]}}\n"},
		{name: "extension mcp pin outside allow", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s}, tools: {allow: [x], pins: [{name: other, digest: 'sha256:" + strings.Repeat("ab", 32) + "'}]}}\n", wants: []string{"each pin must name a tool in allow"}},
		{name: "extension mcp pin bad digest", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s}, tools: {allow: [x], pins: [{name: x, digest: 'md5:00'}]}}\n", wants: []string{"spec.mcpServer.tools.pins[0].digest", "should match"}},
		{name: "extension mcp unknown drift policy", kind: "Extension", objectName: "a", spec: "mcpServer: {service: {name: s}, tools: {allow: [x], onDrift: Ignore}}\n", wants: []string{"spec.mcpServer.tools.onDrift", "Unsupported value"}},
		// Extension content rules.
		{name: "extension content rules", kind: "Extension", objectName: "a", spec: "contentRules: [{name: no-override, target: Skill, expression: \"!skill.text.contains('ignore previous instructions')\", message: refused}, {name: tools, target: Tool, expression: 'true', message: m}]\n"},
		{name: "extension content rule unknown target", kind: "Extension", objectName: "a", spec: "contentRules: [{name: r, target: Prompt, expression: 'true', message: m}]\n", wants: []string{"spec.contentRules[0].target", "Unsupported value"}},
		{name: "extension content rule without message", kind: "Extension", objectName: "a", spec: "contentRules: [{name: r, target: Skill, expression: 'true'}]\n", wants: []string{"spec.contentRules[0].message", "Required"}},
		{name: "extension optional with content rules", kind: "Extension", objectName: "a", spec: "optional: true\ncontentRules: [{name: r, target: Skill, expression: 'true', message: m}]\n", wants: []string{"an optional extension carries no contentRules"}},
		// Signed skills.
		{name: "extension skill signers", kind: "Extension", objectName: "a", spec: "skillSigners: {publicKeys: [\"" + pemKey + "\"]}\n"},
		{name: "extension skill signers not PEM", kind: "Extension", objectName: "a", spec: "skillSigners: {publicKeys: [ssh-ed25519 AAAA]}\n", wants: []string{"spec.skillSigners.publicKeys[0]", "must be a PEM public key"}},
		{name: "extension skill signers empty", kind: "Extension", objectName: "a", spec: "skillSigners: {publicKeys: []}\n", wants: []string{"name at least one public key or identity"}},
		{name: "extension optional with skill signers", kind: "Extension", objectName: "a", spec: "optional: true\nskillSigners: {publicKeys: [\"" + pemKey + "\"]}\n", wants: []string{"an optional extension carries no skillSigners"}},
		{name: "extension skill signer identity", kind: "Extension", objectName: "a", spec: "skillSigners: {identities: [{issuer: 'https://token.actions.githubusercontent.com', subject: 'https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main'}], trustedRoot: '{}'}\n"},
		{name: "extension skill signer identity without trusted root", kind: "Extension", objectName: "a", spec: "skillSigners: {identities: [{issuer: i, subject: s}]}\n", wants: []string{"identities need a trustedRoot"}},
		{name: "extension skill signers with neither key nor identity", kind: "Extension", objectName: "a", spec: "skillSigners: {trustedRoot: '{}'}\n", wants: []string{"name at least one public key or identity"}},
		{name: "workspace skill signers", kind: "Workspace", objectName: "dev", spec: "skillSigners: {publicKeys: [\"" + pemKey + "\"]}\n"},
		// Workspace.
		{name: "workspace valid empty spec", kind: "Workspace", objectName: "dev", spec: "{}"},
		{name: "workspace valid full", kind: "Workspace", objectName: "dev", spec: "roots: [{name: project}, {name: platform, namespace: loadout-system}]\ninstructions: [{inline: Be careful.}, {configMapKeyRef: {name: rules}}]\nactivate: [{skill: review, files: [checklist.md]}]\ntools: {builtin: [read, bash], deny: [bash]}\noutput: {configMapName: dev-ctx}\nbudget: {maxContextBytes: 65536}\n"},
		{name: "workspace duplicate root names", kind: "Workspace", objectName: "dev", spec: "roots: [{name: a}, {name: a, namespace: loadout-system}]\n", wants: []string{"root names must be unique"}},
		{name: "workspace root namespace invalid", kind: "Workspace", objectName: "dev", spec: "roots: [{name: a, namespace: 'Bad_NS'}]\n", wants: []string{"spec.roots[0].namespace", "should match"}},
		{name: "workspace instruction with neither source", kind: "Workspace", objectName: "dev", spec: "instructions: [{}]\n", wants: []string{"exactly one of inline or configMapKeyRef must be set"}},
		{name: "workspace instruction with both sources", kind: "Workspace", objectName: "dev", spec: "instructions: [{inline: x, configMapKeyRef: {name: c}}]\n", wants: []string{"exactly one of inline or configMapKeyRef must be set"}},
		{name: "workspace skill activated twice", kind: "Workspace", objectName: "dev", spec: "activate: [{skill: review}, {skill: review}]\n", wants: []string{"a skill may be activated only once"}},
		{name: "workspace activation of invalid skill name", kind: "Workspace", objectName: "dev", spec: "activate: [{skill: Review}]\n", wants: []string{"spec.activate[0].skill", "should match"}},
		{name: "workspace budget too small", kind: "Workspace", objectName: "dev", spec: "budget: {maxContextBytes: 10}\n", wants: []string{"spec.budget.maxContextBytes", "greater than or equal to 1024"}},
		{name: "workspace budget over hard cap", kind: "Workspace", objectName: "dev", spec: "budget: {maxContextBytes: 2000000}\n", wants: []string{"spec.budget.maxContextBytes", "less than or equal to 921600"}},
		{name: "workspace output name invalid", kind: "Workspace", objectName: "dev", spec: "output: {configMapName: Dev_Context}\n", wants: []string{"spec.output.configMapName", "should match"}},
		{name: "workspace denied tool name invalid", kind: "Workspace", objectName: "dev", spec: "tools: {deny: ['rm -rf']}\n", wants: []string{"spec.tools.deny[0]", "should match"}},
	}
	ns := namespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, tc.kind, fmt.Sprintf("%s-%d", tc.objectName, i), tc.spec)
			if tc.objectName != "a" { // keep the case's own metadata.name when it is under test
				obj.SetName(tc.objectName)
			}
			obj.SetNamespace(ns)
			err := k8sClient.Create(context.Background(), obj)
			if len(tc.wants) == 0 {
				if err != nil {
					t.Fatalf("valid %s rejected: %v", tc.kind, err)
				}
				_ = k8sClient.Delete(context.Background(), obj)
				return
			}
			if err == nil {
				_ = k8sClient.Delete(context.Background(), obj)
				t.Fatalf("invalid %s accepted; want an error containing %q", tc.kind, tc.wants)
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
		})
	}
}

// TestSkillSource_NamesNoCredentialOfAnyNamespace proves that a Skill cannot
// point its source at a registry credential: the schema has no
// such field, so a strict create is refused and a default create prunes it,
// leaving nothing that an agent could resolve in another namespace. Agents
// authenticate only with what their own pod mounts.
func TestSkillSource_NamesNoCredentialOfAnyNamespace(t *testing.T) {
	ns := namespace(t)
	spec := "description: x\nsource: {oci: {reference: 'ghcr.io/a/b@sha256:" + digest + "', pullSecretRef: {name: regcred, namespace: other-tenant}}}\n"

	strict := object(t, "Skill", "strict", spec)
	strict.SetNamespace(ns)
	err := k8sClient.Create(context.Background(), strict, client.FieldValidation("Strict"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.source.oci.pullSecretRef"`) {
		t.Fatalf("strict create of a source naming a Secret: got %v, want an unknown-field error", err)
	}

	lax := object(t, "Skill", "lax", spec)
	lax.SetNamespace(ns)
	if err := k8sClient.Create(context.Background(), lax, client.FieldValidation("Ignore")); err != nil {
		t.Fatal(err)
	}
	got := lax.DeepCopy()
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(lax), got); err != nil {
		t.Fatal(err)
	}
	oci, _, _ := unstructured.NestedMap(got.Object, "spec", "source", "oci")
	if len(oci) != 1 || oci["reference"] == nil {
		t.Fatalf("stored spec.source.oci = %v, want only the reference (credential fields pruned)", oci)
	}
}
