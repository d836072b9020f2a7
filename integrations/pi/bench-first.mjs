// `make bench-pi`'s first calls (docs/benchmarks.md, "the first calls' tail"):
// what a Pi session's tool calls cost counted from the very first one. Each
// sample is a fresh hostd (the sidecar starts with the pod, so a session's
// first calls are hostd's first too) and a fresh Node process that starts a
// Pi session with the package, waits THINK_MS (the model's first answer
// comes before any tool call; 500 ms is less than any model takes) and
// makes CALLS `bash` calls through Pi's own tool hooks, timing each. Pi's
// hooks without the package take microseconds (bench.mjs), so the times are
// what the package adds. PKGS=name=dir[=loadout],... compares copies of the
// package, each with its own loadout binary for hostd if named (else
// LOADOUT_BIN's), interleaved (one process of each per round); by default
// this one alone.
// TRANSPORT=unix runs the calls over hostd's Unix socket.
//   LOADOUT_BIN=../../bin/loadout node bench-first.mjs [CALLS=2000] [ROUNDS=5] [THINK_MS=500]
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageDir, piSession, previewSamples, startHostd } from "./harness.mjs";

const quantile = (s, q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One session's calls in this (fresh) process: each call's time in ms, in order. */
async function child(pkg, hostdUrl, treeDir, calls, thinkMs) {
	const s = await piSession({ hostdUrl, treeDir, pkg });
	await new Promise((r) => setTimeout(r, thinkMs));
	const ds = [];
	// BENCH_MARKS: markers around the calls, for counting what V8 does
	// during them (node --trace-opt; docs/benchmarks.md).
	if (process.env.BENCH_MARKS) process.stdout.write("\n@@calls-start\n");
	for (let i = 0; i < calls; i++) {
		const toolCall = { type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: "ls -la" } };
		const args = toolCall.arguments;
		const t0 = process.hrtime.bigint();
		const verdict = await s.session.agent.beforeToolCall?.({ toolCall, args });
		if (verdict?.block) throw new Error("ls was blocked: " + verdict.reason);
		await s.session.agent.afterToolCall?.({ toolCall, args, result: { content: [{ type: "text", text: "ok" }], details: {} }, isError: false });
		ds.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	if (process.env.BENCH_MARKS) process.stdout.write("\n@@calls-end\n");
	s.dispose();
	process.stdout.write(JSON.stringify(ds));
	process.exit(0);
}

if (process.argv[2] === "--child") {
	const [, , , pkg, url, tree, calls, think] = process.argv;
	await child(pkg, url, tree, Number(calls), Number(think));
} else {
	const [calls = 2000, rounds = 5, thinkMs = 500] = process.argv.slice(2).map(Number);
	const pkgs = (process.env.PKGS || `package=${packageDir}`).split(",").map((nd) => nd.split("="));
	const self = fileURLToPath(import.meta.url);
	const data = previewSamples();
	const stats = new Map(pkgs.map(([name]) => [name, { first: [], p50: [], p99: [], p99first200: [], max: [] }]));
	for (let r = 0; r < rounds; r++) {
		for (const [name, dir, bin] of pkgs) {
			// TRANSPORT=unix: hostd's Unix socket, as the agent pod wires it
			// (docs/agents.md); else loopback TCP.
			const socket = join(tmpdir(), `loadout-first-${process.pid}-${r}-${name}.sock`);
			const unix = process.env.TRANSPORT === "unix";
			const hostd = await startHostd(data, unix ? ["--unix-socket", socket] : [], bin);
			const url = unix ? `unix:${socket}` : hostd.url;
			try {
				// Not execFileSync: this process must keep reading hostd's log
				// (a ledger record per verdict), or hostd blocks writing it.
				const { stdout, stderr } = await promisify(execFile)(process.execPath, [self, "--child", dir, url, hostd.treeDir, String(calls), String(thinkMs)], { maxBuffer: 64 << 20 });
				process.stderr.write(stderr);
				const ds = JSON.parse(stdout.toString());
				const st = stats.get(name);
				st.first.push(ds[0]);
				st.p99first200.push(quantile(ds.slice(0, 200).sort((a, b) => a - b), 0.99));
				ds.sort((a, b) => a - b);
				st.p50.push(quantile(ds, 0.5));
				st.p99.push(quantile(ds, 0.99));
				st.max.push(ds.at(-1));
			} finally {
				await hostd.cleanup();
			}
		}
	}
	const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
	process.stdout.write(`\n| ${calls} bash calls from a session's first (fresh hostd and process, ${rounds} each, interleaved, ${process.env.TRANSPORT === "unix" ? "Unix socket" : "TCP"}) | first call | p50 | p99 of the first 200 | p99 (target 1 ms) | max |\n|---|---:|---:|---:|---:|---:|\n`);
	for (const [name, st] of stats) {
		process.stdout.write(`| ${name} | ${median(st.first).toFixed(2)} ms (${range(st.first)}) | ${median(st.p50).toFixed(3)} ms | ${median(st.p99first200).toFixed(2)} ms (${range(st.p99first200)}) | **${median(st.p99).toFixed(2)} ms** (${range(st.p99)}) | ${median(st.max).toFixed(1)} ms |\n`);
	}
	process.stdout.write(`\nload average ${loadavg()[0].toFixed(1)}\n`);
}
