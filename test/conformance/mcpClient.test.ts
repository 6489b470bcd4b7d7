import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
const PRELOAD = join(import.meta.dirname, "globSyncPreload.mjs");
const DRIVER = join(import.meta.dirname, "svcClient.mjs");
const TSX_LOADER = join(ROOT, "node_modules/tsx/dist/loader.mjs");

const SCENARIOS = [
  "initialize",
  "tools_call",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/pre-registration",
  "auth/scope-step-up",
  "sse-retry",
  "elicitation-sep1034-client-defaults",
  "auth/basic-cimd",
] as const;

/** Scenarios run this many at a time: each one spawns the suite, the driver and svc's CLI. */
const CONCURRENCY = 4;

function runScenario(scenario: string): Promise<{ code: number | null; output: string }> {
  // The suite writes its results/ directory into its working directory: a temporary one.
  const cwd = mkdtempSync(join(tmpdir(), "svc-conformance-results-"));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        PRELOAD,
        SUITE,
        "client",
        "--command",
        // The driver runs svc's CLI in its own process: with the source, through the same loader (by path:
        // the driver's working directory is the temporary one).
        [process.execPath, ...CLI_NODE_ARGS.map((arg) => (arg === "tsx" ? TSX_LOADER : arg)), DRIVER].join(
          " ",
        ),
        "--scenario",
        scenario,
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

/**
 * The one scenario whose login needs a pinned callback port free (a client metadata document is presented
 * only on one): it runs alone, after the others, holding the ports' lock (test/helpers/pinnedPortsLock.ts).
 */
const NEEDS_PINNED_PORT = "auth/basic-cimd";

/** Runs every scenario, CONCURRENCY at a time, once; each test awaits its own result. */
function runAll(): Map<string, Promise<{ code: number | null; output: string }>> {
  const results = new Map<string, Promise<{ code: number | null; output: string }>>();
  const queue = SCENARIOS.filter((scenario) => scenario !== NEEDS_PINNED_PORT);
  const resolvers = new Map<string, (r: { code: number | null; output: string }) => void>();
  for (const scenario of SCENARIOS)
    results.set(scenario, new Promise((resolve) => resolvers.set(scenario, resolve)));
  const failed = (e: unknown) => ({ code: null, output: String(e) });
  const run = async (scenario: string) =>
    resolvers.get(scenario)?.(await runScenario(scenario).catch(failed));
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
  return results;
}

let results: ReturnType<typeof runAll> | undefined;

describe.concurrent("MCP conformance suite, client scenarios, against svc's MCP client", () => {
  it.each(SCENARIOS)("%s passes", { timeout: 300_000 }, async (scenario) => {
    results ??= runAll();
    const result = results.get(scenario);
    if (result === undefined) throw new Error(`no run for ${scenario}`);
    const { code, output } = await result;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips terminal colours from the report
    const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
    expect(plain, plain).toContain("OVERALL: PASSED");
    expect(code).toBe(0);
  });
});
