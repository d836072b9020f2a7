// Loadout for Pi: runs the Pi coding agent on a Loadout Workspace's context.
//
// - Skills and prompt templates come from the materialized tree
//   (`loadout hostd --materialize DIR`), contributed through resources_discover,
//   so Pi's own skill list is the Workspace's winners. Pi gets their names and
//   descriptions from the tree's manifest.json and reads no SKILL.md at
//   start-up (a body when the skill is used).
// - The platform's text (its instructions and always-active skills, its
//   extensions' prompt guides, the denied tools) joins Pi's system prompt in
//   before_agent_start; the tenants' (their instructions, skills and guides)
//   goes in Pi's project section, each part under a heading naming its
//   namespace and saying it is project content (Pi already lists the skills,
//   so they are not listed again).
// - Every tool call, Pi's built-ins included, is asked of hostd
//   (POST /v1/before) and blocked with hostd's reason when denied. No answer
//   (unreachable, non-2xx, timeout, malformed) blocks too: the gate fails closed.
//   Each result goes to POST /v1/after, unless hostd's before answer said no
//   after hook observes the tool (afterHooks: false), where it would run nothing;
//   after hooks that did not run and their diagnostics are shown and counted.
// - Template slash commands render through hostd (POST /v1/render), so a
//   missing {{var}} is an error the user sees, never a half-filled prompt.
// - A command with steps (a template's spec.steps) runs them in order: each
//   tool step through the hooks (a runnable tool through POST /v1/tools, one
//   of Pi's own tools asked of POST /v1/before, run as Pi runs it, its result
//   sent to /v1/after), stopping at the first blocked or failed step with its
//   reason; then the message (each tool's result, each rendered template) is
//   sent.
// - The Workspace's lifecycle hooks (docs/hooks.md) run at Pi's events:
//   session_start (SessionStart), input (UserInput, then BeforeAgentStart on
//   the rendered prompt, where a denial can still stop the turn),
//   before_agent_start (the hooks' context joins the turn as a message),
//   tool_call (BeforeToolCall: rewritten arguments are checked against the
//   tool's schema and patched into Pi's mutable input), tool_result
//   (AfterToolResult and ToolFailure), session_before_compact (BeforeCompact,
//   whose summary Pi keeps), session_shutdown (SessionEnd), turn_start and
//   turn_end (TurnStart, TurnEnd), context (BeforeModelRequest, before each
//   model request), message_end of the model's messages (AfterModelResponse)
//   and agent_end (Stop: a denial sends its message as the next prompt). An
//   event without hooks costs nothing. Every hook sees the session (agent
//   pi) and Pi's cwd.
// - Typed messages hooks emit are kept in the session as custom messages of
//   their type. Custom messages of a type published with inContext: false
//   are dropped from every model request (Pi's context event); one with a
//   template reads to the model as the template renders it.
// - Each runnable registry tool (manifest.json tools with a `service` or an
//   `mcp` server) is
//   registered in Pi with its description and input schema, and runs through
//   hostd (POST /v1/tools/{name}), which checks the schema and runs the hooks
//   around the tool's Service; so the gate does not ask hostd about it twice.
//   Tools are registered at start-up: a context that adds one needs a new session.
//
// Configuration (environment):
//   LOADOUT_HOSTD_URL        hostd's base URL (default http://127.0.0.1:8181), or
//                            unix:PATH for hostd's --unix-socket
//   LOADOUT_CONTEXT_DIR      the materialized tree (default /var/run/loadout/tree)
//   LOADOUT_HOSTD_TIMEOUT_MS deadline per hostd call (default 35000: above the
//                            30 s longest hook timeout, so a slow hook is not
//                            cut short)
//   LOADOUT_TREE_WAIT_MS     how long start-up waits for the tree (default 30000)
//
// Each concern is one register* function below; new ones (runnable tools) are
// added the same way in loadoutExtension.

import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { randomUUID } from "node:crypto";
import {
	createBashToolDefinition,
	createEditToolDefinition,
	createFindToolDefinition,
	createGrepToolDefinition,
	createLsToolDefinition,
	createReadToolDefinition,
	createSyntheticSourceInfo,
	createWriteToolDefinition,
	DefaultResourceLoader,
} from "@mariozechner/pi-coding-agent";
import type { ExtensionAPI, ExtensionContext, Skill, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { postJSON } from "./hostd-http.ts";
import { type SandboxDecl, sandboxConfigFromEnv, sandboxedTools } from "./sandbox.ts";

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
	const session = new SessionHooks(tree, hostd);
	registerSystemPrompt(pi, tree, session);
	const runnable = registerRunnableTools(pi, tree, hostd);
	const sandboxed = registerSandbox(pi, tree);
	registerToolGate(pi, hostd, runnable, sandboxed ? undefined : () => declaredSandbox(tree));
	registerPrompts(pi, tree, hostd, session, new StepRunner(pi, hostd, runnable, sandboxed));
	registerSessionEvents(pi, hostd, session);
	registerTurnEvents(pi, session);
	registerContextFilter(pi, tree);
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
			res = await postJSON(this.cfg.hostdUrl, path, JSON.stringify(body), this.cfg.timeoutMs);
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
	tools?: { name: string; description?: string; inputSchema?: Record<string, unknown>; service?: { url: string }; mcp?: { url: string; tool: string }; executionMode?: string }[];
	hooks?: { event: string }[];
	catalog?: { kind: string; name: string; description?: string }[];
	messageTypes?: { extension?: string; type: string; inContext?: boolean; template?: string }[];
	sandbox?: SandboxDecl;
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

	/** manifest.json of a generation, parsed once (a generation never changes). */
	manifest(gen: string): Manifest {
		if (this.manifestCache?.gen !== gen) this.manifestCache = { gen, manifest: JSON.parse(this.read(gen, "manifest.json")) };
		return this.manifestCache.manifest;
	}

	private manifestCache: { gen: string; manifest: Manifest } | undefined;
}

function trimNewlines(s: string): string {
	return s.replace(/^\n+|\n+$/g, "");
}

// ---------------------------------------------------------------------------
// Skills and prompt templates

function registerResources(pi: ExtensionAPI, tree: Tree): void {
	const fromManifest = manifestSkillsHook();
	pi.on("resources_discover", async (_event, ctx) => {
		if (!tree.present()) {
			notify(ctx, `Loadout: no materialized context at ${tree.dir}; Pi starts without the Workspace's skills and templates`, "error");
			return {};
		}
		const gen = tree.generation();
		const skillsDir = join(gen, "skills");
		if (fromManifest && isAbsolute(skillsDir)) {
			const skills = winnersFromManifest(tree, gen);
			if (skills) manifestSkills.set(tree.dir, { skillsDir: resolve(skillsDir), skills });
			else manifestSkills.delete(tree.dir);
		}
		return { skillPaths: [skillsDir], promptPaths: [join(gen, "prompts")] };
	});
}

// Start-up from the manifest. Pi's loader reads and parses every SKILL.md of
// a skill path to learn each skill's name and description, which is most of
// Pi's start-up on a large Workspace; the manifest of the same generation
// already lists the winners with both (its catalog), and the tree puts each
// at skills/NAME/SKILL.md. Pi 0.73 gives an extension no way to hand it
// skills (resources_discover takes paths only), so the package wraps the
// loader's method that turns skill paths into skills: a path that is a
// Loadout generation's skills directory becomes the manifest's winners, with
// the same name, description, file and directory Pi's scan would give; any
// other path is still scanned by Pi. Pi reads a SKILL.md only when the skill
// is used. Where the loader is not what the wrapper expects (another Pi),
// or the manifest and the tree disagree, Pi scans the tree as before.

const wrapped = Symbol.for("loadout.dev/pi-manifest-skills");

/**
 * The winners to give Pi, by tree: the skills directory handed to Pi and its
 * skills. One map per process (Pi loads this module anew for every session,
 * and the wrapper is installed once), kept on globalThis.
 */
const manifestSkills: Map<string, { skillsDir: string; skills: Skill[] }> = ((globalThis as any)[wrapped] ??= new Map());

/** Wraps DefaultResourceLoader's skill loading once per process; false when Pi has no such method. */
function manifestSkillsHook(): boolean {
	const proto = (DefaultResourceLoader as any)?.prototype;
	if (!proto || typeof proto.updateSkillsFromPaths !== "function") return false;
	if (proto[wrapped]) return true;
	const original = proto.updateSkillsFromPaths;
	proto.updateSkillsFromPaths = function (this: any, skillPaths: string[], ...rest: unknown[]) {
		const given: Skill[][] = [];
		const scanned: string[] = [];
		for (const p of skillPaths) {
			const entry = [...manifestSkills.values()].find((e) => e.skillsDir === resolve(p));
			if (entry) given.push(entry.skills);
			else scanned.push(p);
		}
		if (given.length === 0) return original.call(this, skillPaths, ...rest);
		// Pi scans the other paths; its own result then gains the manifest's
		// winners (a name those paths already give wins: an extension's path
		// comes after the CLI's and the settings', so Pi's order holds), and
		// goes through the rest of Pi's method: an SDK skillsOverride, and
		// each skill's source info from the extension that gave the path.
		const override = this.skillsOverride;
		this.skillsOverride = (base: { skills: Skill[]; diagnostics: any[] }) => {
			const skills = [...base.skills];
			const diagnostics = [...base.diagnostics];
			const names = new Map(skills.map((s) => [s.name, s]));
			for (const s of given.flat()) {
				const winner = names.get(s.name);
				if (winner) {
					diagnostics.push({ type: "collision", message: `name "${s.name}" collision`, path: s.filePath, collision: { resourceType: "skill", name: s.name, winnerPath: winner.filePath, loserPath: s.filePath } });
					continue;
				}
				names.set(s.name, s);
				skills.push({ ...s });
			}
			const merged = { skills, diagnostics };
			return override ? override(merged) : merged;
		};
		try {
			original.call(this, scanned, ...rest);
		} finally {
			this.skillsOverride = override;
		}
		// A Pi whose method no longer ends in skillsOverride: let it scan.
		const first = given.flat()[0];
		if (first && !this.skills?.some((s: Skill) => s.name === first.name)) original.call(this, skillPaths, ...rest);
	};
	proto[wrapped] = true;
	return true;
}

/**
 * The winners of a generation as Pi's loader would make them from
 * skills/NAME/SKILL.md, from the manifest's catalog and one listing of
 * skills/ (no SKILL.md is read). undefined when the two disagree: Pi then
 * scans the tree itself.
 */
export function winnersFromManifest(tree: Tree, gen: string): Skill[] | undefined {
	let catalog: NonNullable<Manifest["catalog"]>;
	let dirs: string[];
	try {
		catalog = (tree.manifest(gen).catalog ?? []).filter((e) => e.kind === "skill");
		dirs = readdirSync(join(gen, "skills"));
	} catch {
		return undefined;
	}
	const listed = new Set(catalog.map((e) => e.name));
	const skillsDir = resolve(gen, "skills");
	if (dirs.length !== listed.size || !dirs.every((d) => listed.has(d))) return undefined;
	const skills: Skill[] = [];
	for (const e of catalog) {
		// Pi leaves out a skill without a description (Loadout publishes none).
		if (!e.description?.trim()) continue;
		const baseDir = `${skillsDir}/${e.name}`; // a listed directory's name: no separator, no dots
		const filePath = `${baseDir}/SKILL.md`;
		skills.push({
			name: e.name,
			description: e.description,
			filePath,
			baseDir,
			// As Pi's scan makes it; Pi's loader then puts the extension's own in its place.
			sourceInfo: createSyntheticSourceInfo(filePath, { source: "local", baseDir }),
			// Loadout lists every skill (disable-model-invocation is not part of its contract).
			disableModelInvocation: false,
		});
	}
	return skills;
}

// ---------------------------------------------------------------------------
// System prompt: the platform's text, and the tenants' in the project section

/** The Workspace's texts, cached per generation. */
let promptCache: { gen: string; text: string; project: string } | undefined;

function readPrompts(tree: Tree, gen: string): { text: string; project: string } {
	if (promptCache?.gen === gen) return promptCache;
	// Written by hostd (internal/materialize), composed once in Go for every
	// agent from the manifest's provenance; the package adds them as they
	// are and parses no Markdown. workspace-prompt.md is the platform's text
	// only (its instructions and active skills, its extensions' prompt
	// guides, the denied tools), the same as Claude Code's managed CLAUDE.md;
	// project-prompt.md is the tenants' text, each part under a heading
	// naming its namespace and saying it is project content.
	const text = trimNewlines(tree.read(gen, "workspace-prompt.md"));
	let project = "";
	if (existsSync(join(gen, "project-prompt.md"))) project = trimNewlines(tree.read(gen, "project-prompt.md"));
	promptCache = { gen, text, project };
	return promptCache;
}

/** The platform's part of the system prompt (workspace-prompt.md). */
export function workspacePrompt(tree: Tree, gen: string): string {
	return readPrompts(tree, gen).text;
}

/** The tenants' part (project-prompt.md): project content, never policy. */
export function projectPrompt(tree: Tree, gen: string): string {
	return readPrompts(tree, gen).project;
}

/** Pi's project section and the line that opens its list (Pi's buildSystemPrompt). */
const projectSection = "# Project Context\n\nProject-specific instructions and guidelines:\n\n";

/**
 * Puts the tenants' text in Pi's project section, where Pi puts the
 * project's own AGENTS.md files: at the top of that section, or in a new one
 * where Pi would have put it (before its skill list and the closing date
 * line). The platform's text is appended after Pi's own prompt.
 */
export function withProjectContent(systemPrompt: string, project: string): string {
	if (!project) return systemPrompt;
	const i = systemPrompt.indexOf("\n\n" + projectSection);
	if (i >= 0) {
		const at = i + 2 + projectSection.length;
		return systemPrompt.slice(0, at) + project + "\n\n" + systemPrompt.slice(at);
	}
	let at = systemPrompt.indexOf("\n\nThe following skills provide specialized instructions");
	if (at < 0) at = systemPrompt.lastIndexOf("\nCurrent date: ");
	if (at < 0) at = systemPrompt.length;
	return systemPrompt.slice(0, at) + "\n\n" + projectSection + project + "\n\n" + systemPrompt.slice(at);
}

function registerSystemPrompt(pi: ExtensionAPI, tree: Tree, session?: SessionHooks): void {
	pi.on("before_agent_start", async (event, ctx) => {
		// Context the lifecycle hooks added (SessionStart, UserInput,
		// BeforeAgentStart) joins this turn as a message the model reads
		// and the session keeps.
		const context = session?.takeContext();
		const message = context ? { message: { customType: contextMessageType, content: context, display: false } } : {};
		if (!tree.present()) return context ? message : undefined;
		let platform: string;
		let project: string;
		try {
			({ text: platform, project } = readPrompts(tree, tree.generation()));
		} catch (err: any) {
			notify(ctx, `Loadout: reading the Workspace context in ${tree.dir}: ${err?.message ?? err}`, "error");
			return context ? message : undefined;
		}
		if (!platform && !project) return context ? message : undefined;
		let systemPrompt = withProjectContent(event.systemPrompt, project);
		if (platform) systemPrompt += "\n\n" + platform + "\n";
		return { ...message, systemPrompt };
	});
}

// ---------------------------------------------------------------------------
// Tool calls: hostd decides, failing closed

/** A tool call as hostd's hooks see it. */
type GateCall = { id: string; name: string; arguments: Record<string, unknown> };

/** hostd's before verdict on a call: blocked with a reason, or allowed with the arguments to run (rewritten or not). */
type BeforeVerdict = { block: string } | { arguments: Record<string, unknown>; afterHooks: boolean };

/**
 * Asks hostd whether a call of one of Pi's own tools may run (POST
 * /v1/before), failing closed: no answer, or one without a verdict, blocks.
 * An ask goes to the user (none headless: no). Rewritten arguments are
 * checked against the tool's own schema, since Pi does not re-validate them.
 */
async function askBefore(pi: ExtensionAPI, hostd: Hostd, ctx: ExtensionContext, call: GateCall): Promise<BeforeVerdict> {
	// headless: with no UI to ask, an imposed hook's ask may go to the
	// cluster's approvers instead (docs/hooks.md, "Approvals").
	const answer = await hostd.post("/v1/before", { call, acceptArguments: true, headless: !ctx.hasUI, ...where(ctx) });
	if (!answer.ok) {
		return { block: `Loadout blocked ${call.name}: ${answer.why}; tool calls fail closed without hostd's answer.` };
	}
	const body = answer.body;
	if (typeof body?.allowed !== "boolean") {
		return { block: `Loadout blocked ${call.name}: hostd's answer has no "allowed" verdict; tool calls fail closed.` };
	}
	const reason = texts(body.result?.content) || `hostd denied ${call.name} without a reason`;
	if (!body.allowed && !(body.ask && (await confirm(ctx, reason)))) {
		return { block: reason };
	}
	const afterHooks = body.afterHooks !== false;
	if (!body.arguments || typeof body.arguments !== "object") return { arguments: call.arguments, afterHooks };
	const tool = pi.getAllTools().find((t) => t.name === call.name);
	if (tool) {
		try {
			validateToolArguments(tool as any, { type: "toolCall", id: call.id, name: call.name, arguments: body.arguments } as any);
		} catch (err: any) {
			return { block: `Loadout blocked ${call.name}: hooks rewrote its arguments into ones its input schema refuses: ${err?.message ?? err}` };
		}
	}
	return { arguments: body.arguments, afterHooks };
}

/**
 * Sends a result of one of Pi's own tools to the after hooks (POST
 * /v1/after). They observe; the tool already ran, so its result stands.
 * Nothing is silent: a failure to run them, and every diagnostic they report
 * (an error, a timeout, an audit note), is shown to the user and counted, as
 * Claude Code and Codex show them as a systemMessage.
 */
async function tellAfter(hostd: Hostd, ctx: ExtensionContext, call: GateCall, result: { isError: boolean; content: unknown; details?: unknown }): Promise<void> {
	const answer = await hostd.post("/v1/after", {
		call,
		result: { toolCallId: call.id, toolName: call.name, isError: result.isError, content: result.content, details: result.details ?? {} },
		...where(ctx),
	});
	if (!answer.ok) {
		afterHookProblems.failures++;
		reportAfter(ctx, `Loadout: after hooks for ${call.name} did not run: ${answer.why}`);
		return;
	}
	const diagnostics = Array.isArray(answer.body?.diagnostics) ? answer.body.diagnostics : [];
	if (diagnostics.length > 0) {
		afterHookProblems.diagnostics += diagnostics.length;
		const lines = diagnostics.map((d: any) => `${d?.extensionId}/${d?.hook} ${d?.kind}: ${d?.message}`);
		reportAfter(ctx, `Loadout after hooks for ${call.name}: ${lines.join("; ")}`);
	}
}

/**
 * The gate: every call Pi makes is asked of hostd first. newSandbox, set in
 * a session that started without a sandbox, reads the context's current
 * one: once a context declares a sandbox, bash, write and edit are refused
 * until a new session runs them through it (fail closed).
 */
function registerToolGate(pi: ExtensionAPI, hostd: Hostd, runnable: Set<string>, newSandbox?: () => SandboxDecl | undefined): void {
	// Calls whose before answer said no after hook observes their tool
	// (afterHooks: false): their results are not sent to POST /v1/after,
	// which would run nothing. Bounded, for calls whose result never comes.
	const unobserved = new Set<string>();
	pi.on("tool_call", async (event, ctx) => {
		// hostd runs a runnable tool's hooks itself, inside /v1/tools/{name}.
		if (runnable.has(event.toolName)) return undefined;
		if (newSandbox && sandboxedNames.includes(event.toolName) && newSandbox()) {
			return { block: true, reason: "Loadout: the context now declares a sandbox this session does not run under; start a new session" };
		}
		const verdict = await askBefore(pi, hostd, ctx, { id: event.toolCallId, name: event.toolName, arguments: event.input ?? {} });
		if ("block" in verdict) return { block: true, reason: verdict.block };
		const input = event.input as Record<string, unknown>;
		if (verdict.arguments !== input) {
			// Pi runs event.input as it is after this handler.
			for (const k of Object.keys(input)) delete input[k];
			Object.assign(input, verdict.arguments);
		}
		if (!verdict.afterHooks) {
			if (unobserved.size >= 1024) unobserved.delete(unobserved.values().next().value as string);
			unobserved.add(event.toolCallId);
		}
		return undefined;
	});

	pi.on("tool_result", async (event, ctx) => {
		if (runnable.has(event.toolName) || unobserved.delete(event.toolCallId)) return undefined;
		await tellAfter(hostd, ctx, { id: event.toolCallId, name: event.toolName, arguments: event.input ?? {} }, event);
		return undefined;
	});
}

/**
 * What the after hooks did not do quietly in this process: calls whose
 * after hooks did not run (hostd unreachable, an error answer) and the
 * diagnostics they reported. Shown in Pi's status line as they change.
 */
export const afterHookProblems = { failures: 0, diagnostics: 0 };

function reportAfter(ctx: ExtensionContext, message: string): void {
	notify(ctx, message, "warning");
	if (ctx.hasUI) {
		const { failures, diagnostics } = afterHookProblems;
		ctx.ui.setStatus("loadout-after-hooks", `Loadout after hooks: ${failures} not run, ${diagnostics} diagnostics`);
	}
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
		if (!t.service && !t.mcp) continue;
		names.add(t.name);
		const description = t.description || t.name;
		pi.registerTool({
			name: t.name,
			label: t.name,
			description,
			promptSnippet: description,
			parameters: (t.inputSchema ?? { type: "object" }) as any,
			// A serial tool (hostd runs one call of it at a time) is not
			// started next to another call of the same message either.
			executionMode: t.executionMode === "serial" ? "sequential" : undefined,
			execute: (toolCallId, params, _signal, _onUpdate, ctx) => runThroughHostd(hostd, ctx, t.name, toolCallId, params ?? {}),
		});
	}
	return names;
}

/**
 * Runs a runnable tool through hostd (POST /v1/tools/{name}), hooks and all:
 * the result as Pi takes it, or an Error with the reason a refused, invalid,
 * blocked or failed call (or no answer) gives.
 */
async function runThroughHostd(hostd: Hostd, ctx: ExtensionContext, name: string, id: string, args: unknown): Promise<{ content: any[]; details: any }> {
	const answer = await hostd.post(`/v1/tools/${encodeURIComponent(name)}`, { call: { id, arguments: args }, ...where(ctx) });
	if (!answer.ok) {
		throw new Error(`Loadout could not run ${name}: ${answer.why}`);
	}
	const result = answer.body?.result;
	const text = texts(result?.content);
	if (!result || result.isError) {
		throw new Error(text || `${name} failed without a reason`);
	}
	const content = (Array.isArray(result.content) ? result.content : []).map(piContent).filter((c: any) => c !== undefined);
	return { content, details: result.details ?? {} };
}

/**
 * A result block as Pi takes it: text and images as they are; an MCP
 * server's resource link or embedded text resource as text naming its URI
 * (Pi has no block for them); audio and binary resources are dropped.
 */
function piContent(c: any): any {
	switch (c?.type) {
		case "text":
		case "image":
			return c;
		case "resource_link":
			return { type: "text", text: `${c.text || "resource"}: ${c.uri}` };
		case "resource":
			return c.text ? { type: "text", text: `${c.uri}:\n${c.text}` } : undefined;
	}
	return undefined;
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

/** Renders a template slash command through hostd, running a command's steps: the text to send, "handled" when an error was shown, or undefined for other input. */
async function renderCommand(text: string, tree: Tree, hostd: Hostd, ctx: ExtensionContext, steps: StepRunner): Promise<string | "handled" | undefined> {
	const m = /^\/([a-z0-9][a-z0-9-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
	if (!m || !tree.present()) return undefined;
	let manifest: Manifest;
	try {
		manifest = tree.manifest(tree.generation());
	} catch {
		return undefined;
	}
	const command = (manifest.commands ?? []).find((c) => c.name === m[1]);
	if (!command) return undefined;
	const variables = (manifest.templates ?? []).find((t) => t.name === command.template)?.variables ?? [];
	const args = templateArgs(variables, splitArgs(m[2] ?? ""));
	const answer = await hostd.post("/v1/render", { template: command.template, args });
	if (!answer.ok) {
		notify(ctx, `/${command.name}: ${answer.why}`, "error");
		return "handled";
	}
	const plan: PlannedStep[] = Array.isArray(answer.body?.steps) ? answer.body.steps : [];
	if (plan.some((s) => s?.tool)) return steps.run(ctx, command.name, plan);
	const rendered = texts(answer.body?.content);
	if (!rendered) {
		notify(ctx, `/${command.name}: hostd rendered no text`, "error");
		return "handled";
	}
	return rendered;
}

// ---------------------------------------------------------------------------
// Command steps: each tool through the hooks, in order

/** One step of a command's plan as hostd's /v1/render answers it: a tool call with its arguments filled, or a rendered template. */
type PlannedStep = { tool?: string; arguments?: Record<string, unknown>; template?: string; text?: string };

// ---------------------------------------------------------------------------
// The declared sandbox (sandbox.ts)

/** Builds the sandboxed twins of Pi's bash, write and edit for a cwd. */
type SandboxedTools = (cwd: string) => Record<string, ToolDefinition<any, any>>;

/**
 * When the context declares a sandbox, Pi's bash, write and edit tools are
 * replaced by twins that run through `loadout sandbox` (sandbox.ts), built
 * for each call's cwd; the gate asks hostd about them as about Pi's own.
 * Tools are registered at start-up: a context that adds or drops the
 * sandbox needs a new session, and `loadout sandbox` reads the sandbox from
 * the mounted context at each call, so a narrowed one holds at once.
 */
function registerSandbox(pi: ExtensionAPI, tree: Tree): SandboxedTools | undefined {
	const s = declaredSandbox(tree);
	if (!s) return undefined;
	const cfg = sandboxConfigFromEnv();
	const build: SandboxedTools = (cwd) => sandboxedTools(cfg, s, cwd);
	for (const def of Object.values(build(process.cwd()))) {
		pi.registerTool({
			...def,
			execute: (id, params, signal, onUpdate, ctx) => build(ctx?.cwd ?? process.cwd())[def.name].execute(id, params, signal, onUpdate, ctx),
		});
	}
	return build;
}

/** The sandbox the tree's current context declares, if any. */
function declaredSandbox(tree: Tree): SandboxDecl | undefined {
	try {
		return tree.manifest(tree.generation()).sandbox;
	} catch {
		return undefined;
	}
}

/** Pi's tools that run or write on the machine, which a declared sandbox holds. */
const sandboxedNames = ["bash", "write", "edit"];

/** Pi's own tools a step may run, built as Pi builds them for the session's cwd. */
const builtinTools: Record<string, (cwd: string) => ToolDefinition<any, any>> = {
	bash: createBashToolDefinition,
	read: createReadToolDefinition,
	write: createWriteToolDefinition,
	edit: createEditToolDefinition,
	grep: createGrepToolDefinition,
	find: createFindToolDefinition,
	ls: createLsToolDefinition,
};

/**
 * Runs a command's steps in order. A runnable tool runs through hostd (POST
 * /v1/tools/{name}, which runs its hooks); one of Pi's own tools is asked of
 * hostd first (POST /v1/before, the gate Pi's tool calls take), runs as Pi
 * runs it, and its result goes to the after hooks. The first step that is
 * blocked, invalid or fails stops the command with its reason and nothing
 * reaches the model. Otherwise the message is each step's part in order: a
 * tool's result under a line naming it, a render step's text.
 */
export class StepRunner {
	constructor(
		private readonly pi: ExtensionAPI,
		private readonly hostd: Hostd,
		private readonly runnable: Set<string>,
		private readonly sandboxed?: SandboxedTools,
	) {}

	async run(ctx: ExtensionContext, command: string, plan: PlannedStep[]): Promise<string | "handled"> {
		const parts: string[] = [];
		for (const [i, step] of plan.entries()) {
			if (!step?.tool) {
				if (step?.text) parts.push(step.text);
				continue;
			}
			const args = step.arguments && typeof step.arguments === "object" && !Array.isArray(step.arguments) ? step.arguments : {};
			let output: string;
			try {
				output = await this.runTool(ctx, step.tool, args);
			} catch (err: any) {
				notify(ctx, `/${command}: step ${i + 1} (${step.tool}) stopped the command: ${err?.message ?? err}`, "error");
				return "handled";
			}
			parts.push(`Result of ${step.tool}:\n${output.replace(/\n+$/, "")}`);
		}
		if (parts.length === 0) {
			notify(ctx, `/${command}: its steps ran and made no message`, "info");
			return "handled";
		}
		return parts.join("\n\n");
	}

	/** Runs one tool step through the hooks: its result's text, or an Error with why it did not run or failed. */
	private async runTool(ctx: ExtensionContext, name: string, args: Record<string, unknown>): Promise<string> {
		const id = `loadout-step-${randomUUID()}`;
		if (this.runnable.has(name)) return texts((await runThroughHostd(this.hostd, ctx, name, id, args)).content);
		// Only Pi's own tool, active in this session: a tool another extension
		// registered under the name runs its own code, which a step cannot call.
		const info = this.pi.getAllTools().find((t) => t.name === name);
		// Under a declared sandbox, bash, write and edit are this package's
		// sandboxed twins (registerSandbox), and a step runs them too.
		const twin = this.sandboxed ? (cwd: string) => this.sandboxed!(cwd)[name] : undefined;
		const ours = twin !== undefined && sandboxedNames.includes(name);
		const build = ours ? twin : builtinTools[name];
		if (!build || (!ours && info?.sourceInfo?.source !== "builtin") || !this.pi.getActiveTools().includes(name)) {
			throw new Error(`${name} is not a tool this Pi session runs`);
		}
		validateToolArguments(info as any, { type: "toolCall", id, name, arguments: args } as any);
		const verdict = await askBefore(this.pi, this.hostd, ctx, { id, name, arguments: args });
		if ("block" in verdict) throw new Error(verdict.block);
		const call = { id, name, arguments: verdict.arguments };
		let result: { content: any[]; details?: unknown };
		try {
			result = await build(ctx.cwd).execute(id, verdict.arguments, ctx.signal, undefined, ctx);
		} catch (err: any) {
			const why = err?.message ?? String(err);
			if (verdict.afterHooks) await tellAfter(this.hostd, ctx, call, { isError: true, content: [{ type: "text", text: why }] });
			throw new Error(why);
		}
		if (verdict.afterHooks) await tellAfter(this.hostd, ctx, call, { isError: false, content: result.content, details: result.details });
		return texts(result.content);
	}
}

/**
 * Pi's input event, in order: a session a SessionStart hook refused takes no
 * prompt; UserInput hooks see the text as typed (and may deny, ask, replace
 * it or add context); a template command renders; BeforeAgentStart hooks
 * see the prompt as it will be sent. Pi's before_agent_start cannot stop a
 * turn, so BeforeAgentStart runs here, last. A denial (or a question nobody
 * answers) shows its message and nothing reaches the model.
 */
function registerPrompts(pi: ExtensionAPI, tree: Tree, hostd: Hostd, session: SessionHooks, steps: StepRunner): void {
	pi.on("input", async (event, ctx) => {
		if (session.refused !== undefined) {
			notify(ctx, `Loadout: this session is refused: ${session.refused}`, "error");
			return { action: "handled" };
		}
		const contexts: string[] = [];
		let text = event.text;
		const user = await session.run(ctx, "UserInput", { prompt: { text, source: event.source } });
		if (!user) return { action: "handled" };
		if (typeof user.input === "string") text = user.input;
		if (user.context) contexts.push(user.context);
		session.keepMessages(user.messages);
		const rendered = await renderCommand(text, tree, hostd, ctx, steps);
		if (rendered === "handled") return { action: "handled" };
		if (rendered !== undefined) text = rendered;
		const start = await session.run(ctx, "BeforeAgentStart", { prompt: { text, source: event.source } });
		if (!start) return { action: "handled" };
		if (typeof start.input === "string") text = start.input;
		if (start.context) contexts.push(start.context);
		session.keepMessages(start.messages);
		session.addContext(...contexts);
		// Typed messages join the session with this prompt, each a custom
		// message of its type (the context event projects them).
		for (const m of session.takeTyped()) {
			pi.sendMessage({ customType: m.type, content: m.content, display: true, details: { extension: m.extension } }, { deliverAs: "nextTurn" });
		}
		// A prompt of the user's (not a Stop hook's) starts the agent's work anew.
		if (event.source !== "extension") {
			session.stopActive = false;
			session.stopContinuations = 0;
		}
		return text === event.text ? { action: "continue" } : { action: "transform", text };
	});
}

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Lifecycle hooks: hostd's /v1/events/{event}

/** How many stops in a row Stop hooks may deny before the agent stops anyway. */
export const maxStopContinuations = 8;

/** The custom message type that carries the hooks' context to the model. */
const contextMessageType = "loadout.context";

/** Per-session state of the lifecycle hooks. */
export class SessionHooks {
	/** Why a SessionStart hook refused the session; undefined while it is not refused. */
	refused: string | undefined;
	/** The agent goes on because a Stop hook denied its last stop (stop.active). */
	stopActive = false;
	/** How many stops in a row Stop hooks denied since the user's last prompt. */
	stopContinuations = 0;
	private pending: string[] = [];
	private typed: TypedMessage[] = [];
	private eventsCache: { gen: string; events: Set<string> } | undefined;

	constructor(
		private readonly tree: Tree,
		private readonly hostd: Hostd,
	) {}

	/** The events the current context has hooks for: others are not asked. */
	hooked(event: string): boolean {
		// Without the tree nothing says an event has no hooks: hostd decides.
		if (!this.tree.present()) return true;
		try {
			const gen = this.tree.generation();
			if (this.eventsCache?.gen !== gen) {
				this.eventsCache = { gen, events: new Set((this.tree.manifest(gen).hooks ?? []).map((h) => h.event)) };
			}
			return this.eventsCache.events.has(event);
		} catch {
			// A context that cannot be read cannot say an event has no hooks.
			return true;
		}
	}

	/**
	 * Runs an event's hooks. Returns hostd's answer when the event may go on
	 * (allowed, or an ask the user said yes to); undefined when it must not,
	 * after telling the user why. No answer from hostd stops a blocking event.
	 */
	async run(ctx: ExtensionContext, event: string, body: Record<string, unknown>): Promise<EventAnswer | undefined> {
		if (!this.hooked(event)) return {};
		const answer = await this.hostd.post(`/v1/events/${event}`, { ...where(ctx), ...body });
		if (!answer.ok) {
			notify(ctx, `Loadout: ${event} hooks did not answer (${answer.why}); stopped, since they fail closed`, "error");
			return undefined;
		}
		const a = answer.body;
		if (a?.allowed === true) return a;
		const message = typeof a?.message === "string" && a.message ? a.message : `${event} was denied without a reason`;
		if (a?.ask === true && (await confirm(ctx, message))) return a;
		notify(ctx, `Loadout: ${message}`, "error");
		return undefined;
	}

	session(ctx: ExtensionContext): { id?: string; reason?: string; agent: string } {
		return where(ctx).session;
	}

	/** POSTs to hostd whether or not the event has hooks (the caller checked). */
	hostdPost(path: string, body: unknown) {
		return this.hostd.post(path, body);
	}

	/** Keeps typed messages hooks emitted, for the session (takeTyped). */
	keepMessages(messages: unknown): void {
		if (!Array.isArray(messages)) return;
		for (const m of messages) {
			if (m && typeof m.type === "string" && typeof m.content === "string") this.typed.push({ type: m.type, content: m.content, extension: m.extension });
		}
	}

	/** The typed messages gathered since the last turn, once. */
	takeTyped(): TypedMessage[] {
		const out = this.typed;
		this.typed = [];
		return out;
	}

	/**
	 * Runs an observing event's hooks (TurnStart, TurnEnd,
	 * AfterModelResponse): nothing waits on them to go on, and what they
	 * report (a failure, an audit note) is shown and counted as the after
	 * hooks' is.
	 */
	async observe(ctx: ExtensionContext, event: string, body: Record<string, unknown>): Promise<void> {
		if (!this.hooked(event)) return;
		const answer = await this.hostd.post(`/v1/events/${event}`, { ...where(ctx), ...body });
		if (!answer.ok) {
			afterHookProblems.failures++;
			reportAfter(ctx, `Loadout: ${event} hooks did not run: ${answer.why}`);
			return;
		}
		const diagnostics = Array.isArray(answer.body?.diagnostics) ? answer.body.diagnostics : [];
		if (diagnostics.length > 0) {
			afterHookProblems.diagnostics += diagnostics.length;
			reportAfter(ctx, `Loadout ${event} hooks: ${diagnostics.map((d: any) => `${d?.extensionId}/${d?.hook} ${d?.kind}: ${d?.message}`).join("; ")}`);
		}
	}

	addContext(...texts: string[]): void {
		this.pending.push(...texts.filter((t) => t));
	}

	/** The context gathered since the last turn, once. */
	takeContext(): string {
		const out = this.pending.join("\n\n");
		this.pending = [];
		return out;
	}
}

/** hostd's answer to an event the agent goes on from. */
interface EventAnswer {
	input?: string;
	context?: string;
	summary?: string;
	messages?: unknown;
}

/** A typed message a hook emitted (the customMessage outcome). */
interface TypedMessage {
	type: string;
	content: string;
	extension?: string;
}

/** Where a call or event happens, as every hook sees it: the session (agent pi) and Pi's cwd. */
export function where(ctx: ExtensionContext): { session: { id?: string; agent: string }; cwd?: string } {
	let id: string | undefined;
	try {
		id = ctx.sessionManager?.getSessionId();
	} catch {}
	let cwd: string | undefined;
	try {
		cwd = ctx.cwd;
	} catch {}
	return { session: { id, agent: "pi" }, cwd };
}

/** Asks the user; a run without a UI (headless) answers no. */
async function confirm(ctx: ExtensionContext, message: string): Promise<boolean> {
	if (!ctx.hasUI) return false;
	try {
		return (await ctx.ui.confirm("Loadout", message)) === true;
	} catch {
		return false;
	}
}

function registerSessionEvents(pi: ExtensionAPI, hostd: Hostd, session: SessionHooks): void {
	pi.on("session_start", async (event, ctx) => {
		session.refused = undefined;
		session.takeContext();
		if (!session.hooked("SessionStart")) return;
		const answer = await hostd.post("/v1/events/SessionStart", { ...where(ctx), session: { ...session.session(ctx), reason: event.reason } });
		if (!answer.ok) {
			session.refused = `SessionStart hooks did not answer (${answer.why})`;
		} else if (answer.body?.allowed !== true) {
			session.refused = answer.body?.message || "a SessionStart hook denied the session";
		} else {
			if (answer.body.context) session.addContext(answer.body.context);
			session.keepMessages(answer.body.messages);
		}
		if (session.refused !== undefined) notify(ctx, `Loadout: this session is refused: ${session.refused}`, "error");
	});

	pi.on("session_before_compact", async (event, ctx) => {
		const ok = await session.run(ctx, "BeforeCompact", {});
		if (!ok) return { cancel: true };
		if (typeof ok.summary !== "string") return undefined;
		// A hook's summary is what Pi keeps, in place of the one its model
		// would write; the entries Pi would keep stay.
		const { firstKeptEntryId, tokensBefore } = event.preparation;
		return { compaction: { summary: ok.summary, firstKeptEntryId, tokensBefore, details: { loadout: "BeforeCompact" } } };
	});

	pi.on("session_shutdown", async (event, ctx) => {
		if (!session.hooked("SessionEnd")) return;
		const answer = await hostd.post("/v1/events/SessionEnd", { ...where(ctx), session: { ...session.session(ctx), reason: event.reason } });
		if (!answer.ok) console.error(`Loadout: SessionEnd hooks did not run: ${answer.why}`);
	});
}

// ---------------------------------------------------------------------------
// Turn, model and stop events

/** The text of a message's content: a string, or its text blocks. */
function messageText(m: any): string {
	return typeof m?.content === "string" ? m.content : texts(m?.content);
}

function registerTurnEvents(pi: ExtensionAPI, session: SessionHooks): void {
	pi.on("turn_start", async (event, ctx) => {
		await session.observe(ctx, "TurnStart", { turn: { index: event.turnIndex } });
	});
	pi.on("turn_end", async (event, ctx) => {
		const toolCalls = Array.isArray(event.toolResults) ? event.toolResults.length : 0;
		await session.observe(ctx, "TurnEnd", { turn: { index: event.turnIndex, text: messageText(event.message), toolCalls } });
	});
	pi.on("message_end", async (event, ctx) => {
		const m: any = event.message;
		if (m?.role !== "assistant") return undefined;
		await session.observe(ctx, "AfterModelResponse", {
			model: { provider: m.provider, id: m.model },
			response: { text: messageText(m), stopReason: m.stopReason },
		});
		return undefined;
	});

	// Before each model request. Pi's context event cannot refuse the
	// request, so a denial (or no answer: the event fails closed) aborts the
	// agent's work, and the user is told; context joins this request only.
	pi.on("context", async (event, ctx) => {
		if (!session.hooked("BeforeModelRequest")) return undefined;
		const model = ctx.model ? { provider: ctx.model.provider, id: ctx.model.id } : {};
		const answer = await session.run(ctx, "BeforeModelRequest", { model });
		if (!answer) {
			ctx.abort();
			return undefined;
		}
		if (!answer.context) return undefined;
		return { messages: [...event.messages, { role: "custom", customType: contextMessageType, content: answer.context, display: false, timestamp: Date.now() } as any] };
	});

	// The agent is about to stop: a Stop hook's denial sends its message as
	// the next prompt, and stop.active tells the hooks the agent is going on
	// because of one. A failure lets the agent stop: a broken hook must
	// never keep it running; nor may one that denies every stop, so after
	// maxStopContinuations in a row the agent stops and the user is told.
	pi.on("agent_end", async (event, ctx) => {
		if (!session.hooked("Stop")) return;
		if (session.stopContinuations >= maxStopContinuations) {
			notify(ctx, `Loadout: Stop hooks kept the agent going ${maxStopContinuations} times in a row; it stops here`, "warning");
			return;
		}
		const last = [...(event.messages ?? [])].reverse().find((m: any) => m?.role === "assistant");
		const answer = await session.hostdPost("/v1/events/Stop", { ...where(ctx), stop: { active: session.stopActive, lastMessage: messageText(last) } });
		if (!answer.ok) {
			notify(ctx, `Loadout: the Stop hooks did not run (${answer.why}); the agent stops`, "warning");
			return;
		}
		if (answer.body?.allowed !== false) return;
		const message = typeof answer.body?.message === "string" && answer.body.message ? answer.body.message : "a Stop hook asks the agent to go on";
		session.stopActive = true;
		session.stopContinuations++;
		pi.sendUserMessage(message, { deliverAs: "followUp" });
	});
}

// ---------------------------------------------------------------------------
// Custom message types: what stays out of the model's context

/**
 * Drops custom messages whose type the context publishes with inContext:
 * false from every model request. They stay in the session (for the user
 * and for extensions), they just never reach the model.
 */
function registerContextFilter(pi: ExtensionAPI, tree: Tree): void {
	type Rule = { inContext: boolean; template?: string };
	type Projection = {
		// By extension and type: a hook's typed message follows the
		// declaration of the extension that emitted it (details.extension),
		// so another extension declaring the same type name can neither hide
		// it from the model nor change how it reads.
		byExtension: Map<string, Rule>;
		// By type alone, for custom messages that name no extension: hidden
		// if any extension hides the type, a template only if one extension
		// declares the type.
		hidden: Set<string>;
		templates: Map<string, string>;
	};
	let cache: { gen: string; projection: Projection } | undefined;
	// undefined: the context cannot be read, so no custom type is known to
	// be in context, and only Loadout's own messages pass.
	const projection = (): Projection | undefined => {
		if (!tree.present()) return { byExtension: new Map(), hidden: new Set(), templates: new Map() };
		try {
			const gen = tree.generation();
			if (cache?.gen !== gen) {
				const types = tree.manifest(gen).messageTypes ?? [];
				const declared = new Map<string, number>();
				for (const t of types) declared.set(t.type, (declared.get(t.type) ?? 0) + 1);
				cache = {
					gen,
					projection: {
						byExtension: new Map(types.map((t) => [ruleKey(t.extension, t.type), { inContext: !!t.inContext, template: t.template }])),
						hidden: new Set(types.filter((t) => !t.inContext).map((t) => t.type)),
						templates: new Map(types.filter((t) => t.inContext && t.template && declared.get(t.type) === 1).map((t) => [t.type, t.template as string])),
					},
				};
			}
			return cache.projection;
		} catch {
			return cache?.projection;
		}
	};
	pi.on("context", async (event) => {
		const p = projection();
		if (p && p.byExtension.size === 0) return undefined;
		let changed = false;
		const messages: any[] = [];
		for (const m of event.messages as any[]) {
			if (m?.role !== "custom" || m.customType === contextMessageType) {
				messages.push(m);
				continue;
			}
			if (!p) {
				changed = true; // unreadable context: only Loadout's own messages pass
				continue;
			}
			const ext = typeof m.details?.extension === "string" ? m.details.extension : undefined;
			const rule = ext !== undefined ? p.byExtension.get(ruleKey(ext, m.customType)) : undefined;
			const hidden = rule ? !rule.inContext : p.hidden.has(m.customType);
			const template = rule ? (rule.inContext ? rule.template : undefined) : p.templates.get(m.customType);
			if (hidden) {
				changed = true;
				continue;
			}
			if (template) {
				changed = true;
				messages.push({ ...m, content: renderMessage(template, messageText(m)) });
				continue;
			}
			messages.push(m);
		}
		return changed ? { messages } : undefined;
	});
}

function ruleKey(extension: string | undefined, type: string): string {
	return `${extension ?? ""}\u0000${type}`;
}

/**
 * What the model reads for a message of a type with a template: the content
 * in place of every {{content}}, in one pass (hostd's exthost.RenderMessage).
 */
export function renderMessage(template: string, content: string): string {
	return template.split("{{content}}").join(content);
}

// ---------------------------------------------------------------------------

/** Tells the user: through Pi's UI, or on stderr when Pi runs without one. */
function notify(ctx: ExtensionContext, message: string, level: "info" | "warning" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(message, level);
	else console.error(message);
}
