// One Pi session start-up in a fresh node process, for bench.mjs's
// whole-process rows: Node's own start, loading Pi's modules, then the same
// session start-up bench.mjs times in one process. Prints one JSON line:
// ms since the process started (performance.now()) and the skills loaded.
//   node bench-start.mjs scan SKILLS_DIR...   plain Pi scanning the dirs
//   node bench-start.mjs package              Pi with this package (LOADOUT_CONTEXT_DIR)
//   node bench-start.mjs none                 Pi with no skills and no extension: the floor
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import { registerFauxProvider } from "@mariozechner/pi-ai";
import { captureUI, packageDir } from "./harness.mjs";

const [mode, ...dirs] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), "loadout-pi-start-"));
try {
	const faux = registerFauxProvider();
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey(faux.getModel().provider, "faux");
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const loaderOptions = {
		package: { additionalExtensionPaths: [packageDir], noExtensions: true },
		scan: { additionalSkillPaths: dirs, noExtensions: true },
		none: { noExtensions: true, noSkills: true },
	}[mode];
	const resourceLoader = new DefaultResourceLoader({ cwd: work, agentDir: work, settingsManager, ...loaderOptions });
	await resourceLoader.reload();
	const { session } = await createAgentSession({
		cwd: work,
		agentDir: work,
		model: faux.getModel(),
		thinkingLevel: "off",
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		resourceLoader,
		sessionManager: SessionManager.inMemory(work),
		settingsManager,
	});
	await session.bindExtensions({ uiContext: captureUI().ui });
	const ms = performance.now();
	if (mode !== "none" && !session.systemPrompt.includes("<name>skill-00000</name>")) throw new Error(`${mode}: the system prompt lists no skills`);
	process.stdout.write(JSON.stringify({ ms, skills: resourceLoader.getSkills().skills.length }) + "\n");
	session.dispose();
	faux.unregister();
} finally {
	rmSync(work, { recursive: true, force: true });
}
