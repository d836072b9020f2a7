// Loadout for Pi: runs the Pi coding agent on a Loadout Workspace's context.
//
// - Skills and prompt templates come from the materialized tree
//   (`loadout hostd --materialize DIR`), contributed through resources_discover,
//   so Pi's own skill list is the Workspace's winners.
// - The Workspace's instructions, always-active skills and extension prompt
//   guides join Pi's system prompt in before_agent_start (Pi already lists the
//   skills, so they are not listed again).
// - Every tool call, Pi's built-ins included, is asked of hostd
//   (POST /v1/before) and blocked with hostd's reason when denied. No answer
//   (unreachable, non-2xx, timeout, malformed) blocks too: the gate fails closed.
//   Each result goes to POST /v1/after.
// - Template slash commands render through hostd (POST /v1/render), so a
//   missing {{var}} is an error the user sees, never a half-filled prompt.
// - Each runnable registry tool (manifest.json tools with a `service`) is
//   registered in Pi with its description and input schema, and runs through
//   hostd (POST /v1/tools/{name}), which checks the schema and runs the hooks
//   around the tool's Service; so the gate does not ask hostd about it twice.
//   Tools are registered at start-up: a context that adds one needs a new session.
//
// Configuration (environment):
//   LOADOUT_HOSTD_URL        hostd's base URL (default http://127.0.0.1:8181)
//   LOADOUT_CONTEXT_DIR      the materialized tree (default /var/run/loadout/tree)
//   LOADOUT_HOSTD_TIMEOUT_MS deadline per hostd call (default 35000: above the
//                            30 s longest hook timeout, so a slow hook is not
//                            cut short)
//   LOADOUT_TREE_WAIT_MS     how long start-up waits for the tree (default 30000)
//
// Each concern is one register* function below; new ones (runnable tools) are
// added the same way in loadoutExtension.

import * as http from "node:http";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

export interface LoadoutConfig {
	hostdUrl: string;
	contextDir: string;
	timeoutMs: number;
	treeWaitMs: number;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): LoadoutConfig {
	return {
		hostdUrl: (env.LOADOUT_HOSTD_URL || "http://127.0.0.1:8181").replace(/\/+$/, ""),
		contextDir: env.LOADOUT_CONTEXT_DIR || "/var/run/loadout/tree",
		timeoutMs: positive(env.LOADOUT_HOSTD_TIMEOUT_MS, 35000),
		treeWaitMs: positive(env.LOADOUT_TREE_WAIT_MS, 30000),
	};
}

function positive(v: string | undefined, fallback: number): number {
	const n = Number(v);
	return v && Number.isFinite(n) && n > 0 ? n : fallback;
}

export default async function loadoutExtension(pi: ExtensionAPI): Promise<void> {
	const cfg = configFromEnv();
	const hostd = new Hostd(cfg);
	const tree = new Tree(cfg.contextDir);
	await tree.waitUntilPresent(cfg.treeWaitMs);
	registerResources(pi, tree);
	registerSystemPrompt(pi, tree);
	const runnable = registerRunnableTools(pi, tree, hostd);
	registerToolGate(pi, hostd, runnable);
	registerTemplates(pi, tree, hostd);
}

// ---------------------------------------------------------------------------
// hostd client

/** Outcome of one hostd call: a parsed 2xx body, or why there is none. */
type HostdAnswer = { ok: true; body: any } | { ok: false; why: string };

export class Hostd {
	constructor(private readonly cfg: LoadoutConfig) {}

	get url(): string {
		return this.cfg.hostdUrl;
	}

	async post(path: string, body: unknown): Promise<HostdAnswer> {
		let res: { status: number; text: string };
		try {
			res = await postJSON(this.cfg.hostdUrl + path, JSON.stringify(body), this.cfg.timeoutMs);
		} catch (err: any) {
			if (err?.name === "TimeoutError") {
				return { ok: false, why: `hostd at ${this.cfg.hostdUrl} did not answer ${path} within ${this.cfg.timeoutMs} ms` };
			}
			if (err?.name === "BrokenAnswer") {
				return { ok: false, why: `hostd at ${this.cfg.hostdUrl} broke off its answer to ${path}: ${err.message}` };
			}
			const cause = err?.code || err?.message || String(err);
			return { ok: false, why: `hostd at ${this.cfg.hostdUrl} is unreachable (${cause})` };
		}
		const text = res.text;
		let parsed: any;
		try {
			parsed = text ? JSON.parse(text) : undefined;
		} catch {
			parsed = undefined;
		}
		if (res.status < 200 || res.status > 299) {
			const detail = typeof parsed?.error === "string" ? parsed.error : text.trim().slice(0, 200);
			return { ok: false, why: `hostd at ${this.cfg.hostdUrl} answered ${path} with ${res.status}: ${detail}` };
		}
		if (parsed === undefined) {
			return { ok: false, why: `hostd at ${this.cfg.hostdUrl} answered ${path} with a body that is not JSON` };
		}
		return { ok: true, body: parsed };
	}
}

// hostd is on loopback and called twice per tool call: node:http with a
// keep-alive agent costs a fraction of fetch's per-request overhead and
// tail (docs/benchmarks.md, Pi with the Loadout package).
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** POSTs a JSON body; rejects with a TimeoutError, a BrokenAnswer or the socket's error. */
function postJSON(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
	return new Promise((resolve, reject) => {
		const req = http.request(
			url,
			{ method: "POST", agent: keepAlive, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
			(res) => {
				const chunks: Buffer[] = [];
				res.on("data", (c: Buffer) => chunks.push(c));
				res.on("end", () => {
					clearTimeout(timer);
					resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
				});
				res.on("aborted", () => fail(Object.assign(new Error("connection closed mid-answer"), { name: "BrokenAnswer" })));
				res.on("error", (err) => fail(Object.assign(err, { name: "BrokenAnswer" })));
			},
		);
		const fail = (err: Error) => {
			clearTimeout(timer);
			req.destroy();
			reject(err);
		};
		const timer = setTimeout(() => fail(Object.assign(new Error("timeout"), { name: "TimeoutError" })), timeoutMs);
		req.on("error", (err) => {
			clearTimeout(timer);
			reject(err);
		});
		req.end(body);
	});
}

function texts(content: unknown): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((c) => c && c.type === "text" && typeof c.text === "string")
		.map((c) => c.text)
		.join("\n");
}

// ---------------------------------------------------------------------------
// The materialized tree

/** Minimal view of manifest.json (docs/context-contract.md). */
interface Manifest {
	hash?: string;
	activeSkills?: { name: string; files?: string[] }[];
	templates?: { name: string; variables?: string[] }[];
	commands?: { name: string; template: string }[];
	promptGuides?: { extension: string; text: string }[];
	tools?: { name: string; description?: string; inputSchema?: Record<string, unknown>; service?: { url: string } }[];
}

export class Tree {
	constructor(readonly dir: string) {}

	/**
	 * The current generation directory: OUT/..data resolved once, so every
	 * file read through it belongs to one context even while hostd swaps in a
	 * new one. A plain directory (no ..data) is used as it is.
	 */
	generation(): string {
		const data = join(this.dir, "..data");
		return existsSync(data) ? realpathSync(data) : this.dir;
	}

	present(): boolean {
		return existsSync(join(this.dir, "skills"));
	}

	async waitUntilPresent(ms: number): Promise<void> {
		const deadline = Date.now() + ms;
		while (!this.present() && Date.now() < deadline) {
			await new Promise((r) => setTimeout(r, 100));
		}
	}

	read(gen: string, name: string): string {
		return readFileSync(join(gen, name), "utf8");
	}

	manifest(gen: string): Manifest {
		return JSON.parse(this.read(gen, "manifest.json"));
	}
}

/** The body of a SKILL.md: what follows its frontmatter. */
function skillBody(md: string): string {
	const m = /^---\r?\n[\s\S]*?\r?\n---\r?\n/.exec(md);
	return (m ? md.slice(m[0].length) : md).replace(/^(\r?\n)+/, "");
}

function trimNewlines(s: string): string {
	return s.replace(/^\n+|\n+$/g, "");
}

// ---------------------------------------------------------------------------
// Skills and prompt templates

function registerResources(pi: ExtensionAPI, tree: Tree): void {
	pi.on("resources_discover", async (_event, ctx) => {
		if (!tree.present()) {
			notify(ctx, `Loadout: no materialized context at ${tree.dir}; Pi starts without the Workspace's skills and templates`, "error");
			return {};
		}
		const gen = tree.generation();
		return { skillPaths: [join(gen, "skills")], promptPaths: [join(gen, "prompts")] };
	});
}

// ---------------------------------------------------------------------------
// System prompt: instructions, active skills, extension prompt guides

/** The Workspace's part of the system prompt, cached per generation. */
let promptCache: { gen: string; text: string } | undefined;

export function workspacePrompt(tree: Tree, gen: string): string {
	if (promptCache?.gen === gen) return promptCache.text;
	const m = tree.manifest(gen);
	const parts: string[] = [];
	const add = (s: string) => {
		const t = trimNewlines(s);
		if (t) parts.push(t);
	};
	const instructions = trimNewlines(tree.read(gen, "AGENTS.md"));
	if (instructions) add("# Workspace instructions\n\n" + instructions);
	for (const a of [...(m.activeSkills ?? [])].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
		add(`# Active skill: ${a.name}\n\n` + skillBody(tree.read(gen, join("skills", a.name, "SKILL.md"))));
		for (const f of a.files ?? []) {
			add(`## ${a.name}: ${f}\n\n` + tree.read(gen, join("skills", a.name, f)));
		}
	}
	const guides = (m.promptGuides ?? []).filter((g) => trimNewlines(g.text));
	if (guides.length) {
		add("# Extension guides\n\n" + guides.map((g) => `## Extension ${g.extension}\n\n${trimNewlines(g.text)}`).join("\n\n"));
	}
	const text = parts.join("\n\n");
	promptCache = { gen, text };
	return text;
}

function registerSystemPrompt(pi: ExtensionAPI, tree: Tree): void {
	pi.on("before_agent_start", async (event, ctx) => {
		if (!tree.present()) return undefined;
		let extra: string;
		try {
			extra = workspacePrompt(tree, tree.generation());
		} catch (err: any) {
			notify(ctx, `Loadout: reading the Workspace context in ${tree.dir}: ${err?.message ?? err}`, "error");
			return undefined;
		}
		return extra ? { systemPrompt: event.systemPrompt + "\n\n" + extra + "\n" } : undefined;
	});
}

// ---------------------------------------------------------------------------
// Tool calls: hostd decides, failing closed

function registerToolGate(pi: ExtensionAPI, hostd: Hostd, runnable: Set<string>): void {
	pi.on("tool_call", async (event) => {
		// hostd runs a runnable tool's hooks itself, inside /v1/tools/{name}.
		if (runnable.has(event.toolName)) return undefined;
		const call = { id: event.toolCallId, name: event.toolName, arguments: event.input ?? {} };
		const answer = await hostd.post("/v1/before", { call });
		if (!answer.ok) {
			return { block: true, reason: `Loadout blocked ${event.toolName}: ${answer.why}; tool calls fail closed without hostd's answer.` };
		}
		if (answer.body?.allowed === true) return undefined;
		if (answer.body?.allowed === false) {
			const reason = texts(answer.body.result?.content) || `hostd denied ${event.toolName} without a reason`;
			return { block: true, reason };
		}
		return { block: true, reason: `Loadout blocked ${event.toolName}: hostd's answer has no "allowed" verdict; tool calls fail closed.` };
	});

	pi.on("tool_result", async (event, ctx) => {
		if (runnable.has(event.toolName)) return undefined;
		const call = { id: event.toolCallId, name: event.toolName, arguments: event.input ?? {} };
		const result = {
			toolCallId: event.toolCallId,
			toolName: event.toolName,
			isError: event.isError,
			content: event.content,
			details: event.details ?? {},
		};
		const answer = await hostd.post("/v1/after", { call, result });
		if (!answer.ok) {
			// After hooks observe; the tool already ran, so its result stands.
			notify(ctx, `Loadout: after hooks for ${event.toolName} did not run: ${answer.why}`, "warning");
		}
		return undefined;
	});
}

// ---------------------------------------------------------------------------
// Runnable tools: run by hostd

/**
 * Registers every runnable tool of the context's registry as a Pi tool whose
 * execution is POST /v1/tools/{name}: hostd checks the arguments against the
 * input schema, runs the before hooks, calls the tool's Service and runs the
 * after hooks. A refused, invalid, blocked or failed call (and no answer from
 * hostd) is an error result with the reason, so the model sees why. Returns
 * the registered names.
 */
function registerRunnableTools(pi: ExtensionAPI, tree: Tree, hostd: Hostd): Set<string> {
	const names = new Set<string>();
	let tools: NonNullable<Manifest["tools"]> = [];
	try {
		tools = tree.manifest(tree.generation()).tools ?? [];
	} catch {
		return names; // no tree yet: the gate still guards every call
	}
	for (const t of tools) {
		if (!t.service) continue;
		names.add(t.name);
		const description = t.description || t.name;
		pi.registerTool({
			name: t.name,
			label: t.name,
			description,
			promptSnippet: description,
			parameters: (t.inputSchema ?? { type: "object" }) as any,
			async execute(toolCallId, params) {
				const answer = await hostd.post(`/v1/tools/${encodeURIComponent(t.name)}`, { call: { id: toolCallId, arguments: params ?? {} } });
				if (!answer.ok) {
					throw new Error(`Loadout could not run ${t.name}: ${answer.why}`);
				}
				const result = answer.body?.result;
				const text = texts(result?.content);
				if (!result || result.isError) {
					throw new Error(text || `${t.name} failed without a reason`);
				}
				const content = (Array.isArray(result.content) ? result.content : []).filter((c: any) => c?.type === "text" || c?.type === "image");
				return { content, details: result.details ?? {} };
			},
		});
	}
	return names;
}

// ---------------------------------------------------------------------------
// Template slash commands: rendered by hostd

/** Splits command arguments like a shell: whitespace, "double" and 'single' quotes. */
export function splitArgs(s: string): string[] {
	const out: string[] = [];
	const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
	for (let m; (m = re.exec(s)); ) {
		out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2] !== undefined ? m[2] : m[3]);
	}
	return out;
}

/**
 * Maps "/review a b" or "/review owner=b file=a" to the template's variables:
 * name=value sets a variable by name, other words fill the unset variables in
 * order (the order argument-hint shows).
 */
export function templateArgs(variables: string[], words: string[]): Record<string, string> {
	const args: Record<string, string> = {};
	const positional: string[] = [];
	for (const w of words) {
		const eq = w.indexOf("=");
		if (eq > 0 && variables.includes(w.slice(0, eq))) args[w.slice(0, eq)] = w.slice(eq + 1);
		else positional.push(w);
	}
	for (const v of variables) {
		if (!(v in args) && positional.length) args[v] = positional.shift() as string;
	}
	return args;
}

function registerTemplates(pi: ExtensionAPI, tree: Tree, hostd: Hostd): void {
	pi.on("input", async (event, ctx) => {
		const m = /^\/([a-z0-9][a-z0-9-]*)(?:\s+([\s\S]*))?$/.exec(event.text.trim());
		if (!m || !tree.present()) return { action: "continue" };
		let manifest: Manifest;
		try {
			manifest = tree.manifest(tree.generation());
		} catch {
			return { action: "continue" };
		}
		const command = (manifest.commands ?? []).find((c) => c.name === m[1]);
		if (!command) return { action: "continue" };
		const variables = (manifest.templates ?? []).find((t) => t.name === command.template)?.variables ?? [];
		const args = templateArgs(variables, splitArgs(m[2] ?? ""));
		const answer = await hostd.post("/v1/render", { template: command.template, args });
		if (!answer.ok) {
			notify(ctx, `/${command.name}: ${answer.why}`, "error");
			return { action: "handled" };
		}
		const text = texts(answer.body?.content);
		if (!text) {
			notify(ctx, `/${command.name}: hostd rendered no text`, "error");
			return { action: "handled" };
		}
		return { action: "transform", text };
	});
}

// ---------------------------------------------------------------------------

/** Tells the user: through Pi's UI, or on stderr when Pi runs without one. */
function notify(ctx: ExtensionContext, message: string, level: "info" | "warning" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(message, level);
	else console.error(message);
}
