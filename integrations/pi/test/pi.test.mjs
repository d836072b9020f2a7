// Real Pi sessions (Pi's SDK, scripted `faux` model) loading this package,
// against a real `loadout hostd` serving the samples' context (config/samples,
// published by `loadout preview`, mounted as the kubelet mounts a ConfigMap).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs, { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { loadSkills } from "@mariozechner/pi-coding-agent";
import { fauxToolCall, packageDir, previewSamples, startHostd, textOf } from "../harness.mjs";
import { callsThenStop, callThenStop, fakeHostd, replies, suiteHostd, suiteHostdWithReviewNotes, toolTurn, withPi } from "./helpers.mjs";

const data = previewSamples();
const manifest = JSON.parse(data["manifest.json"]);
const winners = manifest.catalog.filter((e) => e.kind === "skill");
const instructions = "You work on team-a's parser and runtime. Run `make test` before you\nsay a change is done.";
// The platform guard's message, as the samples publish it.
const platformReason = manifest.hooks.find((h) => h.extension === "platform-guard").cel.message;

describe("Pi on the samples' Workspace, with hostd running", () => {
	const hostd = suiteHostd(data);

	test("Pi's loaded skills are the Workspace's winners (names and descriptions), nothing shadowed", async () => {
		await withPi(hostd, [], async (pi) => {
			const skills = pi.resourceLoader.getSkills().skills.map((s) => ({ name: s.name, description: s.description }));
			assert.deepEqual(skills, winners.map((w) => ({ name: w.name, description: w.description })));
			const body = readFileSync(pi.resourceLoader.getSkills().skills[0].filePath, "utf8");
			assert.match(body, /PROJECT-REVIEW-BODY/);
			assert.doesNotMatch(body, /PLATFORM-REVIEW-BODY/);
			const prompts = pi.resourceLoader.getPrompts().prompts.map((p) => ({ name: p.name, description: p.description }));
			assert.deepEqual(prompts, manifest.templates.map((t) => ({ name: t.name, description: t.description })));
		});
	});

	test("Pi starts from the manifest: no SKILL.md is read at start-up, the same skills as Pi's own scan; /skill:NAME reads the body", async () => {
		// Pi's modules import readFileSync from "fs": patched on the builtin
		// and synced, every read Pi makes is seen.
		const read = [];
		const original = fs.readFileSync;
		fs.readFileSync = function (path, ...rest) {
			if (String(path).endsWith("SKILL.md")) read.push(String(path));
			return original.call(this, path, ...rest);
		};
		syncBuiltinESMExports();
		try {
			await withPi(hostd, replies("ok"), async (pi) => {
				assert.deepEqual(read, [], "SKILL.md files read at start-up");
				const skills = pi.resourceLoader.getSkills().skills;
				const scanned = loadSkills({ cwd: pi.cwd, skillPaths: [dirname(skills[0].baseDir)], includeDefaults: false }).skills;
				const plain = (list) => list.map(({ sourceInfo, ...s }) => s).sort((a, b) => a.name.localeCompare(b.name));
				assert.deepEqual(plain(skills), plain(scanned));
				assert.ok(skills.every((s) => s.sourceInfo?.source?.startsWith("extension:")), "source info is not the package's");
				read.length = 0;
				await pi.session.prompt(`/skill:${skills[0].name} go`);
				assert.deepEqual(read, [skills[0].filePath]);
				assert.match(textOf(pi.calls[0].messages.at(-1)), /PROJECT-REVIEW-BODY/);
			});
		} finally {
			fs.readFileSync = original;
			syncBuiltinESMExports();
		}
	});

	test("the pi CLI (the image's entrypoint) lists the winners as /skill commands without reading a SKILL.md", async () => {
		// A preload sees every readFileSync of Pi's (as the test above), in a
		// real `pi --mode rpc -ne -e PACKAGE` process.
		const preload = "data:text/javascript," + encodeURIComponent('import fs from "node:fs"; import { syncBuiltinESMExports } from "node:module"; const o = fs.readFileSync; fs.readFileSync = function (p, ...r) { if (String(p).endsWith("SKILL.md")) process.stderr.write("READ " + p + "\\n"); return o.call(this, p, ...r); }; syncBuiltinESMExports();');
		const home = mkdtempSync(join(tmpdir(), "pi-home-"));
		const proc = spawn(join(packageDir, "node_modules", ".bin", "pi"), ["--mode", "rpc", "-ne", "-e", packageDir, "--no-session"], {
			cwd: home,
			env: { ...process.env, HOME: home, NODE_OPTIONS: `--import=${preload}`, LOADOUT_HOSTD_URL: hostd.url, LOADOUT_CONTEXT_DIR: hostd.treeDir },
			stdio: ["pipe", "pipe", "pipe"],
		});
		let out = "";
		let err = "";
		proc.stderr.on("data", (b) => (err += b));
		try {
			const answer = await new Promise((resolve, reject) => {
				const timer = setTimeout(() => reject(new Error("pi --mode rpc did not answer get_commands:\n" + err)), 60000);
				proc.stdout.on("data", (b) => {
					out += b;
					const line = out.split("\n").find((l) => l.includes('"get_commands"'));
					if (line) {
						clearTimeout(timer);
						resolve(JSON.parse(line));
					}
				});
				proc.on("exit", (code) => reject(new Error(`pi exited ${code}:\n${err}`)));
				proc.stdin.write(JSON.stringify({ id: "1", type: "get_commands" }) + "\n");
			});
			const skills = answer.data.commands.filter((c) => c.source === "skill").map((c) => ({ name: c.name, description: c.description }));
			assert.deepEqual(skills, winners.map((w) => ({ name: `skill:${w.name}`, description: w.description })));
			assert.doesNotMatch(err, /READ .*SKILL\.md/);
		} finally {
			proc.kill("SIGTERM");
			rmSync(home, { recursive: true, force: true });
		}
	});

	test("Pi's system prompt holds the instructions, the active skill and the prompt guide, skills listed once", async () => {
		await withPi(hostd, replies("hello"), async (pi) => {
			await pi.session.prompt("hi");
			assert.equal(pi.calls.length, 1);
			const sp = pi.calls[0].systemPrompt;
			assert.ok(sp.includes(instructions), "instructions missing:\n" + sp);
			assert.ok(sp.includes("# Active skill: review\n\n# Project review\n\nPROJECT-REVIEW-BODY"), "active skill body missing:\n" + sp);
			assert.ok(sp.includes("## review: checklist.md\n\n- [ ] Every error path is tested."), "active skill file missing");
			assert.ok(sp.includes("Record each review finding with review_note"), "extension prompt guide missing");
			// Pi lists the skills (<available_skills>); Loadout's own list is not added again.
			assert.equal(sp.split("<name>review</name>").length - 1, 1);
			assert.ok(!sp.includes("Skills hold instructions for specific tasks"), "Loadout's skill list duplicated Pi's");
			assert.equal(sp.split("PROJECT-REVIEW-BODY").length - 1, 1);
		});
	});

	test("a bash call the platform hook denies never runs, and the model receives hostd's reason", async () => {
		// A spelling a substring test misses: the guard reads the parsed command line.
		await withPi(hostd, callThenStop("bash", { command: "touch MARKER && bash -c 'rm -r -f build'" }), async (pi) => {
			await pi.session.prompt("clean up");
			assert.ok(!existsSync(join(pi.cwd, "MARKER")), "the denied bash command ran");
			const [result] = pi.toolResults();
			assert.equal(result.toolName, "bash");
			assert.equal(result.isError, true);
			assert.equal(textOf(result), platformReason);
			// The model's next turn saw that result.
			const seen = pi.calls[1].messages.filter((m) => m.role === "toolResult");
			assert.equal(textOf(seen.at(-1)), platformReason);
		});
	});

	// The samples' only after hook observes review_note, so hostd's before
	// answer says afterHooks: false for bash and the result is not sent to
	// POST /v1/after, where it would run nothing (lifecycle.test.mjs has an
	// after hook on shell, which sees the call).
	test("an allowed call runs, and its result skips /v1/after when no after hook observes the tool", async () => {
		const afterBefore = await afterRequests(hostd.url);
		await withPi(hostd, callThenStop("bash", { command: "echo allowed > ALLOWED" }), async (pi) => {
			await pi.session.prompt("write a file");
			assert.equal(readFileSync(join(pi.cwd, "ALLOWED"), "utf8"), "allowed\n");
			const [result] = pi.toolResults();
			assert.equal(result.isError, false);
			assert.equal(await afterRequests(hostd.url), afterBefore, "a result no after hook observes was sent to /v1/after");
		});
	});

	test("over hostd's Unix socket (LOADOUT_HOSTD_URL=unix:PATH) the gate decides the same", async () => {
		const sock = join(mkdtempSync(join(tmpdir(), "loadout-sock-")), "hostd.sock");
		const onSocket = await startHostd(data, ["--unix-socket", sock]);
		try {
			const overSocket = { url: "unix:" + sock, treeDir: onSocket.treeDir };
			await withPi(overSocket, callThenStop("bash", { command: "touch MARKER && rm -rf build" }), async (denied) => {
				await denied.session.prompt("clean up");
				assert.ok(!existsSync(join(denied.cwd, "MARKER")), "the denied bash command ran");
				assert.equal(textOf(denied.toolResults()[0]), platformReason);
			});
			await withPi(overSocket, callThenStop("bash", { command: "echo allowed > ALLOWED" }), async (allowed) => {
				await allowed.session.prompt("write a file");
				assert.equal(readFileSync(join(allowed.cwd, "ALLOWED"), "utf8"), "allowed\n");
			});
		} finally {
			await onSocket.cleanup();
		}
	});

	test("/review renders the template through hostd", async () => {
		await withPi(hostd, replies("ok", "ok"), async (pi) => {
			await pi.session.prompt("/review src/parser.go runtime");
			const user = pi.calls[0].messages.filter((m) => m.role === "user").at(-1);
			assert.equal(textOf(user), "Review src/parser.go for runtime. Focus on src/parser.go.");
			await pi.session.prompt("/review owner=runtime file=src/lexer.go");
			const second = pi.calls[1].messages.filter((m) => m.role === "user").at(-1);
			assert.equal(textOf(second), "Review src/lexer.go for runtime. Focus on src/lexer.go.");
		});
	});

	test("/review with a missing {{var}} is an error the user sees, and nothing reaches the model", async () => {
		await withPi(hostd, replies("should not be called"), async (pi) => {
			await pi.session.prompt("/review src/parser.go");
			assert.equal(pi.calls.length, 0, "the model was called");
			const errors = pi.notes.filter((n) => n.type === "error");
			assert.equal(errors.length, 1);
			assert.match(errors[0].message, /^\/review: .*owner/);
		});
	});

	test("with hostd stopped, every call (bash, read, write, edit) is blocked with a reason that says so", async () => {
		const stopped = await startHostd(data);
		const calls = [
			fauxToolCall("bash", { command: "echo ran > RAN" }),
			fauxToolCall("read", { path: "README" }),
			fauxToolCall("write", { path: "WRITTEN", content: "x" }),
			fauxToolCall("edit", { path: "README", edits: [{ oldText: "a", newText: "b" }] }),
		];
		try {
			await withPi(stopped, callsThenStop(calls), async (pi) => {
				await stopped.stop();
				await pi.session.prompt("do things");
				assert.ok(!existsSync(join(pi.cwd, "RAN")) && !existsSync(join(pi.cwd, "WRITTEN")), "a call ran without hostd");
				const results = pi.toolResults();
				assert.deepEqual(results.map((r) => r.toolName).sort(), ["bash", "edit", "read", "write"]);
				for (const r of results) {
					assert.equal(r.isError, true);
					assert.match(textOf(r), new RegExp(`^Loadout blocked ${r.toolName}: hostd at ${stopped.url} is unreachable .*fail closed`));
				}
			});
		} finally {
			await stopped.cleanup();
		}
	});
});

describe("hostd answers that are not a verdict block the call", () => {
	const hostd = suiteHostd(data); // for the tree only

	for (const { name, handler, timeoutMs, reason } of [
		{ name: "a non-2xx answer", handler: (res) => res.writeHead(503).end('{"error":"no context loaded"}'), reason: /answered \/v1\/before with 503: no context loaded/ },
		{ name: "a timeout", handler: () => {}, timeoutMs: 200, reason: /did not answer \/v1\/before within 200 ms/ },
		{ name: "a 200 without a verdict", handler: (res) => res.writeHead(200).end("{}"), reason: /no "allowed" verdict/ },
		{ name: "a body that is not JSON", handler: (res) => res.writeHead(200).end("<html>"), reason: /not JSON/ },
	]) {
		test(`${name} blocks`, async () => {
			const fake = await fakeHostd((req, res) => handler(res));
			try {
				const answering = { url: fake.url, treeDir: hostd.treeDir };
				const blocked = async (pi) => {
					await pi.session.prompt("run");
					assert.ok(!existsSync(join(pi.cwd, "RAN")), "the call ran");
					const [result] = pi.toolResults();
					assert.equal(result.isError, true);
					assert.match(textOf(result), reason);
				};
				await withPi(answering, callThenStop("bash", { command: "echo ran > RAN" }), blocked, { timeoutMs });
			} finally {
				await fake.stop();
			}
		});
	}
});

/** hostd's count of POST /v1/after requests, from its metrics. */
async function afterRequests(url) {
	const text = await (await fetch(url + "/metrics")).text();
	let n = 0;
	for (const line of text.split("\n")) {
		if (line.startsWith("loadout_hostd_requests_total{") && line.includes('endpoint="after"')) n += Number(line.split(" ").at(-1));
	}
	return n;
}

describe("Pi runs the Workspace's runnable tools through hostd", () => {
	const reviewNote = manifest.tools.find((t) => t.name === "review_note");
	const served = suiteHostdWithReviewNotes(data);

	test("review_note appears in Pi with its registry description and input schema", async () => {
		await withPi(served.hostd, [], async (pi) => {
			const tool = pi.session.getAllTools().find((t) => t.name === "review_note");
			assert.ok(tool, "review_note is not a Pi tool: " + pi.session.getAllTools().map((t) => t.name));
			assert.equal(tool.description, reviewNote.description);
			assert.deepEqual(JSON.parse(JSON.stringify(tool.parameters)), reviewNote.inputSchema);
		});
	});

	test("an allowed note runs through /v1/tools and is recorded; a SECRET note is denied and never reaches the Service", async () => {
		const responses = [
			toolTurn(fauxToolCall("review_note", { text: "parser.go:42 drops an error" })),
			...callThenStop("review_note", { text: "the SECRET is 42" }),
		];
		await withPi(served.hostd, responses, async (pi) => {
			await pi.session.prompt("review parser.go");
			const [ok, secret] = pi.toolResults();
			assert.equal(ok.isError, false);
			assert.match(textOf(ok), /^note \d+ recorded$/);
			assert.equal(secret.isError, true);
			assert.match(textOf(secret), /review notes must not contain secrets/);
			const recorded = (await served.notes.notes()).map((n) => n.text);
			assert.ok(recorded.includes("parser.go:42 drops an error"), "the allowed note was not recorded: " + recorded);
			assert.ok(!recorded.some((t) => t.includes("SECRET")), "a SECRET note reached the Service: " + recorded);
		});
	});
});
