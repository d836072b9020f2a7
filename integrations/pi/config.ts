// The package's configuration, from the environment (index.ts lists the
// variables).

export interface LoadoutConfig {
	hostdUrl: string;
	contextDir: string;
	timeoutMs: number;
	treeWaitMs: number;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): LoadoutConfig {
	return {
		hostdUrl: (env.LOADOUT_HOSTD_URL || "http://127.0.0.1:8181").replace(/\/+$/, ""),
		contextDir: env.LOADOUT_CONTEXT_DIR || "/var/run/loadout/tree",
		timeoutMs: positive(env.LOADOUT_HOSTD_TIMEOUT_MS, 35000),
		treeWaitMs: positive(env.LOADOUT_TREE_WAIT_MS, 30000),
	};
}

function positive(v: string | undefined, fallback: number): number {
	const n = Number(v);
	return v && Number.isFinite(n) && n > 0 ? n : fallback;
}
