// Warm calls (warmcalls.ts): at session start the package runs its own
// tool-call path against hostd's POST /v1/warm/{before,after} until the first
// real call, so V8 has compiled it by then. A real Pi session through a real
// `loadout hostd` on the samples' context: the warm calls leave no ledger
// record and run no hook, a real call made while they run is decided by the
// hooks as ever, and the first real call ends them.
// (One session per file: the warm loop runs once per process.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { createJiti } from "jiti";
import { ExtensionRunner } from "@mariozechner/pi-coding-agent";
import { piSession, previewSamples } from "../harness.mjs";
import { suiteHostd } from "./helpers.mjs";

const jiti = createJiti(import.meta.url);
const { WarmCalls, warmConcurrency, maxWarmCalls } = await jiti.import("../warmcalls.ts");
const hostd = suiteHostd(previewSamples());
const prefix = '{"ledger":"loadout.dev/decisions/v1",';

/** hostd's count of answered warm calls (its requests metric). */
async function warmCalls() {
	const text = await (await fetch(hostd.url + "/metrics")).text();
	let n = 0;
	for (const m of text.matchAll(/^loadout_hostd_requests_total\{code="200",endpoint="warm"\} (\d+)$/gm)) n += Number(m[1]);
	return n;
}

async function until(what, cond, ms = 20000) {
	const end = Date.now() + ms;
	while (!(await cond())) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

/** The tool call ids each ExtensionRunner (Pi's, or another) dispatched to tool_call handlers. */
const dispatched = new Map();
const emitToolCall = ExtensionRunner.prototype.emitToolCall;
ExtensionRunner.prototype.emitToolCall = function (event) {
	if (!dispatched.has(this)) dispatched.set(this, []);
	dispatched.get(this).push(event.toolCallId);
	return emitToolCall.call(this, event);
};

test("warm calls at session start leave no ledger record and run no hook; a real call made meanwhile is decided as ever and ends them", async () => {
	const pi = await piSession({ hostdUrl: hostd.url, treeDir: hostd.treeDir });
	try {
		// The loop is running: some warm calls answered, far from its end.
		await until("warm calls", async () => (await warmCalls()) >= 20);
		const call = async (id, command) => {
			const toolCall = { type: "toolCall", id, name: "bash", arguments: { command } };
			const t0 = performance.now();
			const verdict = await pi.session.agent.beforeToolCall({ toolCall, args: toolCall.arguments });
			return { verdict, ms: performance.now() - t0 };
		};
		// The samples' platform hook denies a recursive delete: the first
		// real call, made while warm calls run, is asked of the hooks.
		const rm = await call("real-1", "rm -rf build");
		assert.equal(rm.verdict?.block, true, "rm -rf was not blocked: " + JSON.stringify(rm.verdict));
		assert.match(rm.verdict.reason, /recursive/i);
		assert.ok(rm.ms < 1000, `the real call waited ${rm.ms} ms`);
		const atFirstCall = await warmCalls();
		const ls = await call("real-2", "ls -la");
		assert.equal(ls.verdict?.block, undefined, "ls was blocked: " + JSON.stringify(ls.verdict));
		// A real call is never taken for a warm one, whatever its id.
		const named = await call("loadout-warm-3", "rm -rf build");
		assert.equal(named.verdict?.block, true, "a real call named as a warm one was not asked of the hooks: " + JSON.stringify(named.verdict));

		// The warm calls ran through Pi's own dispatch, on a runner of
		// their own: Pi's runner (the session's extensions) saw the real
		// calls only.
		const real = pi.session._extensionRunner;
		assert.deepEqual(dispatched.get(real), ["real-1", "real-2", "loadout-warm-3"]);
		const others = [...dispatched].filter(([r]) => r !== real).flatMap(([, ids]) => ids);
		assert.ok(others.length >= 20 && others.every((id) => id.startsWith("loadout-warm-")), `warm calls through Pi's dispatch: ${others.length}`);

		// The first real call ended the loop (the pairs in flight may
		// finish: two requests each).
		await new Promise((r) => setTimeout(r, 300));
		const after = await warmCalls();
		assert.ok(after <= atFirstCall + 2 * warmConcurrency, `warm calls went on after the first real call: ${atFirstCall} then ${after}`);
		assert.ok(after <= 2 * maxWarmCalls, `the loop is bounded: ${after} warm calls`);

		await hostd.stop();
		const records = hostd
			.log()
			.split("\n")
			.filter((l) => l.startsWith(prefix))
			.map((l) => JSON.parse(l));
		assert.deepEqual(
			records.map((r) => [r.callId, r.verdict]),
			[
				["real-1", "blocked"],
				["real-2", "allowed"],
				["loadout-warm-3", "blocked"],
			],
			"one record per real call and none for " + after + " warm calls",
		);
	} finally {
		pi.dispose();
	}
});

test("the warm loop stops at a call hostd does not answer as a warm call (an older hostd), at stop, and at its bound", async () => {
	let calls = 0;
	let done = 0;
	const older = new WarmCalls(async () => (calls++, false), () => done++);
	await older.start();
	assert.ok(calls <= warmConcurrency, `${calls} calls to an older hostd, want at most the first ${warmConcurrency} in flight`);
	assert.deepEqual([older.made, done], [0, 1]);
	const before = calls;
	await older.start();
	assert.equal(calls, before, "a loop runs once");

	calls = 0;
	let w;
	w = new WarmCalls(
		async (i) => {
			calls++;
			if (i === 3) w.stop(); // a real call starts during the fourth pair
			await new Promise((r) => setImmediate(r));
			return true;
		},
		() => done++,
		100,
		1,
	);
	await w.start();
	assert.deepEqual([calls, w.made, done], [4, 4, 2], "no pair after the one in flight when stopped");

	let inFlight = 0;
	let most = 0;
	const two = new WarmCalls(
		async () => {
			most = Math.max(most, ++inFlight);
			await new Promise((r) => setTimeout(r, 1));
			inFlight--;
			return true;
		},
		() => done++,
		20,
		2,
	);
	await two.start();
	assert.deepEqual([two.made, most, done], [20, 2, 3], "at most concurrency pairs in flight, max in all");

	// Every call tells the loop it starts; only a real one stops it.
	let signalled;
	signalled = new WarmCalls(
		async (i) => {
			signalled.callStarts(true);
			if (i === 5) signalled.callStarts(false);
			return true;
		},
		() => done++,
		100,
		1,
	);
	await signalled.start();
	assert.equal(signalled.made, 6, "warm calls' own starts do not stop the loop; a real call's does");
	done--;

	const bounded = new WarmCalls(async () => true, () => done++, 7);
	await bounded.start();
	assert.equal(bounded.made, 7);

	const throwing = new WarmCalls(async () => {
		throw new Error("hostd gone");
	}, () => done++);
	await throwing.start();
	assert.equal(done, 5, "a failure ends the loop quietly, and its connections are closed");
});
