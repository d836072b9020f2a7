// The extension surface beyond tool calls (docs/hooks.md) with the real Pi:
// turn, model and stop events, a BeforeCompact summary, a prompt rewrite at
// BeforeAgentStart, typed messages, and the session and cwd every hook
// sees. The fixture Workspace (test/fixtures/surface) is published by
// `loadout preview` and served by a real hostd.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { diagnostics, fauxAssistantMessage, fauxToolCall, packageDir, piSession, previewSamples, startHostd, textOf } from "../harness.mjs";

const data = previewSamples(join(packageDir, "test", "fixtures", "surface"));

/** Every text the model was sent in one call. */
function sent(call) {
	return call.messages.map((m) => textOf(m)).join("\n");
}

/** Waits until cond holds or ms pass. */
async function until(cond, ms = 10000) {
	const deadline = Date.now() + ms;
	while (!cond()) {
		if (Date.now() > deadline) return false;
		await new Promise((r) => setTimeout(r, 20));
	}
	return true;
}

describe("Pi on a Workspace with the whole extension surface", () => {
	let hostd;
	/** A hook's audit count once it reaches want (or what it is after 5 s). */
	async function counted(hook, want) {
		let n = await diagnostics(hostd.url, hook, "audit");
		for (const deadline = Date.now() + 5000; n < want && Date.now() < deadline; n = await diagnostics(hostd.url, hook, "audit")) {
			await new Promise((r) => setTimeout(r, 20));
		}
		return n;
	}
	before(async () => {
		hostd = await startHostd(data);
	});
	after(async () => {
		await hostd?.cleanup();
	});

	test("R-LC-5: a Stop hook that denies ends the turn with its message: the model gets it as the next prompt, and the agent stops once it says DONE", async () => {
		const pi = await piSession({
			hostdUrl: hostd.url,
			treeDir: hostd.treeDir,
			responses: [fauxAssistantMessage("I edited the file."), fauxAssistantMessage("Checks pass. DONE"), fauxAssistantMessage("should not be called")],
		});
		try {
			await pi.session.prompt("edit the file");
			assert.ok(await until(() => pi.calls.length >= 2 && pi.session.isStreaming === false), `the Stop hook's prompt never reached the model (${pi.calls.length} calls)`);
			await new Promise((r) => setTimeout(r, 200)); // a third call would come now
			assert.equal(pi.calls.length, 2, "the agent did not stop after DONE");
			const second = sent(pi.calls[1]);
			assert.ok(second.includes("STOP-HOOK: run the checks, then answer DONE"), second);
			const last = pi.session.messages.at(-1);
			assert.equal(textOf(last), "Checks pass. DONE");
		} finally {
			pi.dispose();
		}
	});

	test("R-LC-5: a Stop hook that denies every stop cannot keep Pi going for ever: after 8 in a row the agent stops and the user is told", async () => {
		const responses = Array.from({ length: 12 }, () => fauxAssistantMessage("LOOP DONE"));
		const pi = await piSession({ hostdUrl: hostd.url, treeDir: hostd.treeDir, responses });
		try {
			await pi.session.prompt("loop");
			assert.ok(await until(() => pi.notes.some((n) => n.message.includes("kept the agent going 8 times in a row"))), JSON.stringify(pi.notes));
			await new Promise((r) => setTimeout(r, 200));
			assert.equal(pi.calls.length, 9, "the prompt and 8 continuations");
		} finally {
			pi.dispose();
		}
	});

	test("R-LC-5: a BeforeCompact hook's summary is what Pi keeps", async () => {
		const pi = await piSession({
			hostdUrl: hostd.url,
			treeDir: hostd.treeDir,
			responses: [fauxAssistantMessage("one DONE"), fauxAssistantMessage("two DONE"), fauxAssistantMessage("three DONE"), fauxAssistantMessage("MODEL-SUMMARY")],
		});
		try {
			await pi.session.prompt("first");
			await pi.session.prompt("second");
			await pi.session.prompt("third");
			const result = await pi.session.compact();
			assert.equal(result.summary, "SUMMARY-FROM-HOOK for team-a");
			const entries = pi.session.sessionManager.getEntries();
			const compaction = entries.filter((e) => e.type === "compaction").at(-1);
			assert.equal(compaction?.summary, "SUMMARY-FROM-HOOK for team-a");
			assert.ok(!JSON.stringify(entries).includes("MODEL-SUMMARY"), "the model summarised anyway");
		} finally {
			pi.dispose();
		}
	});

	test("R-LC-5: BeforeAgentStart replaces the prompt; BeforeModelRequest adds context to the request; turn and response hooks observe", async () => {
		const turnEnd = await diagnostics(hostd.url, "turn-audit", "audit");
		const response = await diagnostics(hostd.url, "response-audit", "audit");
		const turnStart = await diagnostics(hostd.url, "turn-start", "audit");
		const pi = await piSession({ hostdUrl: hostd.url, treeDir: hostd.treeDir, responses: [fauxAssistantMessage("AUDIT-ME DONE")] });
		try {
			await pi.session.prompt("answer BRIEF");
			const saw = sent(pi.calls[0]);
			assert.ok(saw.includes("answer BRIEF (one line)"), "the rewritten prompt did not reach the model: " + saw);
			assert.ok(saw.includes("MODEL-CONTEXT for "), "BeforeModelRequest context missing: " + saw);
			// Pi emits turn_end and message_end after prompt() returns.
			assert.equal(await counted("turn-audit", turnEnd + 1), turnEnd + 1, "TurnEnd did not run once");
			assert.equal(await counted("response-audit", response + 1), response + 1, "AfterModelResponse did not run once");
			// Every session's turns start: other tests' may still be counted.
			assert.ok((await counted("turn-start", turnStart + 1)) > turnStart, "TurnStart did not run");
		} finally {
			pi.dispose();
		}
	});

	test("R-LC-6: tool hooks see the session (agent pi) and Pi's cwd", async () => {
		const pi = await piSession({
			hostdUrl: hostd.url,
			treeDir: hostd.treeDir,
			responses: [fauxAssistantMessage(fauxToolCall("bash", { command: "echo WHERE" }), { stopReason: "toolUse" }), fauxAssistantMessage("DONE")],
		});
		try {
			await pi.session.prompt("where are you");
			const [result] = pi.toolResults();
			assert.equal(result.isError, true);
			assert.equal(textOf(result), `WHERE: pi in ${pi.cwd}`);
		} finally {
			pi.dispose();
		}
	});

	test("R-LC-8: typed messages are kept in the session as their type; the model reads an in-context one through its template and never a hidden one", async () => {
		const pi = await piSession({ hostdUrl: hostd.url, treeDir: hostd.treeDir, responses: [fauxAssistantMessage("ok DONE")] });
		try {
			await pi.session.prompt("leave a NOTE");
			const kept = pi.session.messages.filter((m) => m.role === "custom").map((m) => [m.customType, textOf(m)]);
			assert.deepEqual(
				kept.filter(([t]) => t !== "loadout.context"),
				[
					["ci/status", "main is green"],
					["ui/note", "UI-NOTE for the user only"],
				],
			);
			const saw = sent(pi.calls[0]);
			assert.ok(saw.includes("CI-STATUS (from the pipeline, not the user): main is green"), saw);
			assert.ok(!saw.includes("UI-NOTE"), "a hidden typed message reached the model: " + saw);
		} finally {
			pi.dispose();
		}
	});
});
