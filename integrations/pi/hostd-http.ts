// A small HTTP/1.1 client for hostd: JSON POSTs over a few kept-alive
// connections, to loopback TCP or to hostd's Unix socket.
//
// Why not node:http: every tool call makes a round trip to hostd, and in a
// session's first few thousand calls most of the added tail was V8 optimizing
// node:http's general client (its request, stream and parser machinery), not
// the round trip itself: p99 2.4-2.8 ms against 1.0-1.5 ms for this client,
// one fresh process each (docs/benchmarks.md, Pi with the Loadout package).
// hostd is one known peer on loopback, so the client speaks only what it
// needs: POST with a Content-Length body; answers framed by Content-Length,
// chunked encoding or connection close. Anything else is a broken answer, and
// the caller fails closed on it.
import * as net from "node:net";

/** The longest answer read: hostd's largest (a rewritten call's arguments, a tool's result) is a few MiB. */
export const maxAnswerBytes = 64 << 20;
/** The longest status line and headers read. */
const maxHeadBytes = 64 << 10;
/** Connections to one hostd kept at once; more concurrent calls wait for one. */
const maxConnections = 16;
/**
 * An idle connection is closed after this long, well inside hostd's own idle
 * timeout (--idle-timeout, 60 s by default), so a call never races hostd
 * closing the connection it is written to.
 */
export const idleCloseMs = 5000;

export interface Answer {
	status: number;
	text: string;
}

/** What a failed call was: the caller words its reason from the name. */
function failure(name: "TimeoutError" | "BrokenAnswer", message: string): Error {
	return Object.assign(new Error(message), { name });
}

/** Where base (http://HOST:PORT[/prefix] or unix:PATH, also unix://PATH) points. */
interface Endpoint {
	key: string;
	host: string;
	pathPrefix: string;
	connect(): net.Socket;
}

function endpointOf(base: string): Endpoint {
	if (base.startsWith("unix:")) {
		const path = base.replace(/^unix:(\/\/)?/, "");
		return { key: base, host: "localhost", pathPrefix: "", connect: () => net.connect({ path }) };
	}
	const u = new URL(base);
	if (u.protocol !== "http:") throw new Error(`LOADOUT_HOSTD_URL ${base}: hostd is reached over http:// or unix:PATH, not ${u.protocol}`);
	const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
	const port = Number(u.port || 80);
	return { key: base, host: u.host, pathPrefix: u.pathname.replace(/\/$/, ""), connect: () => net.connect({ host: hostname, port }) };
}

/**
 * Reads one HTTP/1.1 answer from the bytes a connection receives. push
 * returns true once the answer is whole; it throws on anything that is not a
 * well-formed answer.
 */
export class AnswerReader {
	status = 0;
	/** The connection may carry the next request. */
	keepAlive = true;
	private buf: Buffer = Buffer.alloc(0);
	private headDone = false;
	/** Content-Length's bytes left, or -1 for chunked, or -2 for until the connection closes. */
	private remaining = 0;
	private body: Buffer[] = [];
	private bodyBytes = 0;
	private chunkLeft = -1;
	private inTrailers = false;
	/** Bytes after the answer: a peer that sends them cannot be trusted with the next request. */
	extra = false;

	push(data: Buffer): boolean {
		this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
		if (!this.headDone && !this.readHead()) return false;
		return this.readBody();
	}

	/** The connection closed: whether that ends the answer (framed by close) rather than breaking it. */
	closeEnds(): boolean {
		return this.headDone && this.remaining === -2;
	}

	text(): string {
		return Buffer.concat(this.body, this.bodyBytes).toString("utf8");
	}

	private readHead(): boolean {
		for (;;) {
			const end = this.buf.indexOf("\r\n\r\n");
			if (end < 0) {
				if (this.buf.length > maxHeadBytes) throw failure("BrokenAnswer", `answer headers over ${maxHeadBytes} bytes`);
				return false;
			}
			const lines = this.buf.subarray(0, end).toString("latin1").split("\r\n");
			this.buf = this.buf.subarray(end + 4);
			const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]);
			if (!m) throw failure("BrokenAnswer", `not an HTTP/1.1 answer: ${JSON.stringify(lines[0].slice(0, 80))}`);
			const status = Number(m[2]);
			if (status >= 100 && status < 200) continue; // an interim answer; the real one follows
			const headers = new Map<string, string[]>();
			for (const line of lines.slice(1)) {
				const colon = line.indexOf(":");
				if (colon <= 0) throw failure("BrokenAnswer", `malformed answer header ${JSON.stringify(line.slice(0, 80))}`);
				const name = line.slice(0, colon).trim().toLowerCase();
				headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
			}
			this.status = status;
			const connection = (headers.get("connection") ?? []).join(",").toLowerCase();
			this.keepAlive = m[1] === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
			const encoding = (headers.get("transfer-encoding") ?? []).join(",").toLowerCase();
			const lengths = new Set(headers.get("content-length") ?? []);
			if (encoding) {
				if (encoding.trim() !== "chunked") throw failure("BrokenAnswer", `unsupported transfer encoding ${JSON.stringify(encoding)}`);
				this.remaining = -1;
			} else if (lengths.size > 1) {
				throw failure("BrokenAnswer", "conflicting Content-Length headers");
			} else if (lengths.size === 1) {
				const [v] = lengths;
				if (!/^\d{1,15}$/.test(v)) throw failure("BrokenAnswer", `malformed Content-Length ${JSON.stringify(v.slice(0, 20))}`);
				this.remaining = Number(v);
				if (this.remaining > maxAnswerBytes) throw failure("BrokenAnswer", `answer of ${v} bytes is over ${maxAnswerBytes}`);
			} else if (status === 204 || status === 304) {
				this.remaining = 0;
			} else {
				this.remaining = -2;
				this.keepAlive = false;
			}
			this.headDone = true;
			return true;
		}
	}

	private take(n: number): void {
		if (this.bodyBytes + n > maxAnswerBytes) throw failure("BrokenAnswer", `answer over ${maxAnswerBytes} bytes`);
		this.body.push(this.buf.subarray(0, n));
		this.bodyBytes += n;
		this.buf = this.buf.subarray(n);
	}

	private readBody(): boolean {
		if (this.remaining === -2) {
			this.take(this.buf.length);
			return false;
		}
		if (this.remaining >= 0) {
			const n = Math.min(this.remaining, this.buf.length);
			this.take(n);
			this.remaining -= n;
			return this.finishIf(this.remaining === 0);
		}
		return this.readChunks();
	}

	private readChunks(): boolean {
		for (;;) {
			if (this.chunkLeft > 0) {
				const n = Math.min(this.chunkLeft, this.buf.length);
				this.take(n);
				this.chunkLeft -= n;
				if (this.chunkLeft > 0) return false;
				this.chunkLeft = -2; // the CRLF after the data
			}
			const eol = this.buf.indexOf("\r\n");
			if (eol < 0) {
				if (this.buf.length > 4096) throw failure("BrokenAnswer", "malformed chunked answer");
				return false;
			}
			const line = this.buf.subarray(0, eol).toString("latin1");
			this.buf = this.buf.subarray(eol + 2);
			if (this.inTrailers) {
				if (line === "") return this.finishIf(true);
				continue;
			}
			if (this.chunkLeft === -2) {
				if (line !== "") throw failure("BrokenAnswer", "malformed chunked answer");
				this.chunkLeft = -1;
				continue;
			}
			const size = /^([0-9a-fA-F]{1,8})(?:;.*)?$/.exec(line);
			if (!size) throw failure("BrokenAnswer", `malformed chunk size ${JSON.stringify(line.slice(0, 20))}`);
			this.chunkLeft = parseInt(size[1], 16);
			if (this.chunkLeft === 0) this.inTrailers = true;
		}
	}

	private finishIf(done: boolean): boolean {
		if (done && this.buf.length > 0) this.extra = true;
		return done;
	}
}

/**
 * One kept-alive connection and the exchange on it, if any.
 *
 * Its deadline and idle close share one timer, armed for the earlier of the
 * two and checked against the clock when it fires: a call only stores its
 * deadline, so a call sets and clears no timer (one per idleCloseMs or per
 * deadline at most, whichever is sooner). With a timer set and cleared per
 * call, Node's timer functions were re-optimized after a deoptimization at
 * a session's first real call, in the first calls' tail (docs/benchmarks.md,
 * "Timers off the call path").
 */
class Connection {
	readonly socket: net.Socket;
	gone = false;
	private error?: Error;
	/** The exchange in flight, if any: its reader and promise. */
	private reader?: AnswerReader;
	private resolve?: (a: Answer) => void;
	private reject?: (err: Error) => void;
	/** When the exchange in flight times out (Date.now() ms). */
	private deadline = 0;
	/** When the connection went idle, or -1 while it is not idle. */
	private idleAt = -1;
	private timer?: NodeJS.Timeout;
	/** When the timer fires; Infinity when none is set. */
	private fireAt = Infinity;
	private readonly check = () => this.onTimer();

	constructor(ep: Endpoint, private readonly onClose: (c: Connection) => void) {
		this.socket = ep.connect();
		this.socket.setNoDelay(true);
		this.socket.on("data", (d: Buffer) => this.onData(d));
		this.socket.on("error", (err) => (this.error = err));
		this.socket.on("close", () => this.onGone());
	}

	/** Sends one request and reads its answer. */
	exchange(request: string, timeoutMs: number): Promise<Answer> {
		this.idleAt = -1;
		this.socket.ref();
		this.reader = new AnswerReader();
		this.deadline = Date.now() + timeoutMs;
		this.arm(this.deadline);
		const p = new Promise<Answer>((resolve, reject) => {
			this.resolve = resolve;
			this.reject = reject;
		});
		this.socket.write(request);
		return p;
	}

	/** Back in the pool: closed by us after idleCloseMs, and never keeps the process alive. */
	idle(): void {
		this.socket.unref();
		this.idleAt = Date.now();
		this.arm(this.idleAt + idleCloseMs);
	}

	private onData(d: Buffer): void {
		const reader = this.reader;
		// Bytes with no request in flight: a peer that cannot be trusted.
		if (!reader) return void this.socket.destroy();
		try {
			if (reader.push(d)) this.settle(undefined, { status: reader.status, text: reader.text() });
		} catch (err: any) {
			this.settle(err);
		}
	}

	private onGone(): void {
		this.gone = true;
		clearTimeout(this.timer);
		const reader = this.reader;
		if (reader) {
			if (reader.closeEnds()) this.settle(undefined, { status: reader.status, text: reader.text() });
			else this.settle(this.error ?? failure("BrokenAnswer", "connection closed mid-answer"));
		}
		this.onClose(this);
	}

	private settle(err?: Error, answer?: Answer): void {
		const reader = this.reader!;
		const resolve = this.resolve!;
		const reject = this.reject!;
		this.reader = this.resolve = this.reject = undefined;
		if (err || !answer) {
			this.socket.destroy();
			reject(err!);
			return;
		}
		if (!reader.keepAlive || reader.extra) this.socket.destroy();
		resolve(answer);
	}

	/** Makes the timer fire by at (it may already fire sooner). */
	private arm(at: number): void {
		if (at >= this.fireAt || this.gone) return;
		clearTimeout(this.timer);
		this.fireAt = at;
		this.timer = setTimeout(this.check, Math.max(0, at - Date.now()));
		this.timer.unref(); // the socket, ref'd while a call waits, keeps the process alive
	}

	private onTimer(): void {
		this.fireAt = Infinity;
		this.timer = undefined;
		const now = Date.now();
		if (this.reader) {
			if (now >= this.deadline) this.settle(failure("TimeoutError", "timeout"));
			else this.arm(this.deadline);
		} else if (this.idleAt >= 0) {
			if (now >= this.idleAt + idleCloseMs) this.socket.destroy();
			else this.arm(this.idleAt + idleCloseMs);
		}
	}
}

/** The connections to one hostd: idle ones reused, at most maxConnections at once. */
class Pool {
	private idle: Connection[] = [];
	private open = 0;
	private waiting: ((c: Connection) => void)[] = [];

	constructor(private readonly ep: Endpoint) {}

	post(path: string, body: string, timeoutMs: number): Promise<Answer> {
		return this.send(postRequest(this.ep, path, body), timeoutMs);
	}

	/**
	 * Opens a connection ahead of the next call when none is idle, and
	 * carries one GET /healthz on it (no decision, no ledger record), so the
	 * call finds it connected and hostd's side of it serving.
	 */
	async preconnect(timeoutMs: number): Promise<void> {
		if (this.idle.some((c) => !c.gone)) return;
		const a = await this.send(`GET ${this.ep.pathPrefix}/healthz HTTP/1.1\r\nHost: ${this.ep.host}\r\n\r\n`, timeoutMs);
		if (a.status !== 200) throw failure("BrokenAnswer", `GET /healthz answered ${a.status}`);
	}

	private async send(request: string, timeoutMs: number): Promise<Answer> {
		const deadline = Date.now() + timeoutMs;
		const conn = await this.acquire(timeoutMs);
		try {
			return await conn.exchange(request, Math.max(1, deadline - Date.now()));
		} finally {
			this.done(conn);
		}
	}

	private acquire(timeoutMs: number): Promise<Connection> {
		for (let c = this.idle.pop(); c; c = this.idle.pop()) if (!c.gone) return Promise.resolve(c);
		if (this.open < maxConnections) {
			this.open++;
			return Promise.resolve(new Connection(this.ep, (c) => this.lost(c)));
		}
		return new Promise((resolve, reject) => {
			const take = (c: Connection) => {
				clearTimeout(timer);
				resolve(c);
			};
			const timer = setTimeout(() => {
				this.waiting = this.waiting.filter((w) => w !== take);
				reject(failure("TimeoutError", "timeout"));
			}, timeoutMs);
			this.waiting.push(take);
		});
	}

	private done(conn: Connection): void {
		if (conn.gone || conn.socket.destroyed) return; // lost() accounts for it
		const next = this.waiting.shift();
		if (next) return next(conn);
		conn.idle();
		this.idle.push(conn);
	}

	/** Closes the idle connections; a busy one stays until its exchange ends. */
	closeIdle(): void {
		const idle = this.idle;
		this.idle = [];
		for (const c of idle) c.socket.destroy(); // lost() accounts for each when it closes
	}

	/** A connection closed: its slot goes to a waiting call, on a new connection. */
	private lost(conn: Connection): void {
		this.idle = this.idle.filter((c) => c !== conn);
		this.open--;
		const next = this.waiting.shift();
		if (next) {
			this.open++;
			next(new Connection(this.ep, (c) => this.lost(c)));
		}
	}
}

/** A POST of a JSON body, as every call to hostd is written. */
function postRequest(ep: Endpoint, path: string, body: string): string {
	return (
		`POST ${ep.pathPrefix}${path} HTTP/1.1\r\nHost: ${ep.host}\r\n` +
		`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
	);
}

const pools = new Map<string, Pool>();

/**
 * The pool of base's connections in a lane: the calls' lane (""), or
 * another whose connections they never wait for (warm calls' "warm").
 */
function poolOf(base: string, lane = ""): Pool {
	const key = lane ? `${lane} ${base}` : base;
	let pool = pools.get(key);
	if (!pool) {
		pool = new Pool(endpointOf(base));
		pools.set(key, pool);
	}
	return pool;
}

/**
 * POSTs a JSON body to hostd at base (http://HOST:PORT or unix:PATH), on
 * lane's connections; rejects with a TimeoutError, a BrokenAnswer or the
 * socket's error.
 */
export function postJSON(base: string, path: string, body: string, timeoutMs: number, lane = ""): Promise<Answer> {
	return poolOf(base, lane).post(path, body, timeoutMs);
}

/** Closes lane's idle connections to base (a lane that is done, as warm calls are). */
export function closeLane(base: string, lane: string): void {
	pools.get(`${lane} ${base}`)?.closeIdle();
}

/**
 * Readies the path of the next call to hostd at base, off any call's path
 * (the package runs it at session start and at each turn's start, while the
 * model is still to answer): a kept-alive connection opened (preconnect),
 * and, once per process, this client's own code run over synthetic
 * answers until V8 has optimized it. In a fresh process the first calls
 * otherwise paid the connect and V8 compiling the client on a core hostd
 * needs (docs/benchmarks.md, "the first calls' tail"). Best effort: a
 * failure here is the next call's to report, failing closed as always.
 */
export async function warm(base: string, timeoutMs: number): Promise<void> {
	const pool = poolOf(base);
	await Promise.allSettled([pool.preconnect(timeoutMs), warmClient()]);
}

/** Rounds of the synthetic exchange; V8 optimizes the reader within them. */
export const warmRounds = 1000;
let warmed: Promise<void> | undefined;

/**
 * Runs postRequest and AnswerReader over a before call and answers framed
 * as hostd frames them (Content-Length, and chunked for long answers), in
 * slices that yield to the event loop, so a call arriving meanwhile is not
 * held up. Once per process.
 */
function warmClient(): Promise<void> {
	warmed ??= (async () => {
		const ep = endpointOf("http://127.0.0.1:1");
		const call = { call: { id: "warm", name: "bash", arguments: { command: "ls -la" } }, acceptArguments: true, headless: false, cwd: "/" };
		const json = JSON.stringify({ allowed: true, afterHooks: false, decision: { allowed: true } });
		const answers = [
			Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Mon, 07 Dec 2026 00:00:00 GMT\r\nContent-Length: ${json.length}\r\n\r\n${json}`),
			Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`),
		];
		for (let i = 0; i < warmRounds; i++) {
			if (i % 100 === 0) await new Promise((r) => setImmediate(r));
			postRequest(ep, "/v1/before", JSON.stringify(call));
			const reader = new AnswerReader();
			const a = answers[i % answers.length];
			// In two reads as often as in one, as a socket delivers them.
			const cut = i % 4 < 2 ? a.length : a.length >> 1;
			if (!reader.push(a.subarray(0, cut)) && !reader.push(a.subarray(cut))) throw failure("BrokenAnswer", "warm answer unread");
			JSON.parse(reader.text());
		}
	})();
	return warmed;
}
