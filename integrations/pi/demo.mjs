// `make demo`'s Pi step: a real Pi session (this package loaded as a Pi
// package) on the Workspace that hostd serves, with a SCRIPTED model: Pi's
// faux provider replays fixed turns, no LLM is called. Pi lists the
// Workspace's skills, the model asks for `rm -rf build`, the platform's hook
// denies it through hostd and Pi shows why. Exits non-zero if any of that
// does not happen.
//   LOADOUT_HOSTD_URL=http://127.0.0.1:8181 LOADOUT_CONTEXT_DIR=/path/to/tree node demo.mjs
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall, packageDir, piSession, textOf } from "./harness.mjs";

const hostdUrl = process.env.LOADOUT_HOSTD_URL || "http://127.0.0.1:8181";
const treeDir = process.env.LOADOUT_CONTEXT_DIR;
if (!treeDir) throw new Error("LOADOUT_CONTEXT_DIR must name the materialized tree");
const piVersion = JSON.parse(readFileSync(join(packageDir, "node_modules/@mariozechner/pi-coding-agent/package.json"), "utf8")).version;

// The scripted model: turn 1 lists the skills Pi put in its system prompt and
// calls bash; turn 2 reports what happened to the call.
const listSkills = (context) => {
	const names = [...context.systemPrompt.matchAll(/<name>([^<]+)<\/name>\s*<description>([^<]*)<\/description>/g)];
	const list = names.map((m) => `- ${m[1]}: ${m[2].replace(/&apos;/g, "'")}`).join("\n");
	return fauxAssistantMessage([{ type: "text", text: `My skills from the Workspace:\n${list}\nNow cleaning the build directory.` }, fauxToolCall("bash", { command: "rm -rf build" })], {
		stopReason: "toolUse",
	});
};
const report = (context) => {
	const result = context.messages.filter((m) => m.role === "toolResult").at(-1);
	return fauxAssistantMessage(`The platform blocked that command: ${textOf(result)}`);
};

const pi = await piSession({ hostdUrl, treeDir, responses: [listSkills, report] });
const say = (s = "") => process.stdout.write(s + "\n");
try {
	say(`Pi ${piVersion} (@mariozechner/pi-coding-agent) with the Loadout package (integrations/pi).`);
	say("The model is SCRIPTED: Pi's faux provider replays two fixed turns; no LLM is called.");
	say(`hostd ${hostdUrl}; materialized tree ${treeDir}`);
	say();
	const skills = pi.resourceLoader.getSkills().skills;
	say("Pi's own skill list (loaded from the tree through resources_discover):");
	for (const s of skills) say(`  ${s.name}: ${s.description}`);
	say("Pi's prompt templates: " + pi.resourceLoader.getPrompts().prompts.map((p) => "/" + p.name).join(", "));
	say();
	await pi.session.prompt("Which skills do you have? Then clean the build directory.");
	for (const m of pi.session.messages) {
		if (m.role === "user") say(`user> ${textOf(m)}`);
		if (m.role === "assistant") {
			const text = textOf(m);
			if (text) say(`pi (scripted)> ${text.replace(/\n/g, "\n    ")}`);
			for (const c of m.content.filter((c) => c.type === "toolCall")) say(`pi (scripted)> calls ${c.name} ${JSON.stringify(c.arguments)}`);
		}
		if (m.role === "toolResult") say(`tool ${m.toolName} -> ${m.isError ? "BLOCKED" : "ok"}: ${textOf(m)}`);
	}
	const denied = pi.toolResults().find((r) => r.toolName === "bash");
	if (!skills.length || !denied?.isError || !/platform policy/.test(textOf(denied)) || existsSync(join(pi.cwd, "build"))) {
		throw new Error("the Pi session did not show the Workspace's skills and the platform's denial");
	}
	say();
	say("The bash call never ran: Pi asked hostd (POST /v1/before), the platform-guard hook denied it, and Pi gave the model hostd's reason.");
} finally {
	pi.dispose();
}
