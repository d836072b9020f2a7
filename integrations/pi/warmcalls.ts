// Warm calls: the package's own tool-call path run before a session's first
// real call, against hostd's synthetic endpoints (POST /v1/warm/before and
// /v1/warm/after: decoded and answered as a call is, but no hook runs and
// nothing is decided or recorded).
//
// Why: in a fresh Node process the first thousands of tool calls paid for V8
// compiling the package's per-call code and Node's socket, timer and
// async-context paths on a core hostd needs, about 1.4 ms of a session's
// first calls' p99 (docs/benchmarks.md, "From the very first call"). GET
// /healthz round trips do not run those paths; a call's own functions over
// a real connection do. A session's first tool call always follows the
// model's first answer, so the calls run while the model thinks.

import * as pi from "@mariozechner/pi-coding-agent";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";

/** Warm before/after pairs at most: past this V8 has optimized the path (docs/benchmarks.md). */
export const maxWarmCalls = 3000;
/**
 * Pairs in flight at once. More pairs fit before the first call (a model's
 * first answer may come within half a second), but the first real call
 * shares the event loop and hostd with the pairs still in flight: fresh
 * sessions' first call 1.24 / 1.34 / 1.56 ms median and p99 of 2,000 calls
 * 2.08 / 1.98 / 1.84 ms with 1 / 2 / 4 (docs/benchmarks.md).
 */
export const warmConcurrency = 2;
/** Warm pairs per connection: the lane reconnects after this many, so connecting is warmed too. */
export const warmReconnectEvery = 250;
/** The longest a warm call may take before the loop gives up (a call's own deadline is longer). */
export const warmCallTimeoutMs = 2000;

/**
 * One process's warm loop. start runs call (one before/after pair; false when
 * hostd did not answer as a warm call is answered: an older hostd, or none)
 * up to max times, concurrency at a time, never awaited by its caller; stop
 * (at a real call's start) ends it after the pairs in flight, so a real call
 * shares the event loop with at most those, and never a connection (the
 * pairs go over their own, closed by done when the loop ends).
 */
export class WarmCalls {
	private started = false;
	private stopped = false;
	/** Pairs made, for tests and the benchmarks. */
	made = 0;
	private issued = 0;

	constructor(
		private readonly call: (i: number) => Promise<boolean>,
		private readonly done: () => void,
		private readonly max = maxWarmCalls,
		private readonly concurrency = warmConcurrency,
	) {}

	/** Starts the loop (once: the caller starts it once per process). Resolves when it ends. */
	start(): Promise<void> {
		if (this.started || this.stopped) return Promise.resolve();
		this.started = true;
		return this.run();
	}

	/** A real call starts: no warm call after those in flight. */
	stop(): void {
		this.stopped = true;
	}

	/**
	 * A call starts, warm or real: a real one stops the loop (stop). Warm
	 * calls run it too, without a branch, so the first real call runs no
	 * code they left cold (V8 deoptimized the handler there).
	 */
	callStarts(warm: boolean): void {
		this.stopped = this.stopped || !warm;
	}

	private async run(): Promise<void> {
		const worker = async () => {
			while (!this.stopped && this.issued < this.max) {
				const ok = await this.call(this.issued++);
				if (!ok) break;
				this.made++;
			}
			// One failure ends every worker: hostd is not answering warm calls.
			this.stopped = true;
		};
		try {
			await Promise.all(Array.from({ length: this.concurrency }, worker));
		} catch {
			// Best effort: a real call reports hostd's failures itself.
		} finally {
			this.stopped = true;
			this.done();
		}
	}
}

/** A tool_call or tool_result handler as Pi calls it. */
type Handler = (event: any, ctx: ExtensionContext) => unknown;

/** Pi's tool-call dispatch run over the warm handlers alone (piDispatch). */
export interface WarmDispatch {
	/** Pi's emitToolCall: the warm before handler's verdict. */
	toolCall(event: object): Promise<{ block?: boolean } | undefined>;
	/** Pi's emitToolResult (it hands the handler a copy of event). */
	toolResult(event: object): Promise<unknown>;
}

/**
 * Pi's own tool-call dispatch (its ExtensionRunner's hasHandlers,
 * createContext, emitToolCall and emitToolResult, the functions Pi runs
 * around every extension's tool_call and tool_result handlers) on a runner
 * of the package's own, holding only the warm handlers given here. Pi
 * exports the class and both Pi's runner and this one run its one
 * prototype, so V8 compiles Pi's dispatch before the first real call; the
 * events never reach Pi's runner, so no other extension sees a warm call,
 * and the handlers go to hostd's warm endpoints only. Without Pi's runner
 * (a Pi that does not export it, or constructs it otherwise) undefined: the
 * caller runs the handlers directly, as before.
 */
export function piDispatch(ctx: ExtensionContext, onToolCall: Handler, onToolResult: Handler): WarmDispatch | undefined {
	try {
		const { ExtensionRunner, createExtensionRuntime } = pi as any;
		if (typeof ExtensionRunner !== "function" || typeof createExtensionRuntime !== "function") return undefined;
		// Keyed as Pi's loader makes an extension, so the runner sees the
		// shape it sees for Pi's own; an extension without these handlers
		// on either side, as a session has (Pi's loop skips those).
		const extension = (handlers: [string, Handler[]][]) => ({
			path: "<loadout-warm>",
			resolvedPath: "<loadout-warm>",
			sourceInfo: { path: "<loadout-warm>", source: "loadout-warm", scope: "temporary", origin: "top-level", baseDir: undefined },
			handlers: new Map<string, Handler[]>(handlers),
			tools: new Map(),
			messageRenderers: new Map(),
			commands: new Map(),
			flags: new Map(),
			shortcuts: new Map(),
		});
		const extensions = [
			extension([]),
			extension([
				["tool_call", [onToolCall]],
				["tool_result", [onToolResult]],
			]),
			extension([]),
		];
		const runner = new ExtensionRunner(extensions, createExtensionRuntime(), ctx.cwd, ctx.sessionManager, ctx.modelRegistry);
		if (typeof runner.emitToolCall !== "function" || typeof runner.emitToolResult !== "function" || typeof runner.hasHandlers !== "function") return undefined;
		return {
			// As Pi's agent hooks call them (agent-session.js): hasHandlers first.
			toolCall: (event) => (runner.hasHandlers("tool_call") ? runner.emitToolCall(event) : Promise.resolve(undefined)),
			toolResult: (event) => (runner.hasHandlers("tool_result") ? runner.emitToolResult(event) : Promise.resolve(undefined)),
		};
	} catch {
		return undefined;
	}
}
