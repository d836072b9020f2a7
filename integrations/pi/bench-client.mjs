// `make bench`'s HTTP client comparison (docs/benchmarks.md, "The package's
// HTTP client against undici"): the package's own client (hostd-http.ts)
// against undici (installed with Pi), each in fresh processes, on the round
// trips the package makes around every tool call (POST /v1/before, then
// POST /v1/after) to a real hostd on the samples' context, over TCP and over
// its Unix socket. A session's first calls are the ones that matter (V8 has
// not optimized the client yet), so every call counts from the first.
//   LOADOUT_BIN=../../bin/loadout node bench-client.mjs [CALLS=2000] [PROCESSES=7]
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { previewSamples, startHostd } from "./harness.mjs";

const before = JSON.stringify({ call: { id: "c1", name: "bash", arguments: { command: "ls -la" } }, acceptArguments: true });
const after = JSON.stringify({
	call: { id: "c1", name: "bash", arguments: { command: "ls -la" } },
	result: { toolCallId: "c1", toolName: "bash", isError: false, content: [{ type: "text", text: "ok" }] },
});

/** One client's calls in this (fresh) process: the latency of each pair, in ms. */
async function child(client, base, calls) {
	let post;
	if (client === "own") {
		const { createJiti } = await import("jiti");
		const { postJSON } = await createJiti(import.meta.url).import("./hostd-http.ts");
		post = async (path, body) => {
			const a = await postJSON(base, path, body, 10_000);
			if (a.status !== 200) throw new Error(`${path}: ${a.status} ${a.text}`);
		};
	} else {
		const { Pool } = await import("undici");
		const pool = base.startsWith("unix:")
			? new Pool("http://localhost", { socketPath: base.slice("unix:".length), connections: 16 })
			: new Pool(base, { connections: 16 });
		post = async (path, body) => {
			const res = await pool.request({ path, method: "POST", headers: { "content-type": "application/json" }, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
			const text = await res.body.text();
			if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text}`);
		};
	}
	const ds = [];
	for (let i = 0; i < calls; i++) {
		const t0 = process.hrtime.bigint();
		await post("/v1/before", before);
		await post("/v1/after", after);
		ds.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	process.stdout.write(JSON.stringify(ds));
	process.exit(0);
}

const quantile = (s, q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === "--child") {
	await child(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
	const [calls = 2000, processes = 7] = process.argv.slice(2).map(Number);
	const work = mkdtempSync(join(tmpdir(), "loadout-pi-client-"));
	const socket = join(work, "hostd.sock");
	const hostd = await startHostd(previewSamples(), ["--unix-socket", socket]);
	const self = fileURLToPath(import.meta.url);
	try {
		const rows = [];
		for (const [transport, base] of [["TCP", hostd.url], ["Unix socket", "unix:" + socket]]) {
			const p99s = { own: [], undici: [] };
			const p50s = { own: [], undici: [] };
			// Interleaved, so drift on a shared machine falls on both alike.
			for (let p = 0; p < processes; p++) {
				for (const client of ["own", "undici"]) {
					// Not execFileSync: this process must keep reading hostd's log
					// (a ledger record per verdict), or hostd blocks writing it.
					const { stdout: out } = await promisify(execFile)(process.execPath, [self, "--child", client, base, String(calls)], { maxBuffer: 64 << 20 });
					const ds = JSON.parse(out.toString()).sort((a, b) => a - b);
					p99s[client].push(quantile(ds, 0.99));
					p50s[client].push(quantile(ds, 0.5));
				}
			}
			for (const client of ["own", "undici"]) {
				rows.push(`| ${client === "own" ? "hostd-http.ts (the package's)" : "undici " + (await import("undici/package.json", { with: { type: "json" } })).default.version} | ${transport} | ${median(p50s[client]).toFixed(3)} ms | ${median(p99s[client]).toFixed(3)} ms | ${Math.min(...p99s[client]).toFixed(3)}–${Math.max(...p99s[client]).toFixed(3)} ms |`);
			}
			rows.push(`| undici − own, median p99 | ${transport} | | ${(median(p99s.undici) - median(p99s.own)).toFixed(3)} ms | |`);
		}
		process.stdout.write(`\n| ${calls} before+after pairs from a fresh process (${processes} each, interleaved) | transport | p50 (median) | p99 (median) | p99 range |\n|---|---|---|---|---|\n`);
		for (const r of rows) process.stdout.write(r + "\n");
		process.stdout.write(`\nload average ${loadavg()[0].toFixed(1)}\n`);
	} finally {
		await hostd.cleanup();
		rmSync(work, { recursive: true, force: true });
	}
}
