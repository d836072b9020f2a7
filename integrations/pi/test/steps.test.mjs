// Commands with steps (docs/rules.md R-TPL-5) in real Pi sessions (Pi's SDK,
// scripted `faux` model) against a real `loadout hostd`: the samples plus two
// command templates and bash as a built-in tool of the Workspace.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { textOf } from "../harness.mjs";
import { replies, samplesWith, suiteHostdWithReviewNotes, withPi } from "./helpers.mjs";

const commands = `apiVersion: loadout.dev/v1alpha1
kind: Template
metadata: {name: ship, namespace: team-a}
spec:
  description: Leave a review note, then ask for the summary.
  body: "Summarize the change: {{summary}}"
  steps:
  - tool: review_note
    arguments: {text: "{{note}}"}
  - render: true
---
apiVersion: loadout.dev/v1alpha1
kind: Template
metadata: {name: sh, namespace: team-a}
spec:
  body: "Explain the output."
  steps:
  - tool: bash
    arguments: {command: "{{command}}"}
  - render: true
`;

/** The samples' context with the commands, and bash a built-in tool of the Workspace. */
function commandContext() {
	return samplesWith((dir) => {
		writeFileSync(join(dir, "team-a_template_commands.yaml"), commands);
		const ws = join(dir, "team-a_workspace_dev.yaml");
		writeFileSync(ws, readFileSync(ws, "utf8") + "  tools:\n    builtin: [bash]\n");
	});
}

const lastUser = (pi) => textOf(pi.calls[0].messages.filter((m) => m.role === "user").at(-1));

describe("commands with steps run each tool through the hooks, in order", () => {
	const data = commandContext();
	const manifest = JSON.parse(data["manifest.json"]);
	const platformReason = manifest.hooks.find((h) => h.extension === "platform-guard").cel.message;
	const served = suiteHostdWithReviewNotes(data);

	test("an allowed runnable tool step runs through hostd, then the message carries its result and the render", async () => {
		await withPi(served.hostd, replies("ok"), async (pi) => {
			await pi.session.prompt('/ship "parser.go:7 leaks a handle" "the parser fix"');
			assert.ok((await served.notes.notes()).some((n) => n.text === "parser.go:7 leaks a handle"), "the step's note was not recorded");
			assert.match(lastUser(pi), /^Result of review_note:\nnote \d+ recorded\n\nSummarize the change: the parser fix$/);
		});
	});

	test("a tool step a before hook denies stops the command with the reason: the tool never runs, nothing reaches the model", async () => {
		await withPi(served.hostd, replies("should not be called"), async (pi) => {
			await pi.session.prompt('/ship "the SECRET is 42" "the parser fix"');
			assert.equal(pi.calls.length, 0, "the model was called");
			assert.ok(!(await served.notes.notes()).some((n) => n.text.includes("SECRET")), "the denied step reached the Service");
			const errors = pi.notes.filter((n) => n.type === "error");
			assert.equal(errors.length, 1);
			assert.match(errors[0].message, /^\/ship: step 1 \(review_note\) stopped the command: .*review notes must not contain secrets/);
		});
	});

	test("a built-in bash step asks hostd's gate first: allowed it runs in Pi's cwd, denied it never runs", async () => {
		await withPi(served.hostd, replies("ok", "should not be called"), async (pi) => {
			await pi.session.prompt('/sh "echo allowed > ALLOWED && echo done"');
			assert.equal(readFileSync(join(pi.cwd, "ALLOWED"), "utf8"), "allowed\n");
			assert.equal(lastUser(pi), "Result of bash:\ndone\n\nExplain the output.");
			await pi.session.prompt('/sh "touch MARKER && rm -rf build"');
			assert.ok(!existsSync(join(pi.cwd, "MARKER")), "the denied bash step ran");
			assert.equal(pi.calls.length, 1, "the model was called after a denied step");
			const errors = pi.notes.filter((n) => n.type === "error");
			assert.equal(errors.length, 1);
			assert.equal(errors[0].message, `/sh: step 1 (bash) stopped the command: ${platformReason}`);
		});
	});
});
