// Template slash commands rendered by hostd, their steps run through the hooks,
// and Pi's own tools under the declared sandbox.

import { join } from "node:path";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { randomUUID } from "node:crypto";
import { createBashToolDefinition, createEditToolDefinition, createFindToolDefinition, createGrepToolDefinition, createLsToolDefinition, createReadToolDefinition, createWriteToolDefinition } from "@mariozechner/pi-coding-agent";
import { type SandboxDecl, sandboxConfigFromEnv, sandboxedTools } from "./sandbox.ts";
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Hostd, texts } from "./hostd.ts";
import { type Manifest, Tree } from "./tree.ts";
import { askBefore, runThroughHostd, tellAfter } from "./tools.ts";
import { SessionHooks } from "./events.ts";
import { notify } from "./notify.ts";

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
export function registerSandbox(pi: ExtensionAPI, tree: Tree): SandboxedTools | undefined {
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
export function declaredSandbox(tree: Tree): SandboxDecl | undefined {
	try {
		return tree.manifest(tree.generation()).sandbox;
	} catch {
		return undefined;
	}
}

/** Pi's tools that run or write on the machine, which a declared sandbox holds. */
export const sandboxedNames = ["bash", "write", "edit"];

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
export function registerPrompts(pi: ExtensionAPI, tree: Tree, hostd: Hostd, session: SessionHooks, steps: StepRunner): void {
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
