// winnersFromManifest: the skills the package gives Pi at start-up, from
// manifest.json's catalog and one listing of skills/, and when it gives none
// (Pi then scans the tree itself).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createJiti } from "jiti";
import { loadSkills } from "@mariozechner/pi-coding-agent";

const jiti = createJiti(import.meta.url);
const { Tree, winnersFromManifest } = await jiti.import("../index.ts");

const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A generation with these catalog skills and these skill directories (each with a SKILL.md saying the same). */
function generation(catalog, skillDirs = catalog.map((e) => e.name)) {
	const gen = mkdtempSync(join(tmpdir(), "loadout-gen-"));
	dirs.push(gen);
	writeFileSync(join(gen, "manifest.json"), JSON.stringify({ catalog: [{ kind: "template", name: "review", description: "t" }, ...catalog.map((e) => ({ kind: "skill", ...e }))] }));
	mkdirSync(join(gen, "skills"));
	for (const name of skillDirs) {
		const e = catalog.find((c) => c.name === name) ?? { name, description: "not in the manifest" };
		mkdirSync(join(gen, "skills", name));
		writeFileSync(join(gen, "skills", name, "SKILL.md"), `---\nname: ${name}\ndescription: ${JSON.stringify(e.description)}\n---\nBody of ${name}.\n`);
	}
	return gen;
}

const catalog = [
	{ name: "review", description: "Review a change." },
	{ name: "deploy", description: "Deploy: carefully <and> 'quoted'." },
];

test("the winners are Pi's own scan of the tree, in the manifest's order", () => {
	const gen = generation(catalog);
	const skills = winnersFromManifest(new Tree(gen), gen);
	assert.deepEqual(skills.map((s) => s.name), ["review", "deploy"]);
	const scanned = loadSkills({ cwd: gen, skillPaths: [join(gen, "skills")], includeDefaults: false }).skills;
	const byName = (list) => Object.fromEntries(list.map((s) => [s.name, s]));
	assert.deepEqual(byName(skills), byName(scanned));
});

test("a skill directory the manifest does not list, or a listed skill with no directory: none (Pi scans)", () => {
	const extra = generation(catalog, ["review", "deploy", "stray"]);
	assert.equal(winnersFromManifest(new Tree(extra), extra), undefined);
	const missing = generation(catalog, ["review"]);
	assert.equal(winnersFromManifest(new Tree(missing), missing), undefined);
});

test("no manifest or no skills/: none (Pi scans)", () => {
	const gen = mkdtempSync(join(tmpdir(), "loadout-gen-"));
	dirs.push(gen);
	assert.equal(winnersFromManifest(new Tree(gen), gen), undefined);
});

test("a skill without a description is left out, as Pi's loader leaves it out", () => {
	const gen = generation([...catalog, { name: "empty", description: "" }], ["review", "deploy", "empty"]);
	assert.deepEqual(winnersFromManifest(new Tree(gen), gen).map((s) => s.name), ["review", "deploy"]);
});
