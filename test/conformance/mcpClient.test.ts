import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Plugin } from "esbuild";
import { describe, expect, it } from "vitest";
import { bundledFixture } from "../helpers/bundledFixture.js";
import { CLI_NODE_ARGS, SVC_ARGV } from "../helpers/cliEntry.js";
import { acquirePinnedPorts } from "../helpers/pinnedPortsLock.js";

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, client scenarios) against svc's
 * MCP client: the suite starts each scenario's server and runs svcClient.mjs with its URL, which drives
 * svc's CLI (`svc mcp login`, `svc mcp test` / `svc mcp call`, in the driver's process). docs/mcp-oauth.md lists the scenarios
 * not run here and why.
 */

const ROOT = join(import.meta.dirname, "../..");
const SUITE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const FS_WITH_GLOB_SYNC = join(import.meta.dirname, "fsWithGlobSync.mjs");
const DRIVER = join(import.meta.dirname, "svcClient.mjs");
const TSX_LOADER = join(ROOT, "node_modules/tsx/dist/loader.mjs");

/** Scenarios run one process of the suite each. */
const SINGLE = [
  "initialize",
  "tools_call",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "sse-retry",
  "elicitation-sep1034-client-defaults",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
] as const;

/**
 * Two of the suite's own groups, each run by one process of the suite (`--suite <name>`, its scenarios at
 * once): starting the suite costs about a second of CPU, more than most scenarios' own work.
 */
const GROUPS = {
  metadata: ["auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3"],
  "sep-835": [
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
  ],
} as const;
type Group = keyof typeof GROUPS;

/**
 * The one scenario whose login needs a pinned callback port free (a client metadata document is presented
 * only on one): it runs alone, after the others, holding the ports' lock (test/helpers/pinnedPortsLock.ts).
 * Beside other logins (in a group, or another test file's) one of them may hold that port.
 */
const NEEDS_PINNED_PORT = "auth/basic-cimd";

/** Runs of the suite (a single scenario or a group) under way at once. */
const CONCURRENCY = 3;

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/**
 * The suite imports `globSync` from "fs", which Node 20 lacks: its imports of "fs" are bundled as
 * fsWithGlobSync.mjs (by hand it runs with globSyncPreload.mjs, whose module hooks do the same at each
 * start). One bundle, with no hooks thread, starts in about half the CPU of the suite's ~300 module files.
 */
const fsWithGlobSync: Plugin = {
  name: "fs-with-glob-sync",
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs$/ }, (args) =>
      args.importer.includes("/@modelcontextprotocol/conformance/") ? { path: FS_WITH_GLOB_SYNC } : undefined,
    );
  },
};

let suiteBundle: Promise<string> | undefined;

async function runSuite(selection: readonly string[]): Promise<Run> {
  suiteBundle ??= bundledFixture(SUITE, { plugins: [fsWithGlobSync], commonJs: true });
  const suite = await suiteBundle;
  // The suite writes its results/ directory into its working directory: a temporary one.
  const cwd = mkdtempSync(join(tmpdir(), "svc-conformance-results-"));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        suite,
        "client",
        "--command",
        // The driver runs svc's CLI in its own process: with the source, through the same loader (by path:
        // the driver's working directory is the temporary one).
        [process.execPath, ...CLI_NODE_ARGS.map((arg) => (arg === "tsx" ? TSX_LOADER : arg)), DRIVER].join(
          " ",
        ),
        ...selection,
        // The suite's 30 s default is too short for svc's CLI started several times on a busy machine.
        "--timeout",
        "150000",
      ],
      {
        cwd,
        env: {
          ...process.env,
          NO_COLOR: "1",
          FORCE_COLOR: "0",
          SVC_CONFORMANCE_ARGV: JSON.stringify(SVC_ARGV),
        },
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => {
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, output });
    });
  });
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips terminal colours from the report
const plain = (output: string) => output.replace(/\x1b\[[0-9;]*m/g, "");

/** Every run once: singles and groups CONCURRENCY at a time, then the pinned-port scenario alone. */
function runAll(): Map<string, Promise<Run>> {
  const failed = (e: unknown): Run => ({ code: null, output: String(e) });
  const runs = new Map<string, Promise<Run>>();
  const resolvers = new Map<string, (r: Run) => void>();
  const keys = [...SINGLE, ...Object.keys(GROUPS), NEEDS_PINNED_PORT];
  for (const key of keys) runs.set(key, new Promise((resolve) => resolvers.set(key, resolve)));
  const args = (key: string) => (Object.hasOwn(GROUPS, key) ? ["--suite", key] : ["--scenario", key]);
  const run = async (key: string) => resolvers.get(key)?.(await runSuite(args(key)).catch(failed));
  const queue = keys.filter((key) => key !== NEEDS_PINNED_PORT);
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await run(next);
  };
  void Promise.all(Array.from({ length: CONCURRENCY }, () => worker())).then(async () => {
    const release = await acquirePinnedPorts().catch((e: unknown) => {
      resolvers.get(NEEDS_PINNED_PORT)?.(failed(e));
    });
    if (release === undefined) return;
    try {
      await run(NEEDS_PINNED_PORT);
    } finally {
      release();
    }
  });
  return runs;
}

let results: ReturnType<typeof runAll> | undefined;

describe.concurrent("MCP conformance suite, client scenarios, against svc's MCP client", () => {
  it.each([...SINGLE, NEEDS_PINNED_PORT])("%s passes", { timeout: 300_000 }, async (scenario) => {
    results ??= runAll();
    const { code, output } = (await results.get(scenario)) as Run;
    expect(plain(output), plain(output)).toContain("OVERALL: PASSED");
    expect(code).toBe(0);
  });

  const grouped = Object.entries(GROUPS).flatMap(([group, scenarios]) =>
    scenarios.map((scenario) => [scenario, group as Group] as const),
  );
  it.each(grouped)("%s passes (suite %s)", { timeout: 300_000 }, async (scenario, group) => {
    results ??= runAll();
    const text = plain(((await results.get(group)) as Run).output);
    // The suite's line for the scenario: its checks passed, none failed, no warning.
    const line = text.split("\n").find((l) => l.slice(2).startsWith(`${scenario}: `));
    expect(line, text).toMatch(/^✓ \S+: [1-9]\d* passed, 0 failed$/);
  });
});
