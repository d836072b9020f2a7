// Custom message types hooks emit: what stays out of the model's context, and
// how the rest reads to the model.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Tree } from "./tree.ts";
import { contextMessageType, messageText } from "./events.ts";

// ---------------------------------------------------------------------------
// Custom message types: what stays out of the model's context

/**
 * Drops custom messages whose type the context publishes with inContext:
 * false from every model request. They stay in the session (for the user
 * and for extensions), they just never reach the model.
 */
export function registerContextFilter(pi: ExtensionAPI, tree: Tree): void {
	type Rule = { inContext: boolean; template?: string };
	type Projection = {
		// By extension and type: a hook's typed message follows the
		// declaration of the extension that emitted it (details.extension),
		// so another extension declaring the same type name can neither hide
		// it from the model nor change how it reads.
		byExtension: Map<string, Rule>;
		// By type alone, for custom messages that name no extension: hidden
		// if any extension hides the type, a template only if one extension
		// declares the type.
		hidden: Set<string>;
		templates: Map<string, string>;
	};
	let cache: { gen: string; projection: Projection } | undefined;
	// undefined: the context cannot be read, so no custom type is known to
	// be in context, and only Loadout's own messages pass.
	const projection = (): Projection | undefined => {
		if (!tree.present()) return { byExtension: new Map(), hidden: new Set(), templates: new Map() };
		try {
			const gen = tree.generation();
			if (cache?.gen !== gen) {
				const types = tree.manifest(gen).messageTypes ?? [];
				const declared = new Map<string, number>();
				for (const t of types) declared.set(t.type, (declared.get(t.type) ?? 0) + 1);
				cache = {
					gen,
					projection: {
						byExtension: new Map(types.map((t) => [ruleKey(t.extension, t.type), { inContext: !!t.inContext, template: t.template }])),
						hidden: new Set(types.filter((t) => !t.inContext).map((t) => t.type)),
						templates: new Map(types.filter((t) => t.inContext && t.template && declared.get(t.type) === 1).map((t) => [t.type, t.template as string])),
					},
				};
			}
			return cache.projection;
		} catch {
			return cache?.projection;
		}
	};
	pi.on("context", async (event) => {
		const p = projection();
		if (p && p.byExtension.size === 0) return undefined;
		let changed = false;
		const messages: any[] = [];
		for (const m of event.messages as any[]) {
			if (m?.role !== "custom" || m.customType === contextMessageType) {
				messages.push(m);
				continue;
			}
			if (!p) {
				changed = true; // unreadable context: only Loadout's own messages pass
				continue;
			}
			const ext = typeof m.details?.extension === "string" ? m.details.extension : undefined;
			const rule = ext !== undefined ? p.byExtension.get(ruleKey(ext, m.customType)) : undefined;
			const hidden = rule ? !rule.inContext : p.hidden.has(m.customType);
			const template = rule ? (rule.inContext ? rule.template : undefined) : p.templates.get(m.customType);
			if (hidden) {
				changed = true;
				continue;
			}
			if (template) {
				changed = true;
				messages.push({ ...m, content: renderMessage(template, messageText(m)) });
				continue;
			}
			messages.push(m);
		}
		return changed ? { messages } : undefined;
	});
}

function ruleKey(extension: string | undefined, type: string): string {
	return `${extension ?? ""}\u0000${type}`;
}

/**
 * What the model reads for a message of a type with a template: the content
 * in place of every {{content}}, in one pass (hostd's exthost.RenderMessage).
 */
export function renderMessage(template: string, content: string): string {
	return template.split("{{content}}").join(content);
}
