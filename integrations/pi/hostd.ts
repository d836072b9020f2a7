// The hostd client: every call the Pi package makes to hostd, with its deadline,
// failing closed on no answer.

import { closeLane, postJSON, warm } from "./hostd-http.ts";
import type { LoadoutConfig } from "./config.ts";

// ---------------------------------------------------------------------------
// hostd client

/** Outcome of one hostd call: a parsed 2xx body, or why there is none. */
type HostdAnswer = { ok: true; body: any } | { ok: false; why: string };

export class Hostd {
	/** lane: whose connections the calls go over (hostd-http.ts postJSON); warm calls have their own. */
	constructor(
		private readonly cfg: LoadoutConfig,
		private readonly lane = "",
	) {}

	/**
	 * The same hostd over connections of their own, so a real call never
	 * waits for one of lane's, each call given at most timeoutMs.
	 */
	inLane(lane: string, timeoutMs: number): Hostd {
		return new Hostd({ ...this.cfg, timeoutMs: Math.min(this.cfg.timeoutMs, timeoutMs) }, lane);
	}

	/** Closes this lane's idle connections (its calls are done). */
	closeLane(): void {
		if (this.lane) closeLane(this.cfg.hostdUrl, this.lane);
	}

	get url(): string {
		return this.cfg.hostdUrl;
	}

	/**
	 * Readies the next call's path (a connection to hostd, the client
	 * compiled) without waiting for it; see hostd-http.ts warm.
	 */
	warm(): void {
		void warm(this.cfg.hostdUrl, this.cfg.timeoutMs);
	}

	async post(path: string, body: unknown): Promise<HostdAnswer> {
		let res: { status: number; text: string };
		try {
			res = await postJSON(this.cfg.hostdUrl, path, JSON.stringify(body), this.cfg.timeoutMs, this.lane);
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

export function texts(content: unknown): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((c) => c && c.type === "text" && typeof c.text === "string")
		.map((c) => c.text)
		.join("\n");
}
