// Lifecycle hooks (docs/hooks.md) with the real Pi: a fixture Workspace
// (test/fixtures/lifecycle) whose Extension has a hook at each event the
// tests drive, published by `loadout preview` and served by a real hostd.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { diagnostics, packageDir, previewSamples, textOf } from "../harness.mjs";
import { callThenStop, replies, suiteHostd, withPi } from "./helpers.mjs";

const data = previewSamples(join(packageDir, "test", "fixtures", "lifecycle"));

/** Every text the model was sent, over all its calls. */
function modelSaw(pi) {
	return pi.calls.flatMap((c) => c.messages.map((m) => textOf(m))).join("\n");
}

describe("Pi on a Workspace with lifecycle hooks", () => {
	const hostd = suiteHostd(data);
	let bin, savedPath;
	before(() => {
		// A stand-in terraform that records the arguments it ran with.
		bin = mkdtempSync(join(tmpdir(), "fake-terraform-"));
		writeFileSync(join(bin, "terraform"), '#!/bin/sh\necho "$@" > TERRAFORM_ARGS\necho "terraform $@"\n');
		chmodSync(join(bin, "terraform"), 0o755);
		savedPath = process.env.PATH;
		process.env.PATH = `${bin}:${savedPath}`;
	});
	after(() => {
		process.env.PATH = savedPath;
		rmSync(bin, { recursive: true, force: true });
	});

	test("R-LC-4: a UserInput hook denies a prompt with a secret: the user sees why and nothing reaches the model", async () => {
		await withPi(hostd, replies("should not be called"), async (pi) => {
			await pi.session.prompt("deploy with the SECRET hunter2");
			assert.equal(pi.calls.length, 0, "the model was called");
			assert.ok(!JSON.stringify(pi.session.messages).includes("hunter2"), "the prompt entered the session");
			const errors = pi.notes.filter((n) => n.type === "error").map((n) => n.message);
			assert.deepEqual(errors, ["Loadout: prompts must not carry secrets"]);
		});
	});

	test("a SessionStart hook's context reaches the model, once, with the first prompt", async () => {
		await withPi(hostd, replies("hello", "again"), async (pi) => {
			await pi.session.prompt("hi");
			await pi.session.prompt("and again");
			assert.equal(pi.calls.length, 2);
			const first = pi.calls[0].messages.map(textOf);
			assert.ok(first.some((t) => t.includes("TENANT-CONTEXT: you work for namespace team-a")), "context missing: " + JSON.stringify(first));
			assert.equal(modelSaw({ calls: [pi.calls[1]] }).split("TENANT-CONTEXT").length - 1, 1, "the context was added twice");
		});
	});

	test("a UserInput rewrite is what the model gets; BeforeAgentStart sees the rewritten prompt and adds context", async () => {
		await withPi(hostd, replies("ok"), async (pi) => {
			await pi.session.prompt("my password is hunter2");
			const saw = modelSaw(pi);
			assert.ok(!saw.includes("hunter2"), "the password reached the model: " + saw);
			assert.ok(saw.includes("my password is ***"), "the rewritten prompt did not reach the model: " + saw);
			assert.ok(saw.includes("TURN-CONTEXT for: my password is ***"), "BeforeAgentStart context missing: " + saw);
		});
	});

	test("a BeforeCompact hook's denial cancels the compaction", async () => {
		await withPi(hostd, replies("one", "two", "three", "summary"), async (pi) => {
			await pi.session.prompt("first");
			await pi.session.prompt("second");
			await pi.session.prompt("third");
			await assert.rejects(pi.session.compact(), /Compaction cancelled/);
			assert.ok(pi.notes.some((n) => n.type === "error" && n.message === "Loadout: compaction is disabled for this tenant"), JSON.stringify(pi.notes));
		});
	});

	test("R-HK-9: a BeforeToolCall rewrite (terraform apply gains -dry-run) is what runs and what the after hooks see", async () => {
		const sawRewrite = await diagnostics(hostd.url, "saw-dry-run", "audit");
		const sawOriginal = await diagnostics(hostd.url, "saw-original", "audit");
		await withPi(hostd, callThenStop("bash", { command: "terraform apply" }), async (pi) => {
			await pi.session.prompt("apply the plan");
			assert.equal(readFileSync(join(pi.cwd, "TERRAFORM_ARGS"), "utf8"), "apply -dry-run\n");
			const [result] = pi.toolResults();
			assert.equal(result.isError, false, textOf(result));
			assert.match(textOf(result), /terraform apply -dry-run/);
			assert.equal(await diagnostics(hostd.url, "saw-dry-run", "audit"), sawRewrite + 1, "the after hook did not see the rewritten call");
			assert.equal(await diagnostics(hostd.url, "saw-original", "audit"), sawOriginal, "the after hook saw the call as the model sent it");
		});
	});

	/** Runs one bash call the hooks must block; returns its result after checking marker was not created. */
	async function blockedBash(command, marker) {
		return withPi(hostd, callThenStop("bash", { command }), async (pi) => {
			await pi.session.prompt("run it");
			assert.ok(!existsSync(join(pi.cwd, marker)), `the blocked call ran: ${command}`);
			const [result] = pi.toolResults();
			assert.equal(result.isError, true);
			return textOf(result);
		});
	}

	test("a rewrite that breaks the tool's input schema is refused and never runs", async () => {
		const reason = await blockedBash("touch BROKE", "BROKE");
		assert.match(reason, /^Loadout blocked bash: hooks rewrote its arguments into ones its input schema refuses: .*timeout/s);
	});

	test("an ask in a headless run blocks the call with its message", async () => {
		assert.equal(await blockedBash("touch DEPLOYED # deploy", "DEPLOYED"), "ASK: deploys need a human");
	});

	test("R-LC-2: a message type with inContext: false never reaches the model; one with inContext: true does", async () => {
		await withPi(hostd, replies("ok"), async (pi) => {
			await pi.session.sendCustomMessage({ customType: "audit/trace", content: "HIDDEN-TRACE", display: true });
			await pi.session.sendCustomMessage({ customType: "team/note", content: "VISIBLE-NOTE", display: true });
			await pi.session.prompt("hi");
			assert.equal(pi.calls.length, 1);
			assert.ok(JSON.stringify(pi.session.messages).includes("HIDDEN-TRACE"), "the hidden message is not in the session at all");
			const saw = modelSaw(pi);
			assert.ok(saw.includes("VISIBLE-NOTE"), "the in-context message did not reach the model: " + saw);
			assert.ok(!saw.includes("HIDDEN-TRACE"), "the inContext: false message reached the model");
		});
	});
});
