// The declared sandbox (docs/security.md, "Sandbox") in a real Pi session:
// with a platform extension declaring "edit the tree, never delete in it",
// Pi's bash runs through `loadout sandbox`, so a delete the shell guard
// cannot read (the sandbox corpus's lines) leaves the tree intact while an edit in
// it succeeds, and the refusal reaches the model naming the sandbox; Pi's
// write tool writes inside the tree and is refused outside it; a connect to
// an undeclared port is refused, and so is a host the sandbox does not name
// (the declared one is reached through the egress proxy); each refusal
// reaches hostd's decision ledger through a platform after hook.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { fauxToolCall, loadoutBinary, mountConfigMap, previewSamples, repoRoot, textOf } from "../harness.mjs";
import { callThenStop, callsThenStop, samplesWith, suiteHostd, withPi } from "./helpers.mjs";

const tree = mkdtempSync(join(tmpdir(), "loadout-protected-"));
const outside = mkdtempSync(join(tmpdir(), "loadout-outside-"));
mkdirSync(join(tree, "v", "a"), { recursive: true });
writeFileSync(join(tree, "v", "a", "b.txt"), "keep\n");
writeFileSync(join(tree, "v", "c.txt"), "keep\n");
// shellcorpus's scratch tree (x files two levels deep, docs, README,
// build.log, an empty e) for the deleting corpus.
for (const f of ["x/a/b/c.txt", "x/a/d.txt", "x/e.txt", "docs/guide.md", "README", "build.log"]) {
	mkdirSync(join(tree, f, ".."), { recursive: true });
	writeFileSync(join(tree, f), "rm -rf is mentioned here\n");
}
mkdirSync(join(tree, "e"));
const xFiles = ["x/a/b/c.txt", "x/a/d.txt", "x/e.txt"];
/** Every deleting line of the Go corpus (internal/test/shellcorpus/deleting.json) whose programs are here. */
const deleting = JSON.parse(readFileSync(join(repoRoot, "internal", "test", "shellcorpus", "deleting.json"), "utf8")).filter((l) =>
	(l.needs ?? []).every((p) => spawnSync("sh", ["-c", `command -v ${p}`]).status === 0),
);

// The one host the sandbox names (network.hosts), and another it does not:
// each answers with its own address (all of 127/8 is loopback on Linux).
const hello = (req, res) => res.end(`hello from ${req.headers.host}`);
const listening = (ip) =>
	new Promise((resolve) => {
		const srv = createServer(hello).listen(0, ip, () => resolve(srv));
		srv.unref();
	});
const declaredHost = await listening("127.0.0.2");
const otherHost = await listening("127.0.0.3");
const declared = `127.0.0.2:${declaredHost.address().port}`;
const undeclared = `127.0.0.3:${otherHost.address().port}`;

const data = samplesWith((dir) =>
	writeFileSync(
		join(dir, "platform_extension_sandbox.yaml"),
		`apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: sandbox, namespace: loadout-system}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /, access: [read, execute]}
        - {path: ${tree}, access: [read, write, create, execute]}
    network: {connectPorts: [9], hosts: ["${declared}"]}
  hooks:
    # What the sandbox refused, in hostd's decision ledger (docs/security.md).
    - name: sandbox-denials
      event: AfterToolResult
      match: {tools: [shell, write, edit]}
      cel:
        expression: "!result.content.exists(c, c.type == 'text' && c.text.contains('[loadout sandbox]'))"
        message: the platform's sandbox refused an access
`,
	),
);

describe("Pi under a declared sandbox", () => {
	const hostd = suiteHostd(data);
	const withSandbox = (responses, body) => {
		process.env.LOADOUT_SANDBOX_BIN = loadoutBinary();
		process.env.LOADOUT_SANDBOX_FROM = hostd.contextDir;
		return withPi(hostd, responses, body);
	};

	test("bash: a delete the guard cannot read leaves the tree intact; an edit in it succeeds", async () => {
		const command = `cd ${tree} && python3 -c 'import shutil as s; s.__dict__["r"+"mtree"]("v")'; find v -type f -exec unlink {} \\; ; echo edited > v/c.txt; cat v/c.txt`;
		await withSandbox(callThenStop("bash", { command }), async (pi) => {
			await pi.session.prompt("clean up");
			const [result] = pi.toolResults();
			const text = textOf(result);
			assert.match(text, /Permission denied|Operation not permitted/, text);
			assert.match(text, /\[loadout sandbox\] the platform's sandbox refused an access/, text);
			assert.match(text, /edited/, text);
		});
		assert.equal(readFileSync(join(tree, "v", "a", "b.txt"), "utf8"), "keep\n");
		assert.equal(readFileSync(join(tree, "v", "c.txt"), "utf8"), "edited\n");
	});

	test("bash: every deleting line of the corpus (the sandbox corpus, the guard's spellings of rm -r) leaves the tree intact", async () => {
		assert.ok(deleting.length >= 60, `${deleting.length} deleting lines runnable here`);
		const calls = deleting.map((l, i) => fauxToolCall("bash", { command: `cd ${tree} && ${l.line}` }, { id: `del${i}` }));
		await withSandbox(callsThenStop(calls), async (pi) => {
			await pi.session.prompt("clean up");
			assert.equal(pi.toolResults().length, deleting.length, "every line got a result");
		});
		for (const f of xFiles) assert.equal(readFileSync(join(tree, f), "utf8"), "rm -rf is mentioned here\n", `${f} after the corpus`);
	});

	test("bash: a TCP connect to an undeclared port is refused (hostd's, which Pi itself still reaches)", async () => {
		const port = new URL(hostd.url).port;
		await withSandbox(callThenStop("bash", { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected` }), async (pi) => {
			await pi.session.prompt("connect");
			const text = textOf(pi.toolResults()[0]);
			assert.doesNotMatch(text, /connected/, text);
			assert.match(text, /Permission denied[\s\S]*\[loadout sandbox\]/, text);
		});
	});

	test("bash: the declared host is reached by name through the egress proxy; another host is refused naming the rules", async () => {
		const command = `python3 -c '
import urllib.error, urllib.request as u
print(u.urlopen("http://${declared}/").read().decode())
try:
    u.urlopen("http://${undeclared}/")
    print("undeclared reached")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
'`;
		await withSandbox(callThenStop("bash", { command }), async (pi) => {
			await pi.session.prompt("fetch");
			const text = textOf(pi.toolResults()[0]);
			assert.match(text, new RegExp(`hello from ${declared}`), text);
			assert.doesNotMatch(text, /undeclared reached/, text);
			assert.ok(text.includes(`403 [loadout sandbox] egress to ${undeclared} refused: the sandbox's network.hosts allow ${declared}`), text);
		});
	});

	test("write: inside the tree it writes, outside it is refused", async () => {
		await withSandbox(callThenStop("write", { path: join(tree, "v", "new.txt"), content: "new\n" }), async (pi) => {
			await pi.session.prompt("write it");
			const [result] = pi.toolResults();
			assert.equal(result.isError, false, textOf(result));
		});
		assert.equal(readFileSync(join(tree, "v", "new.txt"), "utf8"), "new\n");
		await withSandbox(callThenStop("write", { path: join(outside, "escape.txt"), content: "x\n" }), async (pi) => {
			await pi.session.prompt("write it");
			const [result] = pi.toolResults();
			assert.equal(result.isError, true, textOf(result));
			assert.match(textOf(result), /Permission denied[\s\S]*\[loadout sandbox\]/, textOf(result));
		});
		assert.ok(!existsSync(join(outside, "escape.txt")), "written outside the declared paths");
	});

	test("hostd's ledger records each refusal the sandbox reported", async () => {
		await hostd.stop();
		const records = hostd
			.log()
			.split("\n")
			.filter((l) => l.startsWith('{"ledger":'))
			.map((l) => JSON.parse(l));
		const denials = records.filter((r) => r.event === "AfterToolResult" && r.hooks?.some((h) => h.hook === "sandbox-denials" && h.outcome === "audit"));
		// The single calls: the first bash, the connect, the host refused,
		// the write outside.
		assert.deepEqual(
			denials.filter((r) => !r.callId.startsWith("del")).map((r) => r.tool),
			["bash", "bash", "bash", "write"],
			JSON.stringify(records.filter((r) => r.event === "AfterToolResult" && !r.callId.startsWith("del"))),
		);
		// The corpus lines the guard lets through (what it cannot read: 48 of
		// 112 here) ran and met the sandbox; the guard refused the rest.
		const corpus = denials.filter((r) => r.callId.startsWith("del")).length;
		assert.ok(corpus >= 30, `${corpus} of ${deleting.length} corpus lines recorded as sandbox refusals`);
	});
});

describe("Pi in a session that started without a sandbox", () => {
	const hostd = suiteHostd(previewSamples());

	test("once the context declares one, bash, write and edit are refused until a new session (fail closed)", async () => {
		await withPi(hostd, callThenStop("bash", { command: "echo ran" }), async (pi) => {
			mountConfigMap(hostd.contextDir, data);
			const manifest = join(hostd.treeDir, "manifest.json");
			for (let i = 0; i < 200 && !readFileSync(manifest, "utf8").includes('"sandbox"'); i++) await new Promise((r) => setTimeout(r, 50));
			await pi.session.prompt("run it");
			const [result] = pi.toolResults();
			assert.equal(result.isError, true, textOf(result));
			assert.match(textOf(result), /the context now declares a sandbox this session does not run under; start a new session/);
		});
	});
});
