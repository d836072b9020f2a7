// Times Pi's resource loader (DefaultResourceLoader of
// @mariozechner/pi-coding-agent) on a directory tree, for the Loadout
// resolution benchmark. Usage:
//   node load.mjs PI_PACKAGE_DIR ITERATIONS SKILLS_DIR...
// Prints one JSON line: cold (first load) and warm (median of the rest) ms,
// with what was loaded, so the harness can check both sides saw the same
// skills.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, iterArg, ...skillDirs] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(pkgDir, "dist", "index.js")).href);
const iterations = Math.max(1, Number(iterArg));

// An empty cwd and agent dir: Pi sees only the skill dirs we pass (no user
// or project config, no packages, no extensions, no themes).
const cwd = mkdtempSync(join(tmpdir(), "pi-cwd-"));
const agentDir = mkdtempSync(join(tmpdir(), "pi-agent-"));

async function once() {
  const start = process.hrtime.bigint();
  const loader = new pi.DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager: pi.SettingsManager.inMemory(),
    additionalSkillPaths: skillDirs,
    noExtensions: true,
    noThemes: true,
  });
  await loader.reload();
  const { skills, diagnostics } = loader.getSkills();
  // Render what Pi puts into the system prompt for skills, the counterpart of
  // Loadout's rendered context.
  const prompt = pi.formatSkillsForPrompt(skills);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, skills: skills.length, diagnostics: diagnostics.length, promptBytes: prompt.length };
}

const first = await once();
const warm = [];
let last = first;
for (let i = 1; i < iterations; i++) {
  last = await once();
  warm.push(last.ms);
}
warm.sort((a, b) => a - b);
const median = warm.length ? warm[Math.floor(warm.length / 2)] : first.ms;
console.log(JSON.stringify({
  version: pi.VERSION ?? null,
  coldMs: first.ms,
  warmMedianMs: median,
  warmMinMs: warm.length ? warm[0] : first.ms,
  skills: last.skills,
  diagnostics: last.diagnostics,
  promptBytes: last.promptBytes,
}));
