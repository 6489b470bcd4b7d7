import { type ChildProcess, spawn } from "node:child_process";
import { stringify } from "yaml";
import type { TempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, type SvcResult, svcEnv } from "./svc.js";

/**
 * The args of a stdio server that never answers, and whose stop takes the grace periods (it ignores stdin's
 * end and SIGTERM): a connect of it that a reload or the gateway's stop ends stays `stopped` for seconds.
 */
export const SILENT = ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"];

/** config.yaml with the fixture server `ok` and `servers` in mcp_servers. */
export const okAndServers = (servers: Record<string, unknown>): string =>
  stringify(
    cliConfig(
      {},
      { mcp_servers: { ok: { command: process.execPath, args: [STDIO_FIXTURE, "legacy"] }, ...servers } },
    ),
  );

/** `svc mcp reload --wait 30` as a process of its own, which the test can pause; pushed on `commands`. */
export function reloadProcess(
  dir: TempHome,
  commands: ChildProcess[],
): { child: ChildProcess; result: Promise<SvcResult> } {
  const child = spawn(process.execPath, [...CLI_NODE_ARGS, MAIN, "mcp", "reload", "--wait", "30"], {
    env: svcEnv(dir, {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  commands.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const result = new Promise<SvcResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, result };
}

/** Resumes (SIGCONT) and kills (SIGKILL) each of `commands` still running, emptying it (afterEach). */
export function killPaused(commands: ChildProcess[]): void {
  for (const child of commands.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    signalProcess(child.pid ?? 0, "SIGCONT");
    child.kill("SIGKILL");
  }
}
