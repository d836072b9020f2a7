// The package's HTTP/1.1 client for hostd (hostd-http.ts) against scripted
// servers: every framing hostd's Go server uses, connection reuse, the
// connection cap and idle close, and every broken answer the gate must fail
// closed on.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { postJSON, warm, closeLane, maxAnswerBytes, idleCloseMs, AnswerReader } = await jiti.import("../hostd-http.ts");

/**
 * A server that reads each request whole (headers and Content-Length body)
 * and answers with script(request, socket). It counts connections.
 */
async function scripted(script, listenOn = 0) {
	const requests = [];
	const sockets = new Set();
	let connections = 0;
	let open = 0;
	let maxOpen = 0;
	const server = createServer((socket) => {
		connections++;
		open++;
		maxOpen = Math.max(maxOpen, open);
		sockets.add(socket);
		socket.on("close", () => {
			open--;
			sockets.delete(socket);
		});
		socket.on("error", () => {});
		let buf = Buffer.alloc(0);
		socket.on("data", (d) => {
			buf = Buffer.concat([buf, d]);
			for (;;) {
				const end = buf.indexOf("\r\n\r\n");
				if (end < 0) return;
				const head = buf.subarray(0, end).toString();
				const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
				if (buf.length < end + 4 + length) return;
				const request = { head, body: buf.subarray(end + 4, end + 4 + length).toString() };
				buf = buf.subarray(end + 4 + length);
				requests.push(request);
				script(request, socket);
			}
		});
	});
	await new Promise((r) => server.listen(listenOn, ...(typeof listenOn === "number" ? ["127.0.0.1"] : []), r));
	const url = typeof listenOn === "number" ? `http://127.0.0.1:${server.address().port}` : "unix:" + listenOn;
	return {
		url,
		requests,
		get connections() {
			return connections;
		},
		get open() {
			return open;
		},
		get maxOpen() {
			return maxOpen;
		},
		async close() {
			for (const s of sockets) s.destroy();
			await new Promise((r) => server.close(r));
		},
	};
}

/** Waits until cond() holds, polling; fails after ms. */
async function eventually(what, cond, ms = 3000) {
	const deadline = Date.now() + ms;
	while (!cond()) {
		if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

const json = (status, body, extra = "") => `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const rejection = (p) => p.then(() => assert.fail("the call succeeded"), (err) => err);
const servers = [];
const serve = async (script, on) => {
	const s = await scripted(script, on);
	servers.push(s);
	return s;
};
after(async () => {
	for (const s of servers) await s.close();
});

describe("answers hostd's server frames", () => {
	test("Content-Length answers; the request carries Host, the JSON body and its length; one connection serves every call", async () => {
		const s = await serve((req, sock) => sock.write(json(200, `{"echo":${req.body}}`)));
		for (let i = 0; i < 3; i++) {
			const a = await postJSON(s.url, "/v1/before", `{"n":${i}}`, 2000);
			assert.deepEqual([a.status, JSON.parse(a.text)], [200, { echo: { n: i } }]);
		}
		assert.match(s.requests[0].head, /^POST \/v1\/before HTTP\/1\.1\r\n/);
		assert.match(s.requests[0].head, new RegExp(`\\r\\nHost: ${new URL(s.url).host}\\r\\n`));
		assert.match(s.requests[0].head, /\r\nContent-Type: application\/json\r\nContent-Length: 7/);
		assert.equal(s.connections, 1);
	});

	test("chunked answers, with chunk extensions and trailers, split at every byte", async () => {
		const answer = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\n{"a":\r\n3\r\n"b"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n';
		const s = await serve(async (req, sock) => {
			for (const ch of answer) {
				sock.write(ch);
				await new Promise((r) => setImmediate(r));
			}
		});
		const first = await postJSON(s.url, "/p", "{}", 5000);
		assert.deepEqual(JSON.parse(first.text), { a: "b" });
		await postJSON(s.url, "/p", "{}", 5000);
		assert.equal(s.connections, 1, "a whole chunked answer leaves the connection reusable");
	});

	test("an answer framed by closing the connection; the next call opens a new one", async () => {
		const s = await serve((req, sock) => sock.end('HTTP/1.1 200 OK\r\n\r\n{"closed":true}'));
		assert.deepEqual(JSON.parse((await postJSON(s.url, "/p", "{}", 2000)).text), { closed: true });
		assert.deepEqual(JSON.parse((await postJSON(s.url, "/p", "{}", 2000)).text), { closed: true });
		assert.equal(s.connections, 2);
	});

	test("Connection: close is honoured; an interim 100 answer is skipped", async () => {
		const s = await serve((req, sock) => sock.write("HTTP/1.1 100 Continue\r\n\r\n" + json(503, '{"error":"busy"}', "Connection: close\r\n")));
		const a = await postJSON(s.url, "/p", "{}", 2000);
		assert.deepEqual([a.status, a.text], [503, '{"error":"busy"}']);
		await postJSON(s.url, "/p", "{}", 2000);
		assert.equal(s.connections, 2);
	});

	test("over hostd's Unix socket (unix:PATH and unix://PATH)", async () => {
		const dir = mkdtempSync(join(tmpdir(), "hostd-http-"));
		try {
			const s = await serve((req, sock) => sock.write(json(200, '{"ok":1}')), join(dir, "hostd.sock"));
			assert.equal((await postJSON(s.url, "/p", "{}", 2000)).text, '{"ok":1}');
			assert.equal((await postJSON(s.url.replace("unix:", "unix://"), "/p", "{}", 2000)).text, '{"ok":1}');
			assert.match(s.requests[0].head, /\r\nHost: localhost\r\n/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("a broken answer is an error the gate fails closed on", () => {
	for (const { name, answer, error } of [
		{ name: "not HTTP", answer: "SSH-2.0-OpenSSH\r\n\r\n", error: /not an HTTP\/1\.1 answer/ },
		{ name: "a malformed header", answer: "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", error: /malformed answer header/ },
		{ name: "two different lengths", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", error: /conflicting Content-Length/ },
		{ name: "a length that is not a number", answer: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", error: /malformed Content-Length/ },
		{ name: "a length over the limit", answer: `HTTP/1.1 200 OK\r\nContent-Length: ${maxAnswerBytes + 1}\r\n\r\n`, error: new RegExp(`over ${maxAnswerBytes}`) },
		{ name: "an unknown transfer encoding", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", error: /unsupported transfer encoding/ },
		{ name: "a malformed chunk", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", error: /malformed chunk size/ },
		{ name: "chunk data longer than its size", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n0\r\n\r\n", error: /malformed chunked answer/ },
		{ name: "headers that never end", answer: "HTTP/1.1 200 OK\r\n" + "X: y\r\n".repeat(20000), error: /answer headers over/ },
	]) {
		test(name, async () => {
			const s = await serve((req, sock) => sock.write(answer));
			const err = await rejection(postJSON(s.url, "/p", "{}", 2000));
			assert.equal(err.name, "BrokenAnswer");
			assert.match(err.message, error);
			await eventually("the connection of a broken answer is closed", () => s.open === 0);
		});
	}

	test("a connection closed mid-answer", async () => {
		const s = await serve((req, sock) => sock.end("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"));
		const err = await rejection(postJSON(s.url, "/p", "{}", 2000));
		assert.deepEqual([err.name, err.message], ["BrokenAnswer", "connection closed mid-answer"]);
	});

	test("no answer within the deadline is a TimeoutError, and the connection is closed", async () => {
		const s = await serve(() => {});
		const err = await rejection(postJSON(s.url, "/p", "{}", 150));
		assert.equal(err.name, "TimeoutError");
		await eventually("the timed-out connection is closed", () => s.open === 0);
	});

	test("nothing listening is the socket's own error", async () => {
		const s = await serve(() => {});
		await s.close();
		const err = await rejection(postJSON(s.url, "/p", "{}", 2000));
		assert.equal(err.code, "ECONNREFUSED");
	});

	test("https:// is refused with a message naming the URL", async () => {
		const err = await rejection(Promise.resolve().then(() => postJSON("https://127.0.0.1:1", "/p", "{}", 2000)));
		assert.match(err.message, /https:\/\/127\.0\.0\.1:1: hostd is reached over http:\/\/ or unix:PATH/);
	});

	test("bytes after a whole answer: the answer stands, the connection is not reused", async () => {
		const s = await serve((req, sock) => sock.write(json(200, "{}") + "HTTP/1.1 200 OK\r\n"));
		assert.equal((await postJSON(s.url, "/p", "{}", 2000)).text, "{}");
		await postJSON(s.url, "/p", "{}", 2000);
		assert.equal(s.connections, 2);
	});
});

describe("connections", () => {
	test("at most 16 at once: 40 concurrent calls all answered over 16 connections", async () => {
		// Answers are held until 16 requests wait or none has come for
		// 200 ms, so every connection the client may open is open at once.
		const held = [];
		let flush;
		const answerAll = () => held.splice(0).forEach((f) => f());
		const s = await serve((req, sock) => {
			held.push(() => sock.write(json(200, req.body)));
			clearTimeout(flush);
			if (held.length >= 16) answerAll();
			else flush = setTimeout(answerAll, 200);
		});
		const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => postJSON(s.url, "/p", String(i), 5000)));
		assert.deepEqual(
			answers.map((a) => Number(a.text)),
			Array.from({ length: 40 }, (_, i) => i),
		);
		assert.equal(s.maxOpen, 16);
	});

	test("a call waiting for a connection times out with the rest of its deadline", async () => {
		const s = await serve(() => {});
		const calls = Array.from({ length: 17 }, () => rejection(postJSON(s.url, "/p", "{}", 200)));
		for (const err of await Promise.all(calls)) assert.equal(err.name, "TimeoutError");
	});

	test("a connection hostd closes while idle is dropped; the next call opens a new one", async () => {
		const s = await serve((req, sock) => {
			sock.write(json(200, "{}"));
			setTimeout(() => sock.end(), 10);
		});
		await postJSON(s.url, "/p", "{}", 2000);
		// Both ends have closed once the server's socket has.
		await eventually("hostd's side has closed", () => s.open === 0);
		assert.equal((await postJSON(s.url, "/p", "{}", 2000)).status, 200);
		assert.equal(s.connections, 2);
	});

	test(`an idle connection is closed after ${idleCloseMs} ms, inside hostd's idle timeout`, async () => {
		const s = await serve((req, sock) => sock.write(json(200, "{}")));
		await postJSON(s.url, "/p", "{}", 2000);
		const t0 = Date.now();
		assert.equal(s.open, 1);
		await eventually("the idle connection is closed", () => s.open === 0, idleCloseMs + 3000);
		assert.ok(Date.now() - t0 >= idleCloseMs - 100, `closed after ${Date.now() - t0} ms, before ${idleCloseMs}`);
	});
});

describe("deadlines and idle close share one timer per connection", () => {
	test("calls on a kept connection set and clear no timer", async () => {
		const s = await serve((req, sock) => sock.write(json(200, "{}")));
		await postJSON(s.url, "/p", "{}", 35000);
		const counts = { set: 0, clear: 0 };
		const { setTimeout: set, clearTimeout: clear } = globalThis;
		globalThis.setTimeout = (...a) => (counts.set++, set(...a));
		globalThis.clearTimeout = (...a) => (counts.clear++, clear(...a));
		try {
			for (let i = 0; i < 100; i++) await postJSON(s.url, "/p", "{}", 35000);
		} finally {
			globalThis.setTimeout = set;
			globalThis.clearTimeout = clear;
		}
		assert.equal(s.connections, 1);
		assert.ok(counts.set + counts.clear <= 2, `100 calls set ${counts.set} timers and cleared ${counts.clear}`);
	});

	test("a reused connection's call still times out at its own, shorter deadline", async () => {
		let n = 0;
		const s = await serve((req, sock) => n++ === 0 && sock.write(json(200, "{}")));
		await postJSON(s.url, "/p", "{}", 35000);
		const t0 = Date.now();
		const err = await rejection(postJSON(s.url, "/p", "{}", 150));
		assert.equal(err.name, "TimeoutError");
		assert.ok(Date.now() - t0 < 1500, `timed out after ${Date.now() - t0} ms`);
		await eventually("the timed-out connection is closed", () => s.open === 0);
	});

	test(`a call in flight when the idle check comes (${idleCloseMs} ms) is answered, not closed`, async () => {
		let n = 0;
		const s = await serve((req, sock) => (n++ === 0 ? sock.write(json(200, "{}")) : setTimeout(() => sock.write(json(200, "{}")), idleCloseMs)));
		await postJSON(s.url, "/p", "{}", 35000);
		await new Promise((r) => setTimeout(r, 500));
		assert.equal((await postJSON(s.url, "/p", "{}", idleCloseMs + 3000)).status, 200);
		assert.equal(s.connections, 1);
	});
});

describe("warm: a session's first call finds its path ready", () => {
	test("warm opens a connection with GET /healthz (no decision); the first call reuses it", async () => {
		const s = await serve((req, sock) => sock.write(json(200, req.head.startsWith("GET") ? "ok" : "{}")));
		await warm(s.url, 2000);
		assert.equal(s.connections, 1);
		assert.match(s.requests[0].head, /^GET \/healthz HTTP\/1\.1\r\nHost: /);
		assert.equal((await postJSON(s.url, "/v1/before", "{}", 2000)).status, 200);
		assert.equal(s.connections, 1);
		assert.match(s.requests[1].head, /^POST \/v1\/before /);
	});

	test("with a connection already idle, warm sends nothing", async () => {
		const s = await serve((req, sock) => sock.write(json(200, "{}")));
		await postJSON(s.url, "/v1/before", "{}", 2000);
		await warm(s.url, 2000);
		assert.equal(s.requests.length, 1);
		assert.equal(s.connections, 1);
	});

	test("warm with hostd unreachable or answering an error resolves; the call reports it and fails closed", async () => {
		const down = await serve(() => {});
		await down.close();
		await warm(down.url, 500);
		assert.ok((await rejection(postJSON(down.url, "/v1/before", "{}", 500))).code, "the call's socket error");
		const broken = await serve((req, sock) => sock.write(json(503, "{}")));
		await warm(broken.url, 500);
		assert.equal((await postJSON(broken.url, "/v1/before", "{}", 500)).status, 503);
	});
});

describe("lanes: warm calls never hold a call's connection", () => {
	test("a call while a warm lane's exchange is in flight goes on its own connection and is answered first", async () => {
		let held;
		const s = await serve((req, sock) => {
			if (req.head.startsWith("POST /v1/warm/")) held = () => sock.write(json(200, "{}"));
			else sock.write(json(200, '{"real":true}'));
		});
		const warmCall = postJSON(s.url, "/v1/warm/before", "{}", 2000, "warm");
		await eventually("the warm request arrives", () => held);
		const real = await postJSON(s.url, "/v1/before", "{}", 2000);
		assert.deepEqual(JSON.parse(real.text), { real: true }, "answered while the warm exchange is still open");
		held();
		assert.equal((await warmCall).status, 200);
		assert.equal(s.connections, 2);
	});

	test("closeLane closes the lane's idle connections only; the lane's next call reconnects", async () => {
		const s = await serve((req, sock) => sock.write(json(200, "{}")));
		await postJSON(s.url, "/v1/before", "{}", 2000);
		await postJSON(s.url, "/v1/warm/before", "{}", 2000, "warm");
		assert.equal(s.open, 2);
		closeLane(s.url, "warm");
		// At once: the closed connection is not reused before its close event.
		assert.equal((await postJSON(s.url, "/v1/warm/before", "{}", 2000, "warm")).status, 200);
		await eventually("the warm lane's first connection closes", () => s.open === 2 && s.connections === 3);
		await postJSON(s.url, "/v1/before", "{}", 2000);
		assert.deepEqual([s.connections, s.open], [3, 2], "the calls' connection was kept; the lane opened a new one");
	});
});

test("AnswerReader reads an answer pushed in pieces of every size", () => {
	const answer = Buffer.from(json(200, '{"x":"' + "y".repeat(300) + '"}'));
	for (const size of [1, 2, 7, 64, answer.length]) {
		const r = new AnswerReader();
		let done = false;
		for (let i = 0; i < answer.length; i += size) done = r.push(answer.subarray(i, i + size));
		assert.ok(done, `size ${size}`);
		assert.equal(JSON.parse(r.text()).x.length, 300);
	}
});
