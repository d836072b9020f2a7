// Tool calls: hostd decides before each one, failing closed; runnable
// registry tools run through hostd.

import { validateToolArguments } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { SandboxDecl } from "./sandbox.ts";
import { Hostd, texts } from "./hostd.ts";
import { type Manifest, Tree } from "./tree.ts";
import { sandboxedNames } from "./commands.ts";
import { confirm, where } from "./events.ts";
import { notify } from "./notify.ts";
import { WarmCalls, type WarmDispatch, piDispatch, warmCallTimeoutMs, warmReconnectEvery } from "./warmcalls.ts";

// ---------------------------------------------------------------------------
// Tool calls: hostd decides, failing closed

/** A tool call as hostd's hooks see it. */
type GateCall = { id: string; name: string; arguments: Record<string, unknown> };

/**
 * Where a call's before and after questions go: hostd's gate, or its warm
 * twins (warmcalls.ts), which decide nothing and whose failures are no
 * call's to report.
 */
export interface CallRoutes {
	before: string;
	after: string;
	warm: boolean;
}
export const gateRoutes: CallRoutes = { before: "/v1/before", after: "/v1/after", warm: false };
export const warmRoutes: CallRoutes = { before: "/v1/warm/before", after: "/v1/warm/after", warm: true };

/** hostd's before verdict on a call: blocked with a reason, or allowed with the arguments to run (rewritten or not). */
type BeforeVerdict = { block: string } | { arguments: Record<string, unknown>; afterHooks: boolean };

/**
 * Asks hostd whether a call of one of Pi's own tools may run (POST
 * /v1/before), failing closed: no answer, or one without a verdict, blocks.
 * An ask goes to the user (none headless: no). Rewritten arguments are
 * checked against the tool's own schema, since Pi does not re-validate them.
 */
export async function askBefore(pi: ExtensionAPI, hostd: Hostd, ctx: ExtensionContext, call: GateCall, routes = gateRoutes): Promise<BeforeVerdict> {
	// headless: with no UI to ask, an imposed hook's ask may go to the
	// cluster's approvers instead (docs/hooks.md, "Approvals").
	const answer = await hostd.post(routes.before, { call, acceptArguments: true, headless: !ctx.hasUI, ...where(ctx) });
	if (!answer.ok) {
		return { block: `Loadout blocked ${call.name}: ${answer.why}; tool calls fail closed without hostd's answer.` };
	}
	const body = answer.body;
	if (typeof body?.allowed !== "boolean") {
		return { block: `Loadout blocked ${call.name}: hostd's answer has no "allowed" verdict; tool calls fail closed.` };
	}
	const reason = texts(body.result?.content) || `hostd denied ${call.name} without a reason`;
	// A warm call never asks the user anything.
	if (!body.allowed && !(body.ask && !routes.warm && (await confirm(ctx, reason)))) {
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
export async function tellAfter(
	hostd: Hostd,
	ctx: ExtensionContext,
	call: GateCall,
	result: { isError: boolean; content: unknown; details?: unknown },
	routes = gateRoutes,
): Promise<boolean> {
	const answer = await hostd.post(routes.after, {
		call,
		result: { toolCallId: call.id, toolName: call.name, isError: result.isError, content: result.content, details: result.details ?? {} },
		...where(ctx),
	});
	if (!answer.ok) {
		if (routes.warm) return false;
		afterHookProblems.failures++;
		reportAfter(ctx, `Loadout: after hooks for ${call.name} did not run: ${answer.why}`);
		return false;
	}
	const diagnostics = Array.isArray(answer.body?.diagnostics) ? answer.body.diagnostics : [];
	if (diagnostics.length > 0) {
		afterHookProblems.diagnostics += diagnostics.length;
		const lines = diagnostics.map((d: any) => `${d?.extensionId}/${d?.hook} ${d?.kind}: ${d?.message}`);
		reportAfter(ctx, `Loadout after hooks for ${call.name}: ${lines.join("; ")}`);
	}
	return true;
}

/**
 * The gate: every call Pi makes is asked of hostd first. newSandbox, set in
 * a session that started without a sandbox, reads the context's current
 * one: once a context declares a sandbox, bash, write and edit are refused
 * until a new session runs them through it (fail closed).
 */
export function registerToolGate(pi: ExtensionAPI, hostd: Hostd, runnable: Set<string>, newSandbox?: () => SandboxDecl | undefined): void {
	// Calls whose before answer said no after hook observes their tool
	// (afterHooks: false): their results are not sent to POST /v1/after,
	// which would run nothing. Bounded, for calls whose result never comes.
	const unobserved = new Set<string>();
	type ToolCallEvent = { toolName: string; toolCallId: string; input: unknown };
	type ToolResultEvent = ToolCallEvent & { content: unknown; details?: unknown; isError: boolean };
	// The handlers' bodies, called by Pi with the gate's routes and by the
	// warm calls with theirs: the same code, so V8 has optimized it by the
	// first real call.
	const before = async (event: ToolCallEvent, ctx: ExtensionContext, routes: CallRoutes, via: Hostd) => {
		// hostd runs a runnable tool's hooks itself, inside /v1/tools/{name}.
		if (runnable.has(event.toolName)) return undefined;
		if (newSandbox && sandboxedNames.includes(event.toolName) && newSandbox()) {
			return { block: true, reason: "Loadout: the context now declares a sandbox this session does not run under; start a new session" };
		}
		const verdict = await askBefore(pi, via, ctx, { id: event.toolCallId, name: event.toolName, arguments: (event.input ?? {}) as Record<string, unknown> }, routes);
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
	};
	/** Whether the after hooks were asked and answered (or needed no asking). */
	const after = async (event: ToolResultEvent, ctx: ExtensionContext, routes: CallRoutes, via: Hostd): Promise<boolean> => {
		if (runnable.has(event.toolName) || unobserved.delete(event.toolCallId)) return true;
		return tellAfter(via, ctx, { id: event.toolCallId, name: event.toolName, arguments: (event.input ?? {}) as Record<string, unknown> }, event, routes);
	};

	let warmCtx: ExtensionContext | undefined;
	const warmHostd = hostd.inLane("warm", warmCallTimeoutMs);
	// The inputs of the warm calls, which go to hostd's warm endpoints: the
	// objects the loop made, so no real call's input (Pi's, from the model)
	// can be one. Pi's dispatch hands the handlers the call's input itself.
	const warmInputs = new WeakSet<object>();
	// Warm calls whose after question failed: emitToolResult returns no verdict.
	const afterFailed = new Set<string>();
	// The handlers Pi calls, and the warm calls too (through Pi's dispatch
	// on a runner of their own, piDispatch): the same functions, so V8's
	// feedback for Pi's dispatch names the targets the real calls have.
	// One path for both (routes and lane picked, then the same calls), so
	// the warm calls leave no branch of them cold for the first real call.
	const onToolCall = (event: ToolCallEvent, ctx: ExtensionContext) => {
		const warm = warmInputs.has(event.input as object);
		warmCalls.callStarts(warm);
		return before(event, ctx, warm ? warmRoutes : gateRoutes, warm ? warmHostd : hostd);
	};
	const onToolResult = async (event: ToolResultEvent, ctx: ExtensionContext) => {
		const warm = warmInputs.has(event.input as object);
		const ok = await after(event, ctx, warm ? warmRoutes : gateRoutes, warm ? warmHostd : hostd);
		if (warm && !ok) afterFailed.add(event.toolCallId);
		return undefined;
	};
	// Without Pi's dispatch, the handlers are called as Pi calls them.
	let dispatch: WarmDispatch = {
		toolCall: (event) => onToolCall(event as ToolCallEvent, warmCtx!),
		// Pi hands the handlers a copy (emitToolResult).
		toolResult: (event) => onToolResult({ ...event } as ToolResultEvent, warmCtx!),
	};
	const warmCalls = new WarmCalls(
		async (i) => {
			// A bash call as a model makes them, in the events' shapes Pi
			// makes (agent-session.js), so V8's feedback is the real calls';
			// its answer must be the warm endpoint's (allowed), or the loop
			// stops (an older hostd answers 404).
			const id = `loadout-warm-${i}`;
			const input = { command: "ls -la" };
			warmInputs.add(input);
			const verdict = await dispatch.toolCall({ type: "tool_call", toolName: "bash", toolCallId: id, input });
			if (verdict?.block) return false;
			await dispatch.toolResult({ type: "tool_result", toolName: "bash", toolCallId: id, input, content: [{ type: "text", text: "ok" }], details: {}, isError: false });
			if (afterFailed.delete(id)) return false;
			// A real session reconnects after every idle pause: its connect
			// and close paths are warmed too.
			if (i % warmReconnectEvery === warmReconnectEvery - 1) warmHostd.closeLane();
			return true;
		},
		() => warmHostd.closeLane(),
	);
	pi.on("session_start", (_event, ctx) => {
		if (warmStarted) return; // once per process: V8's work is the process's
		warmStarted = true;
		warmCtx = ctx;
		dispatch = piDispatch(ctx, onToolCall, onToolResult) ?? dispatch;
		void warmCalls.start();
	});
	pi.on("tool_call", onToolCall);
	pi.on("tool_result", onToolResult);
}

/** Whether a session of this process has started the warm calls (warmcalls.ts). */
let warmStarted = false;

/**
 * What the after hooks did not do quietly in this process: calls whose
 * after hooks did not run (hostd unreachable, an error answer) and the
 * diagnostics they reported. Shown in Pi's status line as they change.
 */
export const afterHookProblems = { failures: 0, diagnostics: 0 };

export function reportAfter(ctx: ExtensionContext, message: string): void {
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
export function registerRunnableTools(pi: ExtensionAPI, tree: Tree, hostd: Hostd): Set<string> {
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
export async function runThroughHostd(hostd: Hostd, ctx: ExtensionContext, name: string, id: string, args: unknown): Promise<{ content: any[]; details: any }> {
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
