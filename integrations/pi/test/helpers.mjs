// What the Pi tests share on top of ../harness.mjs (which the demo and the
// benchmark use too): a hostd per suite, a Pi session that is always
// disposed of, scripted model turns, a stand-in hostd, and a context built
// from the samples plus a test's own resources.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { fauxAssistantMessage, fauxToolCall, piSession, previewSamples, repoRoot, startHostd, startHostdWithReviewNotes, textOf } from "../harness.mjs";

/**
 * Starts what start() resolves to before the enclosing suite's tests and
 * stops it after them. The returned object takes the started one's fields
 * in before, so tests read it as they would the started object.
 */
function forSuite(start, stop) {
	const started = {};
	let running;
	before(async () => {
		running = await start();
		Object.assign(started, running);
	});
	after(async () => {
		if (running) await stop(running);
	});
	return started;
}

/** A hostd serving data (startHostd's arguments) for the enclosing suite. */
export function suiteHostd(data, extraArgs) {
	return forSuite(() => startHostd(data, extraArgs), (hostd) => hostd.cleanup());
}

/** review-notes and a hostd that reaches it (startHostdWithReviewNotes) for the enclosing suite. */
export function suiteHostdWithReviewNotes(data) {
	return forSuite(() => startHostdWithReviewNotes(data), (served) => served.stop());
}

/**
 * Runs body with a Pi session on hostd (its url and treeDir) scripted with
 * responses, and disposes of the session however body ends; returns what
 * body returns.
 */
export async function withPi(hostd, responses, body, { timeoutMs } = {}) {
	const pi = await piSession({ hostdUrl: hostd.url, treeDir: hostd.treeDir, responses, timeoutMs });
	try {
		return await body(pi);
	} finally {
		pi.dispose();
	}
}

/** Model turns that answer each text in order, no tool called. */
export function replies(...texts) {
	return texts.map((text) => fauxAssistantMessage(text));
}

/**
 * Sends prompt to pi and returns the text of the session's first tool
 * result, after checking that it is an error or not, as isError says.
 */
export async function promptForToolResult(pi, prompt, isError) {
	await pi.session.prompt(prompt);
	const [result] = pi.toolResults();
	assert.equal(result.isError, isError, textOf(result));
	return textOf(result);
}

/** A model turn that calls tools (one fauxToolCall or a list) and waits for their results. */
export function toolTurn(calls) {
	return fauxAssistantMessage(calls, { stopReason: "toolUse" });
}

/** A model turn that calls tools, then one that ends the turn saying last. */
export function callsThenStop(calls, last = "done") {
	return [toolTurn(calls), fauxAssistantMessage(last)];
}

/** A model turn that calls one tool, then one that ends the turn saying last. */
export function callThenStop(name, args, last = "done") {
	return callsThenStop(fauxToolCall(name, args), last);
}

/**
 * A stand-in hostd on a free local port that answers every request with
 * handler(req, res); stop() ends it and any connection Pi left open.
 */
export async function fakeHostd(handler) {
	const server = createServer(handler);
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return {
		url: `http://127.0.0.1:${server.address().port}`,
		async stop() {
			server.closeAllConnections();
			await new Promise((r) => server.close(r));
		},
	};
}

/**
 * The samples' context (config/samples) published with a test's changes:
 * change(dir) edits a copy of the samples before `loadout preview` reads it.
 */
export function samplesWith(change) {
	const dir = mkdtempSync(join(tmpdir(), "loadout-samples-"));
	try {
		cpSync(join(repoRoot, "config", "samples"), dir, { recursive: true });
		change(dir);
		return previewSamples(dir);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
