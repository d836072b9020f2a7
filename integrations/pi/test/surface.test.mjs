// The extension surface beyond tool calls (docs/hooks.md) with the real Pi:
// turn, model and stop events, a BeforeCompact summary, a prompt rewrite at
// BeforeAgentStart, typed messages, and the session and cwd every hook
// sees. The fixture Workspace (test/fixtures/surface) is published by
// `loadout preview` and served by a real hostd.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { diagnostics, fauxAssistantMessage, packageDir, previewSamples, textOf } from "../harness.mjs";
import { callThenStop, promptForToolResult, replies, suiteHostd, withPi } from "./helpers.mjs";

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
	const hostd = suiteHostd(data);
	/** A hook's audit count once it reaches want (or what it is after 5 s). */
	async function counted(hook, want) {
		let n = await diagnostics(hostd.url, hook, "audit");
		for (const deadline = Date.now() + 5000; n < want && Date.now() < deadline; n = await diagnostics(hostd.url, hook, "audit")) {
			await new Promise((r) => setTimeout(r, 20));
		}
		return n;
	}

	test("R-LC-5: a Stop hook that denies ends the turn with its message: the model gets it as the next prompt, and the agent stops once it says DONE", async () => {
		await withPi(hostd, replies("I edited the file.", "Checks pass. DONE", "should not be called"), async (pi) => {
			await pi.session.prompt("edit the file");
			assert.ok(await until(() => pi.calls.length >= 2 && pi.session.isStreaming === false), `the Stop hook's prompt never reached the model (${pi.calls.length} calls)`);
			await new Promise((r) => setTimeout(r, 200)); // a third call would come now
			assert.equal(pi.calls.length, 2, "the agent did not stop after DONE");
			const second = sent(pi.calls[1]);
			assert.ok(second.includes("STOP-HOOK: run the checks, then answer DONE"), second);
			const last = pi.session.messages.at(-1);
			assert.equal(textOf(last), "Checks pass. DONE");
		});
	});

	test("R-LC-5: a Stop hook that denies every stop cannot keep Pi going for ever: after 8 in a row the agent stops and the user is told", async () => {
		const responses = Array.from({ length: 12 }, () => fauxAssistantMessage("LOOP DONE"));
		await withPi(hostd, responses, async (pi) => {
			await pi.session.prompt("loop");
			assert.ok(await until(() => pi.notes.some((n) => n.message.includes("kept the agent going 8 times in a row"))), JSON.stringify(pi.notes));
			await new Promise((r) => setTimeout(r, 200));
			assert.equal(pi.calls.length, 9, "the prompt and 8 continuations");
		});
	});

	test("R-LC-5: a BeforeCompact hook's summary is what Pi keeps", async () => {
		await withPi(hostd, replies("one DONE", "two DONE", "three DONE", "MODEL-SUMMARY"), async (pi) => {
			await pi.session.prompt("first");
			await pi.session.prompt("second");
			await pi.session.prompt("third");
			const result = await pi.session.compact();
			assert.equal(result.summary, "SUMMARY-FROM-HOOK for team-a");
			const entries = pi.session.sessionManager.getEntries();
			const compaction = entries.filter((e) => e.type === "compaction").at(-1);
			assert.equal(compaction?.summary, "SUMMARY-FROM-HOOK for team-a");
			assert.ok(!JSON.stringify(entries).includes("MODEL-SUMMARY"), "the model summarised anyway");
		});
	});

	test("R-LC-5: BeforeAgentStart replaces the prompt; BeforeModelRequest sees the request (messages, size, tools, trigger) and adds context to it; turn and response hooks observe", async () => {
		const turnEnd = await diagnostics(hostd.url, "turn-audit", "audit");
		const response = await diagnostics(hostd.url, "response-audit", "audit");
		const turnStart = await diagnostics(hostd.url, "turn-start", "audit");
		await withPi(hostd, replies("AUDIT-ME DONE"), async (pi) => {
			await pi.session.prompt("answer BRIEF");
			const saw = sent(pi.calls[0]);
			assert.ok(saw.includes("answer BRIEF (one line)"), "the rewritten prompt did not reach the model: " + saw);
			assert.ok(saw.includes("MODEL-CONTEXT for "), "BeforeModelRequest context missing: " + saw);
			// The hook saw the request: the prompt and a hook's typed
			// message, offering bash, answering the prompt.
			assert.ok(saw.includes(": 2 messages, sized, bash offered true, after user"), "BeforeModelRequest did not see the request: " + saw);
			// Pi emits turn_end and message_end after prompt() returns.
			assert.equal(await counted("turn-audit", turnEnd + 1), turnEnd + 1, "TurnEnd did not run once");
			assert.equal(await counted("response-audit", response + 1), response + 1, "AfterModelResponse did not run once");
			// Every session's turns start: other tests' may still be counted.
			assert.ok((await counted("turn-start", turnStart + 1)) > turnStart, "TurnStart did not run");
		});
	});

	test("R-LC-6: tool hooks see the session (agent pi) and Pi's cwd", async () => {
		await withPi(hostd, callThenStop("bash", { command: "echo WHERE" }, "DONE"), async (pi) => {
			assert.equal(await promptForToolResult(pi, "where are you", true), `WHERE: pi in ${pi.cwd}`);
			// The request after the tool ran answers its result (R-LC-5).
			const after = sent(pi.calls.at(-1));
			assert.ok(/MODEL-CONTEXT for \S+: \d+ messages, sized, bash offered true, after toolResult/.test(after), "BeforeModelRequest after a tool: " + after);
		});
	});

	test("R-LC-8: typed messages are kept in the session as their type; the model reads an in-context one through its template and never a hidden one", async () => {
		await withPi(hostd, replies("ok DONE"), async (pi) => {
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
		});
	});
});
