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

/** Warm before/after pairs at most: past this V8 has optimized the path (docs/benchmarks.md). */
export const maxWarmCalls = 1500;
/** Warm pairs per connection: the lane reconnects after this many, so connecting is warmed too. */
export const warmReconnectEvery = 250;
/** The longest a warm call may take before the loop gives up (a call's own deadline is longer). */
export const warmCallTimeoutMs = 2000;

/**
 * One process's warm loop. start runs call (one before/after pair; false when
 * hostd did not answer as a warm call is answered: an older hostd, or none)
 * up to maxWarmCalls times, one at a time, never awaited by its caller; stop
 * (at a real call's start) ends it after the pair in flight, so a real call
 * shares the event loop with at most that one, and never a connection (the
 * pairs go over their own, closed by done when the loop ends).
 */
export class WarmCalls {
	private started = false;
	private stopped = false;
	/** Pairs made, for tests and the benchmarks. */
	made = 0;

	constructor(
		private readonly call: (i: number) => Promise<boolean>,
		private readonly done: () => void,
		private readonly max = maxWarmCalls,
	) {}

	/** Starts the loop (once: the caller starts it once per process). Resolves when it ends. */
	start(): Promise<void> {
		if (this.started || this.stopped) return Promise.resolve();
		this.started = true;
		return this.run();
	}

	/** A real call starts: no warm call after the one in flight. */
	stop(): void {
		this.stopped = true;
	}

	private async run(): Promise<void> {
		try {
			while (!this.stopped && this.made < this.max) {
				const ok = await this.call(this.made);
				if (!ok) break;
				this.made++;
			}
		} catch {
			// Best effort: a real call reports hostd's failures itself.
		} finally {
			this.stopped = true;
			this.done();
		}
	}
}
