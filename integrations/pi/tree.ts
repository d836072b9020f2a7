// The materialized tree hostd writes, and the skills and prompt templates Pi
// discovers from it.

import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { createSyntheticSourceInfo, DefaultResourceLoader } from "@mariozechner/pi-coding-agent";
import type { ExtensionAPI, Skill } from "@mariozechner/pi-coding-agent";
import type { SandboxDecl } from "./sandbox.ts";
import { notify } from "./notify.ts";

// ---------------------------------------------------------------------------
// The materialized tree

/** Minimal view of manifest.json (docs/context-contract.md). */
export interface Manifest {
	hash?: string;
	activeSkills?: { name: string; files?: string[] }[];
	templates?: { name: string; variables?: string[] }[];
	commands?: { name: string; template: string }[];
	promptGuides?: { extension: string; text: string }[];
	tools?: { name: string; description?: string; inputSchema?: Record<string, unknown>; service?: { url: string }; mcp?: { url: string; tool: string }; executionMode?: string }[];
	hooks?: { event: string }[];
	catalog?: { kind: string; name: string; description?: string }[];
	messageTypes?: { extension?: string; type: string; inContext?: boolean; template?: string }[];
	sandbox?: SandboxDecl;
}

export class Tree {
	constructor(readonly dir: string) {}

	/**
	 * The current generation directory: OUT/..data resolved once, so every
	 * file read through it belongs to one context even while hostd swaps in a
	 * new one. A plain directory (no ..data) is used as it is.
	 */
	generation(): string {
		const data = join(this.dir, "..data");
		return existsSync(data) ? realpathSync(data) : this.dir;
	}

	present(): boolean {
		return existsSync(join(this.dir, "skills"));
	}

	async waitUntilPresent(ms: number): Promise<void> {
		const deadline = Date.now() + ms;
		while (!this.present() && Date.now() < deadline) {
			await new Promise((r) => setTimeout(r, 100));
		}
	}

	read(gen: string, name: string): string {
		return readFileSync(join(gen, name), "utf8");
	}

	/** manifest.json of a generation, parsed once (a generation never changes). */
	manifest(gen: string): Manifest {
		if (this.manifestCache?.gen !== gen) this.manifestCache = { gen, manifest: JSON.parse(this.read(gen, "manifest.json")) };
		return this.manifestCache.manifest;
	}

	private manifestCache: { gen: string; manifest: Manifest } | undefined;
}

export function trimNewlines(s: string): string {
	return s.replace(/^\n+|\n+$/g, "");
}

// ---------------------------------------------------------------------------
// Skills and prompt templates

export function registerResources(pi: ExtensionAPI, tree: Tree): void {
	const fromManifest = manifestSkillsHook();
	pi.on("resources_discover", async (_event, ctx) => {
		if (!tree.present()) {
			notify(ctx, `Loadout: no materialized context at ${tree.dir}; Pi starts without the Workspace's skills and templates`, "error");
			return {};
		}
		const gen = tree.generation();
		const skillsDir = join(gen, "skills");
		if (fromManifest && isAbsolute(skillsDir)) {
			const skills = winnersFromManifest(tree, gen);
			if (skills) manifestSkills.set(tree.dir, { skillsDir: resolve(skillsDir), skills });
			else manifestSkills.delete(tree.dir);
		}
		return { skillPaths: [skillsDir], promptPaths: [join(gen, "prompts")] };
	});
}

// Start-up from the manifest. Pi's loader reads and parses every SKILL.md of
// a skill path to learn each skill's name and description, which is most of
// Pi's start-up on a large Workspace; the manifest of the same generation
// already lists the winners with both (its catalog), and the tree puts each
// at skills/NAME/SKILL.md. Pi 0.73 gives an extension no way to hand it
// skills (resources_discover takes paths only), so the package wraps the
// loader's method that turns skill paths into skills: a path that is a
// Loadout generation's skills directory becomes the manifest's winners, with
// the same name, description, file and directory Pi's scan would give; any
// other path is still scanned by Pi. Pi reads a SKILL.md only when the skill
// is used. Where the loader is not what the wrapper expects (another Pi),
// or the manifest and the tree disagree, Pi scans the tree as before.

const wrapped = Symbol.for("loadout.dev/pi-manifest-skills");

/**
 * The winners to give Pi, by tree: the skills directory handed to Pi and its
 * skills. One map per process (Pi loads this module anew for every session,
 * and the wrapper is installed once), kept on globalThis.
 */
const manifestSkills: Map<string, { skillsDir: string; skills: Skill[] }> = ((globalThis as any)[wrapped] ??= new Map());

/** Wraps DefaultResourceLoader's skill loading once per process; false when Pi has no such method. */
function manifestSkillsHook(): boolean {
	const proto = (DefaultResourceLoader as any)?.prototype;
	if (!proto || typeof proto.updateSkillsFromPaths !== "function") return false;
	if (proto[wrapped]) return true;
	const original = proto.updateSkillsFromPaths;
	proto.updateSkillsFromPaths = function (this: any, skillPaths: string[], ...rest: unknown[]) {
		const given: Skill[][] = [];
		const scanned: string[] = [];
		for (const p of skillPaths) {
			const entry = [...manifestSkills.values()].find((e) => e.skillsDir === resolve(p));
			if (entry) given.push(entry.skills);
			else scanned.push(p);
		}
		if (given.length === 0) return original.call(this, skillPaths, ...rest);
		// Pi scans the other paths; its own result then gains the manifest's
		// winners (a name those paths already give wins: an extension's path
		// comes after the CLI's and the settings', so Pi's order holds), and
		// goes through the rest of Pi's method: an SDK skillsOverride, and
		// each skill's source info from the extension that gave the path.
		const override = this.skillsOverride;
		this.skillsOverride = (base: { skills: Skill[]; diagnostics: any[] }) => {
			const skills = [...base.skills];
			const diagnostics = [...base.diagnostics];
			const names = new Map(skills.map((s) => [s.name, s]));
			for (const s of given.flat()) {
				const winner = names.get(s.name);
				if (winner) {
					diagnostics.push({ type: "collision", message: `name "${s.name}" collision`, path: s.filePath, collision: { resourceType: "skill", name: s.name, winnerPath: winner.filePath, loserPath: s.filePath } });
					continue;
				}
				names.set(s.name, s);
				skills.push({ ...s });
			}
			const merged = { skills, diagnostics };
			return override ? override(merged) : merged;
		};
		try {
			original.call(this, scanned, ...rest);
		} finally {
			this.skillsOverride = override;
		}
		// A Pi whose method no longer ends in skillsOverride: let it scan.
		const first = given.flat()[0];
		if (first && !this.skills?.some((s: Skill) => s.name === first.name)) original.call(this, skillPaths, ...rest);
	};
	proto[wrapped] = true;
	return true;
}

/**
 * The winners of a generation as Pi's loader would make them from
 * skills/NAME/SKILL.md, from the manifest's catalog and one listing of
 * skills/ (no SKILL.md is read). undefined when the two disagree: Pi then
 * scans the tree itself.
 */
export function winnersFromManifest(tree: Tree, gen: string): Skill[] | undefined {
	let catalog: NonNullable<Manifest["catalog"]>;
	let dirs: string[];
	try {
		catalog = (tree.manifest(gen).catalog ?? []).filter((e) => e.kind === "skill");
		dirs = readdirSync(join(gen, "skills"));
	} catch {
		return undefined;
	}
	const listed = new Set(catalog.map((e) => e.name));
	const skillsDir = resolve(gen, "skills");
	if (dirs.length !== listed.size || !dirs.every((d) => listed.has(d))) return undefined;
	const skills: Skill[] = [];
	for (const e of catalog) {
		// Pi leaves out a skill without a description (Loadout publishes none).
		if (!e.description?.trim()) continue;
		const baseDir = `${skillsDir}/${e.name}`; // a listed directory's name: no separator, no dots
		const filePath = `${baseDir}/SKILL.md`;
		skills.push({
			name: e.name,
			description: e.description,
			filePath,
			baseDir,
			// As Pi's scan makes it; Pi's loader then puts the extension's own in its place.
			sourceInfo: createSyntheticSourceInfo(filePath, { source: "local", baseDir }),
			// Loadout lists every skill (disable-model-invocation is not part of its contract).
			disableModelInvocation: false,
		});
	}
	return skills;
}
