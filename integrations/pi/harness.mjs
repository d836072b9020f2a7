// Test harness: a real `loadout hostd` serving the samples' context, and real
// Pi sessions (Pi's SDK with its scripted `faux` model provider) loading this
// package. Shared by the node tests, `make demo` (demo.mjs) and the bench.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	ModelRegistry,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";

export { fauxAssistantMessage, fauxText, fauxToolCall };

export const packageDir = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(packageDir, "..", "..");

/** Binaries built by goBinary, by package. */
const builtBinaries = new Map();

/** A main package's binary: $env when set, else built once into a temp dir. */
function goBinary(env, pkg) {
	if (process.env[env]) return resolve(process.env[env]);
	if (!builtBinaries.has(pkg)) {
		const bin = join(mkdtempSync(join(tmpdir(), "loadout-bin-")), pkg.split("/").pop());
		execFileSync("go", ["build", "-o", bin, pkg], { cwd: repoRoot, stdio: "inherit" });
		builtBinaries.set(pkg, bin);
	}
	return builtBinaries.get(pkg);
}

/** The loadout binary: $LOADOUT_BIN (make builds bin/loadout), else built once into a temp dir. */
export function loadoutBinary() {
	return goBinary("LOADOUT_BIN", "./cmd/loadout");
}

/**
 * The samples' review-notes binary (samples/review-notes, not part of the
 * loadout CLI): $LOADOUT_REVIEW_NOTES_BIN (make builds bin/review-notes), else
 * built once into a temp dir.
 */
export function reviewNotesBinary() {
	return goBinary("LOADOUT_REVIEW_NOTES_BIN", "./samples/review-notes");
}

/** The ConfigMap data `loadout preview` publishes for the samples' Workspace. */
export function previewSamples(dir = join(repoRoot, "config", "samples")) {
	const out = execFileSync(loadoutBinary(), ["preview", "-f", dir, "-o", "json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
	const doc = JSON.parse(out);
	const cm = doc.kind === "List" ? doc.items[0] : doc;
	return cm.data;
}

/** Lays data out as the kubelet mounts a ConfigMap volume (..data swapped by rename), as internal/test/demo does. */
export function mountConfigMap(dir, data) {
	mkdirSync(dir, { recursive: true });
	const snap = `..${Date.now()}_${process.hrtime.bigint()}`;
	mkdirSync(join(dir, snap));
	for (const [k, v] of Object.entries(data)) writeFileSync(join(dir, snap, k), v);
	let old;
	try {
		old = readlinkSync(join(dir, "..data"));
	} catch {}
	symlinkSync(snap, join(dir, "..data_tmp"));
	renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
	for (const k of Object.keys(data)) {
		if (!existsSync(join(dir, k))) symlinkSync(join("..data", k), join(dir, k));
	}
	if (old && old !== snap) rmSync(join(dir, old), { recursive: true, force: true });
}

export async function freePort() {
	return new Promise((res, rej) => {
		const srv = createServer();
		srv.listen(0, "127.0.0.1", () => {
			const { port } = srv.address();
			srv.close(() => res(port));
		});
		srv.on("error", rej);
	});
}

async function waitFor(what, fn, ms = 20000) {
	const deadline = Date.now() + ms;
	for (;;) {
		try {
			if (await fn()) return;
		} catch {}
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

/**
 * Starts `loadout hostd --materialize` on a mounted copy of data (bin: another
 * loadout binary, for the bench); resolves when /readyz answers 200 and the
 * tree is written.
 */
export async function startHostd(data, extraArgs = [], bin = loadoutBinary()) {
	const work = mkdtempSync(join(tmpdir(), "loadout-pi-"));
	const contextDir = join(work, "context");
	const treeDir = join(work, "tree");
	mountConfigMap(contextDir, data);
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const proc = spawn(bin, ["hostd", "--allow-unsigned-context", "--context-dir", contextDir, "--addr", `127.0.0.1:${port}`, "--materialize", treeDir, "--poll-interval", "100ms", ...extraArgs], {
		stdio: ["ignore", "ignore", "pipe"],
	});
	let log = "";
	proc.stderr.on("data", (b) => (log += b));
	const exited = new Promise((r) => proc.on("exit", r));
	await waitFor(`hostd on ${url}`, async () => (await fetch(url + "/readyz")).status === 200 && existsSync(join(treeDir, "..data")));
	return {
		url,
		work,
		contextDir,
		treeDir,
		proc,
		log: () => log,
		async stop() {
			if (proc.exitCode === null) {
				proc.kill("SIGTERM");
				await exited;
			}
		},
		async cleanup() {
			await this.stop();
			rmSync(work, { recursive: true, force: true });
		},
	};
}

/**
 * Starts review-notes (samples/review-notes, the Service of the samples'
 * runnable review_note) and returns hostd's flags to reach it: the registry's
 * Service host:port mapped to the local port.
 */
export async function startReviewNotes(manifest) {
	const tool = manifest.tools.find((t) => t.name === "review_note" && t.service);
	const service = new URL(tool.service.url).host;
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const proc = spawn(reviewNotesBinary(), ["--addr", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "ignore"] });
	const exited = new Promise((r) => proc.on("exit", r));
	await waitFor(`review-notes on ${url}`, async () => (await fetch(url + "/healthz")).status === 200);
	return {
		url,
		hostdArgs: ["--service-address", `${service}=127.0.0.1:${port}`],
		async notes() {
			return (await (await fetch(url + "/notes")).json()).notes;
		},
		async stop() {
			if (proc.exitCode === null) {
				proc.kill("SIGTERM");
				await exited;
			}
		},
	};
}

/**
 * Starts review-notes for the data's manifest and a hostd that reaches it:
 * what a suite with the runnable review_note needs. stop() ends both.
 */
export async function startHostdWithReviewNotes(data) {
	const notes = await startReviewNotes(JSON.parse(data["manifest.json"]));
	const hostd = await startHostd(data, notes.hostdArgs);
	return {
		hostd,
		notes,
		async stop() {
			await hostd.cleanup();
			await notes.stop();
		},
	};
}

/** Captures what Pi shows the user through its extension UI. */
export function captureUI() {
	const notes = [];
	const statuses = {};
	const ui = new Proxy(
		{ notify: (message, type) => notes.push({ message, type }), setStatus: (key, text) => (statuses[key] = text) },
		{ get: (t, k) => (k in t ? t[k] : () => undefined) },
	);
	return { ui, notes, statuses };
}

/**
 * A real Pi session that loads this package (the directory, through its
 * package.json "pi" manifest; pkg names another copy of it, for the bench)
 * and talks to a scripted model. `responses` are
 * faux steps; each model call is recorded in `calls` (system prompt, messages).
 */
export async function piSession({ hostdUrl, treeDir, responses = [], timeoutMs, pkg = packageDir }) {
	process.env.LOADOUT_HOSTD_URL = hostdUrl;
	process.env.LOADOUT_CONTEXT_DIR = treeDir;
	if (timeoutMs) process.env.LOADOUT_HOSTD_TIMEOUT_MS = String(timeoutMs);
	else delete process.env.LOADOUT_HOSTD_TIMEOUT_MS;
	process.env.LOADOUT_TREE_WAIT_MS = "2000";

	const cwd = mkdtempSync(join(tmpdir(), "pi-cwd-"));
	const agentDir = mkdtempSync(join(tmpdir(), "pi-agent-"));
	const faux = registerFauxProvider();
	const calls = [];
	faux.setResponses(
		responses.map((step) => (context, options, state, model) => {
			calls.push({ systemPrompt: context.systemPrompt, messages: structuredClone(context.messages) });
			return typeof step === "function" ? step(context, options, state, model) : step;
		}),
	);
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, additionalExtensionPaths: [pkg] });
	await resourceLoader.reload();
	const authStorage = AuthStorage.inMemory ? AuthStorage.inMemory() : AuthStorage.create(join(agentDir, "auth.json"));
	authStorage.setRuntimeApiKey?.(faux.getModel().provider, "faux");
	const modelRegistry = ModelRegistry.inMemory(authStorage);
	const { session, extensionsResult } = await createAgentSession({
		cwd,
		agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		authStorage,
		modelRegistry,
		resourceLoader,
		sessionManager: SessionManager.inMemory(cwd),
		settingsManager,
	});
	const { ui, notes, statuses } = captureUI();
	const errors = [];
	await session.bindExtensions({ uiContext: ui, onError: (e) => errors.push(e) });
	return {
		session,
		resourceLoader,
		cwd,
		calls,
		notes,
		statuses,
		errors,
		faux,
		extensionsResult,
		/** Tool results in the session, in order. */
		toolResults: () => session.messages.filter((m) => m.role === "toolResult"),
		dispose() {
			session.dispose();
			faux.unregister();
			rmSync(cwd, { recursive: true, force: true });
			rmSync(agentDir, { recursive: true, force: true });
		},
	};
}

export function textOf(message) {
	const c = message?.content;
	if (typeof c === "string") return c;
	return (c ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n");
}

/** hostd's count of a hook's diagnostics of a kind, from its metrics. */
export async function diagnostics(url, hook, kind) {
	const text = await (await fetch(url + "/metrics")).text();
	let n = 0;
	for (const line of text.split("\n")) {
		if (line.startsWith("loadout_hostd_hook_diagnostics_total{") && line.includes(`hook="${hook}"`) && line.includes(`kind="${kind}"`)) {
			n += Number(line.split(" ").at(-1));
		}
	}
	return n;
}
