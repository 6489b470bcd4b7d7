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

/** Scenarios run one process each, CONCURRENCY at a time. */
const SINGLE = [
  "initialize",
  "tools_call",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "sse-retry",
  "elicitation-sep1034-client-defaults",
] as const;

/**
 * The suite's `auth` scenarios, run by one process of the suite (`--suite auth`, all at once): starting the
 * suite costs about a second of CPU, more than most scenarios' own work. One of them (`auth/basic-cimd`)
 * presents its client metadata document only on a pinned callback port, so the run holds the ports' lock
 * (test/helpers/pinnedPortsLock.ts) and comes after the single ones, which then have the cores to themselves.
 */
const AUTH_SUITE = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
] as const;

/** Single scenarios run this many at a time: each one spawns the suite, the driver and svc's CLI. */
const CONCURRENCY = 4;

interface Run {
  readonly code: number | null;
  readonly output: string;
}

function runSuite(selection: readonly string[]): Promise<Run> {
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

/** Runs the single scenarios, CONCURRENCY at a time, then the auth suite under the ports' lock; once. */
function runAll(): { single: Map<string, Promise<Run>>; auth: Promise<Run> } {
  const failed = (e: unknown): Run => ({ code: null, output: String(e) });
  const single = new Map<string, Promise<Run>>();
  const queue = [...SINGLE];
  const resolvers = new Map<string, (r: Run) => void>();
  for (const scenario of SINGLE)
    single.set(scenario, new Promise((resolve) => resolvers.set(scenario, resolve)));
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift())
      resolvers.get(next)?.(await runSuite(["--scenario", next]).catch(failed));
  };
  const auth = Promise.all(Array.from({ length: CONCURRENCY }, () => worker())).then(async () => {
    const release = await acquirePinnedPorts();
    try {
      return await runSuite(["--suite", "auth"]);
    } finally {
      release();
    }
  });
  return { single, auth: auth.catch(failed) };
}

let results: ReturnType<typeof runAll> | undefined;

describe.concurrent("MCP conformance suite, client scenarios, against svc's MCP client", () => {
  it.each(SINGLE)("%s passes", { timeout: 300_000 }, async (scenario) => {
    results ??= runAll();
    const result = results.single.get(scenario);
    if (result === undefined) throw new Error(`no run for ${scenario}`);
    const { code, output } = await result;
    expect(plain(output), plain(output)).toContain("OVERALL: PASSED");
    expect(code).toBe(0);
  });

  it.each(AUTH_SUITE)("%s passes", { timeout: 300_000 }, async (scenario) => {
    results ??= runAll();
    const text = plain((await results.auth).output);
    // The suite's line for the scenario: its checks passed, none failed, no warning.
    const line = text.split("\n").find((l) => l.slice(2).startsWith(`${scenario}: `));
    expect(line, text).toMatch(/^✓ \S+: [1-9]\d* passed, 0 failed$/);
  });
});
