// `make bench`'s Pi numbers (docs/benchmarks.md):
//  1. Start-up: a Pi session on a Workspace that resolves 3 roots × N skills
//     (same names in every root, so N winners), loading the materialized
//     winners through this package (from the manifest), against plain Pi
//     scanning the 3 roots and plain Pi scanning the tree's skills/.
//     All are measured in one process, interleaved, from a new DefaultResourceLoader to a
//     session whose system prompt lists the skills (resources_discover done).
//     Then the same two start-ups as whole processes (bench-start.mjs: Node's
//     own start and loading Pi's modules included), PROCESSES of each,
//     interleaved.
//  2. The latency a tool call gains through the package: Pi's own before and
//     after tool-call hooks (what Pi runs around every call) with the package
//     and a real hostd on the samples' context, minus the same without it.
//     CALLS=0 measures start-up only.
//   LOADOUT_BIN=../../bin/loadout node bench.mjs [N=1000] [ITERATIONS=9] [CALLS=2000] [PROCESSES=5]
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import { registerFauxProvider } from "@mariozechner/pi-ai";
import { captureUI, loadoutBinary, mountConfigMap, packageDir, previewSamples, startHostd } from "./harness.mjs";

const [n = 1000, iterations = 9, calls = 2000, processes = 5] = process.argv.slice(2).map(Number);
const work = mkdtempSync(join(tmpdir(), "loadout-pi-bench-"));
const say = (s = "") => process.stdout.write(s + "\n");

/** 3 roots × n skills, as internal/resources/benchtree writes them. */
function writeRoots() {
	const roots = [];
	for (let r = 0; r < 3; r++) {
		const root = join(work, `root${r}`);
		for (let i = 0; i < n; i++) {
			const name = `skill-${String(i).padStart(5, "0")}`;
			const dir = join(root, "skills", name);
			mkdirSync(dir, { recursive: true });
			writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: Skill ${i} of root ${r}, for benchmarks.\n---\n# Skill ${i}\n\nDo the thing carefully.\n`);
			writeFileSync(join(dir, "ref.md"), "Reference material.\n");
		}
		roots.push(root);
	}
	return roots;
}

const faux = registerFauxProvider();
const authStorage = AuthStorage.inMemory ? AuthStorage.inMemory() : AuthStorage.create(join(work, "auth.json"));
authStorage.setRuntimeApiKey?.(faux.getModel().provider, "faux");

/** One Pi session start-up; returns [ms, skills loaded, session]. */
async function startSession(loaderOptions) {
	const cwd = mkdtempSync(join(work, "cwd-"));
	const agentDir = mkdtempSync(join(work, "agent-"));
	const t0 = process.hrtime.bigint();
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, ...loaderOptions });
	await resourceLoader.reload();
	const { session } = await createAgentSession({
		cwd,
		agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		resourceLoader,
		sessionManager: SessionManager.inMemory(cwd),
		settingsManager,
	});
	await session.bindExtensions({ uiContext: captureUI().ui });
	const ms = Number(process.hrtime.bigint() - t0) / 1e6;
	const skills = resourceLoader.getSkills().skills.length;
	return [ms, skills, session];
}

/**
 * Start-up of each configuration, interleaved: every round starts one session
 * of each, so a change in the machine's load falls on all of them alike. The
 * first round is the cold one (reported apart); the rest are warm.
 */
async function measureInterleaved(configs) {
	const times = configs.map(() => []);
	const skills = configs.map(() => 0);
	for (let i = 0; i <= iterations; i++) {
		for (const [k, { label, loaderOptions }] of configs.entries()) {
			const [ms, count, session] = await startSession(loaderOptions);
			if (!session.systemPrompt.includes("<name>skill-00000</name>")) throw new Error(`${label}: the system prompt lists no skills`);
			session.dispose();
			skills[k] = count;
			times[k].push(ms);
		}
	}
	return configs.map(({ label }, k) => {
		const cold = times[k].shift();
		const warm = times[k].sort((a, b) => a - b);
		return { label, cold, median: warm[Math.floor(warm.length / 2)], min: warm[0], skills: skills[k] };
	});
}

function quantile(sorted, q) {
	return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

try {
	const version = (await import("@mariozechner/pi-coding-agent")).VERSION;
	say(`Pi ${version ?? "?"}, node ${process.version}; ${n} skills × 3 roots, ${iterations} warm start-ups each`);

	// 1. Start-up.
	const roots = writeRoots();
	const contextDir = join(work, "context");
	const tree = join(work, "tree");
	const out = execFileSync(loadoutBinary(), ["preview", ...roots.flatMap((r) => ["--root", r]), "--max-context-bytes", "0", "-o", "json"], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] });
	const doc = JSON.parse(out);
	mountConfigMap(contextDir, (doc.kind === "List" ? doc.items[0] : doc).data);
	execFileSync(loadoutBinary(), ["materialize", "--context-dir", contextDir, "--out", tree], { stdio: "ignore" });
	process.env.LOADOUT_CONTEXT_DIR = tree;
	process.env.LOADOUT_HOSTD_URL = "http://127.0.0.1:9"; // start-up makes no hostd call
	// The third row is Pi scanning the materialized tree's skills/ itself:
	// what the package had Pi do before it gave Pi the manifest's winners.
	const [plain, loadout, scanTree] = await measureInterleaved([
		{ label: "plain Pi, 3 roots", loaderOptions: { additionalSkillPaths: roots.map((r) => join(r, "skills")), noExtensions: true } },
		{ label: "Pi + Loadout package, winners from the manifest", loaderOptions: { additionalExtensionPaths: [packageDir], noExtensions: true } },
		{ label: "plain Pi scanning the materialized tree's skills/", loaderOptions: { additionalSkillPaths: [join(tree, "skills")], noExtensions: true } },
	]);
	for (const r of [plain, loadout, scanTree]) if (r.skills !== n) throw new Error(`${r.label}: ${r.skills} skills loaded; want ${n}`);
	say();
	say("| Pi session start-up | warm median | warm min | cold (first) | skills loaded | plain (3 roots) / this, warm median |");
	say("|---|---|---|---|---|---|");
	for (const r of [plain, loadout, scanTree]) say(`| ${r.label} | ${r.median.toFixed(1)} ms | ${r.min.toFixed(1)} ms | ${r.cold.toFixed(1)} ms | ${r.skills} | ${(plain.median / r.median).toFixed(1)}× |`);
	say(`\nplain / package: ${(plain.median / loadout.median).toFixed(1)}× (warm median), ${(plain.min / loadout.min).toFixed(1)}× (warm min), ${(plain.cold / loadout.cold).toFixed(1)}× (cold); target ≥ 5× warm median`);

	say(`load average ${loadavg()[0].toFixed(1)}`);

	if (processes > 0) {
		// Whole processes, interleaved: Node's start and loading Pi's modules
		// are the same on both sides and are not the package's to cut.
		const script = fileURLToPath(new URL("./bench-start.mjs", import.meta.url));
		const sides = [
			{ label: "plain Pi, 3 roots", args: ["scan", ...roots.map((r) => join(r, "skills"))], times: [], skills: n },
			{ label: "Pi + Loadout package, winners from the manifest", args: ["package"], times: [], skills: n },
			{ label: "Pi with no skills and no extension (Node and Pi's own modules: the floor)", args: ["none"], times: [], skills: 0 },
		];
		for (let i = 0; i < processes; i++) {
			for (const side of sides) {
				const { ms, skills } = JSON.parse(execFileSync(process.execPath, [script, ...side.args], { encoding: "utf8", env: process.env }));
				if (skills !== side.skills) throw new Error(`${side.label} (process): ${skills} skills loaded; want ${side.skills}`);
				side.times.push(ms);
			}
		}
		for (const side of sides) side.times.sort((a, b) => a - b);
		const median = (t) => t[Math.floor(t.length / 2)];
		say();
		say(`| Whole process to a session listing the skills (${processes} each) | median | min | plain (3 roots) / this, median |`);
		say("|---|---|---|---|");
		for (const side of sides) say(`| ${side.label} | ${median(side.times).toFixed(1)} ms | ${side.times[0].toFixed(1)} ms | ${(median(sides[0].times) / median(side.times)).toFixed(1)}× |`);
		say(`\nload average ${loadavg()[0].toFixed(1)}`);
	}

	if (calls > 0) {
		// 2. Added latency per tool call.
		// hostd on TCP (the default) and on its Unix socket, side by side.
		const socket = join(work, "hostd.sock");
		const hostd = await startHostd(previewSamples(), ["--unix-socket", socket]);
		try {
			process.env.LOADOUT_CONTEXT_DIR = hostd.treeDir;
			const timeCalls = async (session) => {
				const ds = [];
				for (let i = 0; i < calls + 200; i++) {
					const toolCall = { type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: "ls -la" } };
					const args = toolCall.arguments;
					const t0 = process.hrtime.bigint();
					const verdict = await session.agent.beforeToolCall?.({ toolCall, args });
					if (verdict?.block) throw new Error("ls was blocked: " + verdict.reason);
					await session.agent.afterToolCall?.({ toolCall, args, result: { content: [{ type: "text", text: "ok" }], details: {} }, isError: false });
					if (i >= 200) ds.push(Number(process.hrtime.bigint() - t0) / 1e6); // the first 200 warm up
				}
				return ds.sort((a, b) => a - b);
			};
			// The package reads LOADOUT_HOSTD_URL when a session loads it.
			const gatedOn = async (url) => {
				process.env.LOADOUT_HOSTD_URL = url;
				return (await startSession({ additionalExtensionPaths: [packageDir], noExtensions: true }))[2];
			};
			const [, , bare] = await startSession({ noExtensions: true, noSkills: true });
			const overTCP = await gatedOn(hostd.url);
			const overSocket = await gatedOn("unix:" + socket);
			const without = await timeCalls(bare);
			const rows = [];
			for (const round of [1, 2]) {
				rows.push([`TCP ${hostd.url} (round ${round})`, await timeCalls(overTCP)]);
				rows.push([`Unix socket (round ${round})`, await timeCalls(overSocket)]);
			}
			for (const s of [bare, overTCP, overSocket]) s.dispose();
			say();
			say(`| ${calls} bash calls through Pi's tool hooks | p50 | p99 | max | added p99 against the 2 ms target |`);
			say("|---|---|---|---|---|");
			say(`| without the package | ${quantile(without, 0.5).toFixed(3)} ms | ${quantile(without, 0.99).toFixed(3)} ms | ${without.at(-1).toFixed(3)} ms | |`);
			for (const [label, ds] of rows) {
				const addedP99 = quantile(ds, 0.99) - quantile(without, 0.99);
				say(`| with the package, hostd over ${label} | ${quantile(ds, 0.5).toFixed(3)} ms | ${quantile(ds, 0.99).toFixed(3)} ms | ${ds.at(-1).toFixed(3)} ms | ${addedP99.toFixed(3)} ms, ${(addedP99 / 2).toFixed(2)}× |`);
			}
			say(`\nload average ${loadavg()[0].toFixed(1)}`);
		} finally {
			await hostd.cleanup();
		}
	}
} finally {
	faux.unregister();
	rmSync(work, { recursive: true, force: true });
}
