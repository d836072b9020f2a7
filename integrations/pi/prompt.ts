// The system prompt: the platform's text, and the tenants' in Pi's project
// section.

import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { texts } from "./hostd.ts";
import { Tree, trimNewlines } from "./tree.ts";
import { SessionHooks, contextMessageType, where } from "./events.ts";
import { notify } from "./notify.ts";

// ---------------------------------------------------------------------------
// System prompt: the platform's text, and the tenants' in the project section

/** The Workspace's texts, cached per generation. */
let promptCache: { gen: string; text: string; project: string } | undefined;

function readPrompts(tree: Tree, gen: string): { text: string; project: string } {
	if (promptCache?.gen === gen) return promptCache;
	// Written by hostd (internal/materialize), composed once in Go for every
	// agent from the manifest's provenance; the package adds them as they
	// are and parses no Markdown. workspace-prompt.md is the platform's text
	// only (its instructions and active skills, its extensions' prompt
	// guides, the denied tools), the same as Claude Code's managed CLAUDE.md;
	// project-prompt.md is the tenants' text, each part under a heading
	// naming its namespace and saying it is project content.
	const text = trimNewlines(tree.read(gen, "workspace-prompt.md"));
	let project = "";
	if (existsSync(join(gen, "project-prompt.md"))) project = trimNewlines(tree.read(gen, "project-prompt.md"));
	promptCache = { gen, text, project };
	return promptCache;
}

/** The platform's part of the system prompt (workspace-prompt.md). */
export function workspacePrompt(tree: Tree, gen: string): string {
	return readPrompts(tree, gen).text;
}

/** The tenants' part (project-prompt.md): project content, never policy. */
export function projectPrompt(tree: Tree, gen: string): string {
	return readPrompts(tree, gen).project;
}

/** Pi's project section and the line that opens its list (Pi's buildSystemPrompt). */
const projectSection = "# Project Context\n\nProject-specific instructions and guidelines:\n\n";

/**
 * Puts the tenants' text in Pi's project section, where Pi puts the
 * project's own AGENTS.md files: at the top of that section, or in a new one
 * where Pi would have put it (before its skill list and the closing date
 * line). The platform's text is appended after Pi's own prompt.
 */
export function withProjectContent(systemPrompt: string, project: string): string {
	if (!project) return systemPrompt;
	const i = systemPrompt.indexOf("\n\n" + projectSection);
	if (i >= 0) {
		const at = i + 2 + projectSection.length;
		return systemPrompt.slice(0, at) + project + "\n\n" + systemPrompt.slice(at);
	}
	let at = systemPrompt.indexOf("\n\nThe following skills provide specialized instructions");
	if (at < 0) at = systemPrompt.lastIndexOf("\nCurrent date: ");
	if (at < 0) at = systemPrompt.length;
	return systemPrompt.slice(0, at) + "\n\n" + projectSection + project + "\n\n" + systemPrompt.slice(at);
}

export function registerSystemPrompt(pi: ExtensionAPI, tree: Tree, session?: SessionHooks): void {
	pi.on("before_agent_start", async (event, ctx) => {
		// Context the lifecycle hooks added (SessionStart, UserInput,
		// BeforeAgentStart) joins this turn as a message the model reads
		// and the session keeps.
		const context = session?.takeContext();
		const message = context ? { message: { customType: contextMessageType, content: context, display: false } } : {};
		if (!tree.present()) return context ? message : undefined;
		let platform: string;
		let project: string;
		try {
			({ text: platform, project } = readPrompts(tree, tree.generation()));
		} catch (err: any) {
			notify(ctx, `Loadout: reading the Workspace context in ${tree.dir}: ${err?.message ?? err}`, "error");
			return context ? message : undefined;
		}
		if (!platform && !project) return context ? message : undefined;
		let systemPrompt = withProjectContent(event.systemPrompt, project);
		if (platform) systemPrompt += "\n\n" + platform + "\n";
		return { ...message, systemPrompt };
	});
}
