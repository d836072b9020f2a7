// Loadout for Pi: runs the Pi coding agent on a Loadout Workspace's context.
//
// - Skills and prompt templates come from the materialized tree
//   (`loadout hostd --materialize DIR`), contributed through resources_discover,
//   so Pi's own skill list is the Workspace's winners. Pi gets their names and
//   descriptions from the tree's manifest.json and reads no SKILL.md at
//   start-up (a body when the skill is used).
// - The platform's text (its instructions and always-active skills, its
//   extensions' prompt guides, the denied tools) joins Pi's system prompt in
//   before_agent_start; the tenants' (their instructions, skills and guides)
//   goes in Pi's project section, each part under a heading naming its
//   namespace and saying it is project content (Pi already lists the skills,
//   so they are not listed again).
// - Every tool call, Pi's built-ins included, is asked of hostd
//   (POST /v1/before) and blocked with hostd's reason when denied. No answer
//   (unreachable, non-2xx, timeout, malformed) blocks too: the gate fails closed.
//   Each result goes to POST /v1/after, unless hostd's before answer said no
//   after hook observes the tool (afterHooks: false), where it would run nothing;
//   after hooks that did not run and their diagnostics are shown and counted.
// - Template slash commands render through hostd (POST /v1/render), so a
//   missing {{var}} is an error the user sees, never a half-filled prompt.
// - A command with steps (a template's spec.steps) runs them in order: each
//   tool step through the hooks (a runnable tool through POST /v1/tools, one
//   of Pi's own tools asked of POST /v1/before, run as Pi runs it, its result
//   sent to /v1/after), stopping at the first blocked or failed step with its
//   reason; then the message (each tool's result, each rendered template) is
//   sent.
// - The Workspace's lifecycle hooks (docs/hooks.md) run at Pi's events:
//   session_start (SessionStart), input (UserInput, then BeforeAgentStart on
//   the rendered prompt, where a denial can still stop the turn),
//   before_agent_start (the hooks' context joins the turn as a message),
//   tool_call (BeforeToolCall: rewritten arguments are checked against the
//   tool's schema and patched into Pi's mutable input), tool_result
//   (AfterToolResult and ToolFailure), session_before_compact (BeforeCompact,
//   whose summary Pi keeps), session_shutdown (SessionEnd), turn_start and
//   turn_end (TurnStart, TurnEnd), context (BeforeModelRequest, before each
//   model request), message_end of the model's messages (AfterModelResponse)
//   and agent_end (Stop: a denial sends its message as the next prompt). An
//   event without hooks costs nothing. Every hook sees the session (agent
//   pi) and Pi's cwd.
// - Typed messages hooks emit are kept in the session as custom messages of
//   their type. Custom messages of a type published with inContext: false
//   are dropped from every model request (Pi's context event); one with a
//   template reads to the model as the template renders it.
// - Each runnable registry tool (manifest.json tools with a `service` or an
//   `mcp` server) is
//   registered in Pi with its description and input schema, and runs through
//   hostd (POST /v1/tools/{name}), which checks the schema and runs the hooks
//   around the tool's Service; so the gate does not ask hostd about it twice.
//   Tools are registered at start-up: a context that adds one needs a new session.
//
// Configuration (environment):
//   LOADOUT_HOSTD_URL        hostd's base URL (default http://127.0.0.1:8181), or
//                            unix:PATH for hostd's --unix-socket
//   LOADOUT_CONTEXT_DIR      the materialized tree (default /var/run/loadout/tree)
//   LOADOUT_HOSTD_TIMEOUT_MS deadline per hostd call (default 35000: above the
//                            30 s longest hook timeout, so a slow hook is not
//                            cut short)
//   LOADOUT_TREE_WAIT_MS     how long start-up waits for the tree (default 30000)
//
// Each concern is one register* function below; new ones (runnable tools) are
// added the same way in loadoutExtension.
//
// The package is split along its registration seams: hostd.ts (the client),
// tree.ts (the tree, skills and prompt templates), prompt.ts (the system
// prompt), tools.ts (the tool gate and runnable tools), commands.ts (slash
// commands, their steps, the sandbox), events.ts (lifecycle hooks),
// messages.ts (custom message types); loadoutExtension wires them.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Hostd } from "./hostd.ts";
import { configFromEnv } from "./config.ts";
import { Tree, registerResources } from "./tree.ts";
import { registerSystemPrompt } from "./prompt.ts";
import { registerRunnableTools, registerToolGate } from "./tools.ts";
import { StepRunner, declaredSandbox, registerPrompts, registerSandbox } from "./commands.ts";
import { SessionHooks, registerSessionEvents, registerTurnEvents } from "./events.ts";
import { registerContextFilter } from "./messages.ts";

export default async function loadoutExtension(pi: ExtensionAPI): Promise<void> {
	const cfg = configFromEnv();
	const hostd = new Hostd(cfg);
	const tree = new Tree(cfg.contextDir);
	await tree.waitUntilPresent(cfg.treeWaitMs);
	registerResources(pi, tree);
	const session = new SessionHooks(tree, hostd);
	registerSystemPrompt(pi, tree, session);
	const runnable = registerRunnableTools(pi, tree, hostd);
	const sandboxed = registerSandbox(pi, tree);
	registerToolGate(pi, hostd, runnable, sandboxed ? undefined : () => declaredSandbox(tree));
	registerPrompts(pi, tree, hostd, session, new StepRunner(pi, hostd, runnable, sandboxed));
	registerSessionEvents(pi, hostd, session);
	registerTurnEvents(pi, hostd, session);
	registerContextFilter(pi, tree);
}

export { Tree, winnersFromManifest } from "./tree.ts";
export { configFromEnv, type LoadoutConfig } from "./config.ts";
