// The context's declared sandbox (manifest.json's sandbox, docs/security.md
// "Sandbox") for Pi, which has no sandbox of its own: every command Pi's bash
// tool runs, and every file its write and edit tools write, goes through
// `loadout sandbox`, which holds it to the declaration with Landlock (and
// refuses to run it where the kernel cannot). What the kernel refuses comes
// back to the model as the tool's error, with a line naming the sandbox.
//
// Configuration (environment):
//   LOADOUT_SANDBOX_BIN   the loadout binary (default: loadout from PATH)
//   LOADOUT_SANDBOX_FROM  the mounted context `loadout sandbox` reads
//                         (default /var/run/loadout/context)

import { spawn } from "node:child_process";
import {
	createBashToolDefinition,
	createEditToolDefinition,
	createWriteToolDefinition,
} from "@mariozechner/pi-coding-agent";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";

/** manifest.json's sandbox (contract.Sandbox). */
export interface SandboxDecl {
	filesystem?: { paths: { path: string; access: string[] }[] };
	network?: { connectPorts: number[] };
	unsandboxedAgents: string;
}

export interface SandboxConfig {
	bin: string;
	from: string;
}

export function sandboxConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
	return { bin: env.LOADOUT_SANDBOX_BIN || "loadout", from: env.LOADOUT_SANDBOX_FROM || "/var/run/loadout/context" };
}

/** A word quoted for bash. */
export function shellQuote(s: string): string {
	return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What the sandbox lets a command do, in one line, for an error the model reads. */
export function describeSandbox(s: SandboxDecl): string {
	const fs = s.filesystem ? s.filesystem.paths.map((p) => `${p.path} (${p.access.join(", ")})`).join("; ") : "unrestricted";
	const net = s.network ? (s.network.connectPorts.length ? `TCP ports ${s.network.connectPorts.join(", ")}` : "none") : "unrestricted";
	return `filesystem: ${fs}; network: ${net}`;
}

/** The kernel's refusals, as the commands print them. */
const denied = /Permission denied|Operation not permitted|EACCES|EPERM/;

/**
 * A note for a result the sandbox refused part of: the rules it holds, so
 * the model (and the after hooks, and hostd's ledger) can tell a sandbox
 * denial from any other failure.
 */
export function sandboxNote(s: SandboxDecl, output: string): string | undefined {
	if (!denied.test(output)) return undefined;
	return `[loadout sandbox] the platform's sandbox refused an access (EACCES/EPERM above); it allows ${describeSandbox(s)}. Deleting, or writing outside these paths, is not possible from this session.`;
}

/**
 * Runs argv under `loadout sandbox`, input on stdin; resolves with stdout,
 * rejects with what the command or the sandbox said.
 */
export function runSandboxed(cfg: SandboxConfig, s: SandboxDecl, argv: string[], input?: string | Buffer): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const child = spawn(cfg.bin, ["sandbox", "--from", cfg.from, "--", ...argv], { stdio: ["pipe", "pipe", "pipe"] });
		const out: Buffer[] = [];
		const err: Buffer[] = [];
		child.stdout.on("data", (b: Buffer) => out.push(b));
		child.stderr.on("data", (b: Buffer) => err.push(b));
		child.on("error", (e) => reject(new Error(`loadout sandbox: ${e.message}`)));
		child.on("close", (code) => {
			if (code === 0) return resolve(Buffer.concat(out));
			const said = Buffer.concat(err).toString("utf8").trim() || `exit status ${code}`;
			const note = sandboxNote(s, said);
			reject(new Error(note ? `${said}\n${note}` : said));
		});
		child.stdin.on("error", () => {}); // a command that exits early closes its stdin
		child.stdin.end(input ?? "");
	});
}

/**
 * Pi's bash, write and edit tools as their sandboxed twins for a session's
 * cwd: bash runs `exec loadout sandbox --from FROM -- bash -c COMMAND`, so
 * the command and everything it starts are held; write and edit read and
 * write files through `loadout sandbox` (cat, mkdir -p). The definitions
 * keep Pi's own schemas, descriptions and rendering.
 */
export function sandboxedTools(cfg: SandboxConfig, s: SandboxDecl, cwd: string): Record<string, ToolDefinition<any, any>> {
	const bash = createBashToolDefinition(cwd, {
		spawnHook: (c) => ({ ...c, command: `exec ${shellQuote(cfg.bin)} sandbox --from ${shellQuote(cfg.from)} -- bash -c ${shellQuote(c.command)}` }),
	});
	const writeFile = async (path: string, content: string) => {
		await runSandboxed(cfg, s, ["sh", "-c", 'cat > "$1"', "sh", path], content);
	};
	const write = createWriteToolDefinition(cwd, {
		operations: { writeFile, mkdir: async (dir) => void (await runSandboxed(cfg, s, ["mkdir", "-p", dir])) },
	});
	const edit = createEditToolDefinition(cwd, {
		operations: {
			readFile: (path) => runSandboxed(cfg, s, ["cat", path]),
			writeFile,
			// access(2) is not checked by Landlock; the write itself is.
			access: async (path) => void (await runSandboxed(cfg, s, ["test", "-r", path])),
		},
	});
	const noted = (def: ToolDefinition<any, any>): ToolDefinition<any, any> => ({
		...def,
		label: `${def.label ?? def.name} (sandboxed)`,
		async execute(id, params, signal, onUpdate, ctx) {
			try {
				const result = await def.execute(id, params, signal, onUpdate, ctx);
				const text = (result.content ?? []).map((c: any) => (c?.type === "text" ? c.text : "")).join("\n");
				const note = def.name === "bash" ? sandboxNote(s, text) : undefined;
				return note ? { ...result, content: [...result.content, { type: "text", text: note }] } : result;
			} catch (err: any) {
				const why = err?.message ?? String(err);
				const note = def.name === "bash" && !why.includes("[loadout sandbox]") ? sandboxNote(s, why) : undefined;
				throw new Error(note ? `${why}\n${note}` : why);
			}
		},
	});
	return { bash: noted(bash), write: noted(write), edit: noted(edit) };
}
