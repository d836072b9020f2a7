// The Workspace's lifecycle hooks at Pi's session, turn, model and stop events.

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Hostd, texts } from "./hostd.ts";
import { Tree } from "./tree.ts";
import { afterHookProblems, reportAfter } from "./tools.ts";
import { notify } from "./notify.ts";

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Lifecycle hooks: hostd's /v1/events/{event}

/** How many stops in a row Stop hooks may deny before the agent stops anyway. */
export const maxStopContinuations = 8;

/** The custom message type that carries the hooks' context to the model. */
export const contextMessageType = "loadout.context";

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
export async function confirm(ctx: ExtensionContext, message: string): Promise<boolean> {
	if (!ctx.hasUI) return false;
	try {
		return (await ctx.ui.confirm("Loadout", message)) === true;
	} catch {
		return false;
	}
}

export function registerSessionEvents(pi: ExtensionAPI, hostd: Hostd, session: SessionHooks): void {
	pi.on("session_start", async (event, ctx) => {
		// The first tool call comes after the model's first answer: ready
		// its path to hostd meanwhile.
		hostd.warm();
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
export function messageText(m: any): string {
	return typeof m?.content === "string" ? m.content : texts(m?.content);
}

/**
 * What BeforeModelRequest's hooks see of the request Pi is about to send
 * (`request` in docs/hooks.md): how many messages and their size as JSON
 * (UTF-8 bytes), the tools it offers, and its trigger: what it answers,
 * the role of its last message that is not a custom one (user: a prompt;
 * toolResult: a tool's result), since the custom messages extensions and
 * hooks add are context beside it.
 */
export function modelRequest(messages: readonly any[], tools: readonly string[]): { messages: number; bytes: number; tools: string[]; trigger: string } {
	const list = Array.isArray(messages) ? messages : [];
	const last = [...list].reverse().find((m: any) => m?.role !== "custom");
	return {
		messages: list.length,
		bytes: Buffer.byteLength(JSON.stringify(list), "utf8"),
		tools: [...tools],
		trigger: typeof last?.role === "string" ? last.role : "",
	};
}

export function registerTurnEvents(pi: ExtensionAPI, hostd: Hostd, session: SessionHooks): void {
	pi.on("turn_start", async (event, ctx) => {
		// A turn's tool calls follow its model answer; the connection kept
		// from the last turn may have been closed idle since (hostd-http.ts).
		hostd.warm();
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
		const request = modelRequest(event.messages, pi.getActiveTools());
		const answer = await session.run(ctx, "BeforeModelRequest", { model, request });
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
