// Tool output limits and execution modes (docs/rules.md R-TL-2, R-TL-3) in
// real Pi sessions (Pi's SDK, scripted `faux` model) against a real
// `loadout hostd`: the samples plus an Extension whose runnable tools bound
// their answers or run one call at a time, served by a Service in this test.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxToolCall, startHostd, textOf } from "../harness.mjs";
import { callsThenStop, callThenStop, promptForToolResult, samplesWith, withPi } from "./helpers.mjs";

const extension = `apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: ops-tools, namespace: team-a}
spec:
  description: Operations tools with bounded answers and serial runs.
  tools:
  - name: dump_logs
    description: Dump the service's recent logs.
    inputSchema: {type: object}
    output: {maxBytes: 1024, onOverflow: Truncate}
    implementation: {service: {name: ops-tools, port: 8080, path: /logs, scheme: HTTP}}
  - name: dump_config
    description: Dump the service's whole configuration.
    inputSchema: {type: object}
    output: {maxBytes: 1024, onOverflow: Refuse}
    implementation: {service: {name: ops-tools, port: 8080, path: /logs, scheme: HTTP}}
  - name: migrate_db
    description: Migrate the database schema one step.
    inputSchema: {type: object}
    executionMode: Serial
    implementation: {service: {name: ops-tools, port: 8080, path: /slow, scheme: HTTP}}
  - name: probe_db
    description: Probe the database for reachability.
    inputSchema: {type: object}
    implementation: {service: {name: ops-tools, port: 8080, path: /slow, scheme: HTTP}}
`;

/** 5000 bytes of log lines: over both tools' 1024-byte limit. */
const logs = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, "0")} ${"x".repeat(40)}`).join("\n");

/**
 * The ops-tools Service: /logs answers the long log; /slow holds each call
 * until a second one arrives or 1.5 s pass, so calls that may overlap do,
 * and records how many ran at once.
 */
async function startOpsTools() {
	let running = 0;
	let waiters = [];
	const seen = { maxRunning: 0, calls: 0 };
	const server = createServer(async (req, res) => {
		let body = "";
		for await (const chunk of req) body += chunk;
		const answer = (text) => {
			res.setHeader("Content-Type", "application/json");
			res.end(JSON.stringify({ content: [{ type: "text", text }] }));
		};
		if (req.url === "/logs") return answer(logs);
		seen.calls++;
		running++;
		seen.maxRunning = Math.max(seen.maxRunning, running);
		waiters.forEach((wake) => wake());
		waiters = [];
		await new Promise((wake) => {
			if (running > 1) return wake();
			waiters.push(wake);
			setTimeout(wake, 1500);
		});
		running--;
		answer(`ran ${JSON.parse(body).call.id}`);
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return { port: server.address().port, seen, reset: () => Object.assign(seen, { maxRunning: 0, calls: 0 }), stop: () => new Promise((r) => server.close(r)) };
}

const callTwice = (name) => callsThenStop([fauxToolCall(name, {}), fauxToolCall(name, {})]);

describe("tool output limits and execution modes reach Pi through hostd", () => {
	const data = samplesWith((dir) => writeFileSync(join(dir, "team-a_extension_ops-tools.yaml"), extension));
	let ops, hostd;
	before(async () => {
		ops = await startOpsTools();
		hostd = await startHostd(data, ["--service-address", `ops-tools.team-a.svc:8080=127.0.0.1:${ops.port}`]);
	});
	after(async () => {
		await hostd?.cleanup();
		await ops?.stop();
	});

	test("an answer over a Truncate limit reaches the model cut, with the marker, and the whole answer stays at the marker's URL, for this session and call only", async () => {
		await withPi(hostd, callThenStop("dump_logs", {}), async (pi) => {
			const text = await promptForToolResult(pi, "show me the logs", false);
			assert.ok(text.startsWith("line 000 "), text.slice(0, 80));
			assert.ok(!text.includes("line 099"), "the answer was not truncated");
			const marker = text.match(/\[output truncated by Loadout: (\d+) of (\d+) bytes shown \(the limit of tool "dump_logs"\); .* at GET (\/v1\/results\/[0-9a-f]+)\?session=<session id>&call=(\S+) on hostd/);
			assert.ok(marker, `no truncation marker in:\n${text}`);
			assert.ok(Number(marker[1]) <= 1024);
			assert.equal(Number(marker[2]), Buffer.byteLength(logs));
			// What the model saw on its next call is the cut answer, not the whole.
			const seen = pi.calls[1].messages.filter((m) => m.role === "toolResult").map(textOf).join("\n");
			assert.ok(seen.includes("[output truncated by Loadout:") && !seen.includes("line 099"));
			// The id alone reads nothing: the whole answer is the session's
			// and the call's that produced it.
			assert.equal((await fetch(hostd.url + marker[3])).status, 404);
			const session = encodeURIComponent(pi.session.sessionManager.getSessionId() ?? "");
			const kept = await fetch(`${hostd.url}${marker[3]}?session=${session}&call=${marker[4]}`);
			assert.equal(kept.status, 200);
			assert.equal(textOf(await kept.json()), logs);
		});
	});

	test("an answer over a Refuse limit is an error naming the limit, and none of it reaches the model", async () => {
		await withPi(hostd, callThenStop("dump_config", {}), async (pi) => {
			const text = await promptForToolResult(pi, "show me the config", true);
			assert.ok(text.includes(`tool "dump_config" answered ${Buffer.byteLength(logs)} bytes, over its output limit of 1024 bytes (output.onOverflow: Refuse)`), text);
			assert.ok(!text.includes("line 000"), "the refused answer reached Pi");
		});
	});

	test("two calls of a Serial tool in one message never run at once; two of a Parallel tool do", async () => {
		for (const [tool, want] of [["probe_db", 2], ["migrate_db", 1]]) {
			ops.reset();
			await withPi(hostd, callTwice(tool), async (pi) => {
				await pi.session.prompt(`run ${tool} twice`);
				const results = pi.toolResults();
				assert.equal(results.length, 2);
				for (const r of results) assert.equal(r.isError, false, textOf(r));
				assert.equal(ops.seen.calls, 2);
				assert.equal(ops.seen.maxRunning, want, `${tool}: at most ${want} call(s) at once`);
			});
		}
	});
});
