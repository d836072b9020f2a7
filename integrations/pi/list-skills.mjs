// Prints, as JSON on stdout, what the Pi agent's own skill loader (the pinned
// @mariozechner/pi-coding-agent, dist/core/skills.js) loads from one skills
// directory: {"skills": [{name, description, path}], "diagnostics": [{type,
// message, path}]}, paths relative to that directory and slash-separated.
// cmd/loadout's TestImport_LoadsWhatPiLoads compares `loadout import` with it.
//
// Usage: node list-skills.mjs SKILLS_DIR
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";

// The loader module itself, not the package index, which loads the whole
// agent (seconds); package.json's "exports" does not list it, so by path.
const { loadSkills } = await import(
	new URL("./node_modules/@mariozechner/pi-coding-agent/dist/core/skills.js", import.meta.url)
);

const dir = process.argv[2];
if (!dir) {
	console.error("usage: node list-skills.mjs SKILLS_DIR");
	process.exit(2);
}
const skillsDir = resolve(dir);
const rel = (p) => (p ? relative(skillsDir, p).split(sep).join("/") : p);

// Only the given directory: no user or project skills (includeDefaults), and
// an empty agent directory so nothing of the caller's ~/.pi is read.
const agentDir = mkdtempSync(join(tmpdir(), "pi-agent-"));
try {
	const { skills, diagnostics } = loadSkills({ cwd: skillsDir, agentDir, skillPaths: [skillsDir], includeDefaults: false });
	const out = {
		skills: skills.map((s) => ({ name: s.name, description: s.description, path: rel(s.filePath) })),
		diagnostics: diagnostics.map((d) => ({ type: d.type, message: d.message, path: rel(d.path) })),
	};
	process.stdout.write(JSON.stringify(out, null, 1) + "\n");
} finally {
	rmSync(agentDir, { recursive: true, force: true });
}
