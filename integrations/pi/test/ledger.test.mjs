// The decision ledger of a real Pi session (Pi's SDK, scripted `faux`
// model, this package) through a real `loadout hostd` on the samples'
// context: one hash-chained record per verdict in hostd's log, each hook that
// ran with its outcome, and `loadout audit verify` passing it whole and
// naming a deleted and an edited record (docs/hostd.md, "Decision ledger").
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fauxToolCall, loadoutBinary, previewSamples } from "../harness.mjs";
import { callThenStop, suiteHostd, toolTurn, withPi } from "./helpers.mjs";

const prefix = '{"ledger":"loadout.dev/decisions/v1",';
const hostd = suiteHostd(previewSamples());

function verify(lines) {
	const file = join(mkdtempSync(join(tmpdir(), "loadout-ledger-")), "ledger.jsonl");
	writeFileSync(file, lines.join("\n") + "\n");
	try {
		return { ok: true, out: execFileSync(loadoutBinary(), ["audit", "verify", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
	} catch (err) {
		return { ok: false, out: String(err.stdout) + String(err.stderr) };
	}
}

test("a Pi session leaves one ledger record per verdict, each hook's outcome in it, and audit verify finds a deleted and an edited record", async () => {
	const responses = [toolTurn(fauxToolCall("bash", { command: "rm -rf build" })), ...callThenStop("bash", { command: "echo kept > KEPT" })];
	await withPi(hostd, responses, (pi) => pi.session.prompt("clean up, then write a file"));
	await hostd.stop();
	const lines = hostd.log().split("\n").filter((l) => l.startsWith(prefix));
	const records = lines.map((l) => JSON.parse(l));
	assert.deepEqual(records.map((r) => r.seq), records.map((_, i) => i + 1), "one chain, in order");

	const calls = records.filter((r) => r.event === "BeforeToolCall");
	assert.equal(calls.length, 2, "one BeforeToolCall verdict per call: " + JSON.stringify(calls));
	const [rm, echo] = calls;
	assert.equal(rm.verdict, "blocked");
	assert.equal(rm.reason, "hook");
	assert.deepEqual(rm.hooks.map((h) => [h.extension, h.hook, h.outcome]), [["platform-guard", "no-recursive-delete", "denied"]]);
	assert.equal(echo.verdict, "allowed");
	assert.deepEqual(echo.hooks.map((h) => [h.hook, h.outcome]), [["no-recursive-delete", "allowed"]]);
	for (const r of calls) {
		assert.equal(r.tool, "bash");
		assert.equal(r.workspace, "team-a/dev");
		assert.match(r.argumentsDigest, /^sha256:[0-9a-f]{64}$/);
		assert.ok(!JSON.stringify(r).includes("rm -rf build"), "a record holds the arguments, not only their digest");
		assert.ok(r.hooks.every((h) => Number.isInteger(h.micros) && h.micros >= 0), "each hook's time");
	}
	// The samples run no hook at any other event and none after bash: those
	// two verdicts are the session's only ones.
	assert.deepEqual(records.map((r) => r.event), ["BeforeToolCall", "BeforeToolCall"]);

	assert.equal(verify(lines).ok, true, verify(lines).out);
	// (Records deleted from a chain's end leave no trace in the file: the
	// first one is deleted here.)
	const deleted = verify(lines.slice(1));
	assert.equal(deleted.ok, false, deleted.out);
	assert.match(deleted.out, /line 1 .*gap/);
	const edited = lines.slice();
	edited[1] = edited[1].replace('"verdict":"', '"verdict":"x');
	const broken = verify(edited);
	assert.equal(broken.ok, false);
	assert.match(broken.out, /line 2 .*edited/);
});
